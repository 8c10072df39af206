#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes to a file descriptor, as `FileHandle.write` did (FoundationEssentials has no `FileHandle`).
enum Descriptor {
    static let standardOutput: Int32 = 1
    static let standardError: Int32 = 2

    /// Writes all of `bytes`, again after a signal; stops at the first failure.
    static func write<Bytes: Collection<UInt8>>(_ bytes: Bytes, to descriptor: Int32) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { write($0, to: descriptor) }
        if done == nil { Array(bytes).withUnsafeBufferPointer { write($0, to: descriptor) } }
    }

    private static func write(_ buffer: UnsafeBufferPointer<UInt8>, to descriptor: Int32) {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let written = system(descriptor, base + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    /// The C library's `write(2)`, under a name no `write` in scope hides.
    static func system(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.write(descriptor, bytes, count)
        #else
            Darwin.write(descriptor, bytes, count)
        #endif
    }

    /// The size and modification time of the file at `path`, not following a symbolic link (as
    /// `FileManager.attributesOfItem` reads them); nil when there is none.
    static func status(atPath path: String) -> (size: Int64, modified: Date, isRegular: Bool)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        #if canImport(Glibc)
            let time = info.st_mtim
        #else
            let time = info.st_mtimespec
        #endif
        let modified = Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000)
        return (Int64(info.st_size), modified, (info.st_mode & S_IFMT) == S_IFREG)
    }
}
