#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call: which, on what path, and `errno`.
struct SystemCallError: Error, CustomStringConvertible {
    /// What was being done, such as "open".
    var operation: String
    /// The path it was done on.
    var path: String
    /// The `errno` value.
    var code: Int32

    var description: String { "\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))" }

    /// Whether the file or a directory on its path does not exist.
    var isMissing: Bool { code == ENOENT }
}

/// An open file descriptor with the few calls the file cache needs; close it with `close()`.
///
/// Plain POSIX rather than `FileHandle`: the cache needs `O_EXCL`, an exact mode, `fsync`,
/// `futimens` and positioned reads without extra copies.
struct SystemFile {
    /// The descriptor.
    let descriptor: Int32
    /// The path it was opened with (for messages).
    let path: String

    /// What `fstat` says about an open file.
    struct Status {
        var size: Int64
        var isRegularFile: Bool
        var inode: UInt64
        var modified: Date
        /// When the file's data or metadata last changed: set by the kernel, never by `touch`.
        var changed: Date

        /// The identity of this version of the file.
        var identity: FileIdentity { FileIdentity(inode: inode, size: size, modified: modified, changed: changed) }
    }

    /// Opens an existing file for reading; a symbolic link is refused (`ELOOP`), never followed.
    static func openForReading(_ path: String) throws(SystemCallError) -> SystemFile {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw SystemCallError(operation: "open", path: path, code: errno) }
        return SystemFile(descriptor: descriptor, path: path)
    }

    /// Creates a new file that must not exist yet, readable and writable by its owner only.
    static func createExclusive(_ path: String, mode: mode_t = 0o600) throws(SystemCallError) -> SystemFile {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SystemCallError(operation: "create", path: path, code: errno) }
        // The umask may have taken bits away; it cannot have added any, but say exactly what we mean.
        _ = fchmod(descriptor, mode)
        return SystemFile(descriptor: descriptor, path: path)
    }

    /// Closes the descriptor.
    func close() {
        #if canImport(Glibc)
            _ = Glibc.close(descriptor)
        #elseif canImport(Musl)
            _ = Musl.close(descriptor)
        #elseif canImport(Darwin)
            _ = Darwin.close(descriptor)
        #endif
    }

    /// Size, type, inode and modification time.
    func status() throws(SystemCallError) -> Status {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemCallError(operation: "stat", path: path, code: errno) }
        return Status(
            size: Int64(info.st_size), isRegularFile: (info.st_mode & S_IFMT) == S_IFREG, inode: UInt64(info.st_ino),
            modified: Self.times(info).modified, changed: Self.times(info).changed)
    }

    /// Reads up to `buffer.count` bytes at `offset`, stopping early only at the end of the file.
    /// - Returns: The number of bytes read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, base + done, buffer.count - done, off_t(offset) + off_t(done))
            if count > 0 {
                done += count
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw SystemCallError(operation: "read", path: path, code: errno)
            }
        }
        return done
    }

    /// Writes every byte of `buffer`.
    func write(_ buffer: UnsafeRawBufferPointer) throws(SystemCallError) {
        guard let base = buffer.baseAddress else { return }
        var done = 0
        while done < buffer.count {
            #if canImport(Glibc)
                let count = Glibc.write(descriptor, base + done, buffer.count - done)
            #elseif canImport(Musl)
                let count = Musl.write(descriptor, base + done, buffer.count - done)
            #elseif canImport(Darwin)
                let count = Darwin.write(descriptor, base + done, buffer.count - done)
            #endif
            if count > 0 {
                done += count
            } else if count < 0 && errno != EINTR {
                throw SystemCallError(operation: "write", path: path, code: errno)
            }
        }
    }

    /// Flushes the file's data to the storage device.
    func synchronize() throws(SystemCallError) {
        guard fsync(descriptor) == 0 else { throw SystemCallError(operation: "fsync", path: path, code: errno) }
    }

    /// Sets the access and modification times; failures are ignored (the time only orders eviction).
    func touch(_ date: Date) {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let nanoseconds = Int((date.timeIntervalSince1970 - seconds) * 1e9)
        let time = timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds)
        let times = [time, time]
        _ = times.withUnsafeBufferPointer { futimens(descriptor, $0.baseAddress) }
    }

    // MARK: Paths

    /// Renames `source` to `destination` atomically, replacing it.
    static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        #if canImport(Glibc)
            let result = Glibc.rename(source, destination)
        #elseif canImport(Musl)
            let result = Musl.rename(source, destination)
        #elseif canImport(Darwin)
            let result = Darwin.rename(source, destination)
        #endif
        guard result == 0 else { throw SystemCallError(operation: "rename", path: destination, code: errno) }
    }

    /// Removes a file; a file that is already gone is not an error.
    static func remove(_ path: String) throws(SystemCallError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw SystemCallError(operation: "remove", path: path, code: errno)
        }
    }

    /// Size, type, inode and modification time of a path (not following a final symbolic link).
    static func status(atPath path: String) throws(SystemCallError) -> Status {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw SystemCallError(operation: "stat", path: path, code: errno) }
        return Status(
            size: Int64(info.st_size), isRegularFile: (info.st_mode & S_IFMT) == S_IFREG, inode: UInt64(info.st_ino),
            modified: times(info).modified, changed: times(info).changed)
    }

    /// Whether `path` is a directory (following symbolic links).
    static func isDirectory(_ path: String) throws(SystemCallError) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemCallError(operation: "stat", path: path, code: errno) }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates one directory with `mode`; an existing directory is not an error.
    static func makeDirectory(_ path: String, mode: mode_t) throws(SystemCallError) {
        if mkdir(path, mode) == 0 {
            _ = chmod(path, mode)
            return
        }
        let code = errno
        if code == EEXIST, (try? isDirectory(path)) == true { return }
        throw SystemCallError(operation: "create directory", path: path, code: code)
    }

    /// The names in a directory, without `.` and `..`.
    static func contentsOfDirectory(_ path: String) throws(SystemCallError) -> [String] {
        guard let directory = opendir(path) else {
            throw SystemCallError(operation: "list", path: path, code: errno)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    private static func times(_ info: stat) -> (modified: Date, changed: Date) {
        #if canImport(Darwin)
            let (modified, changed) = (info.st_mtimespec, info.st_ctimespec)
        #else
            let (modified, changed) = (info.st_mtim, info.st_ctim)
        #endif
        func date(_ time: timespec) -> Date {
            Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9)
        }
        return (date(modified), date(changed))
    }
}
