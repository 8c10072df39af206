@_spi(Backend) import ServerAPIKit
import Synchronization

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

extension FileCache {
    /// What reading an entry file found.
    enum ReadResult {
        /// A valid entry of the key: the entry, the file's size and inode, and its identity if it
        /// may be trusted without hashing its body next time.
        case hit(CacheEntry, size: Int64, inode: UInt64, verified: FileIdentity?)
        /// No file.
        case missing
        /// A file that is not a valid entry (truncated, corrupted, foreign, another version).
        case invalid(inode: UInt64)
        /// A valid entry of another key whose name collides.
        case otherKey
        /// A file that cannot be read now (permissions, I/O error, not a regular file): left alone.
        case unreadable
    }

    private struct KeyMismatch: Error {}

    // MARK: Reading

    /// Reads and checks the entry file at `path`; on a hit, refreshes its modification time
    /// when it is older than `touchInterval`.
    /// - Parameters:
    ///   - trusted: The identity of a version of the file whose body was checked already: if the
    ///     file still has it, its body is not hashed again.
    ///   - trustDelay: How old (wall clock) a file's change time must be for it to be trusted later.
    ///   - parseURL: Makes the entry's URL from its text.
    static func read(
        path: String, key: CacheKey, touchingAt date: Date?, trusted: FileIdentity? = nil, trustDelay: TimeInterval = 1,
        parseURL: (String) -> URL? = { URL(string: $0) }
    ) -> ReadResult {
        let file: SystemFile
        do {
            file = try SystemFile.openForReading(path)
        } catch {
            return error.isMissing ? .missing : .unreadable
        }
        defer { file.close() }
        guard let status = try? file.status(), status.isRegularFile else { return .unreadable }
        let size = Int(clamping: status.size)
        let identity = status.identity
        let checksBody = identity != trusted
        do {
            let entry =
                try size <= smallFileLimit
                ? readSmall(file, size: size, key: key, checksBody: checksBody, parseURL: parseURL)
                : readLarge(file, size: size, key: key, checksBody: checksBody, parseURL: parseURL)
            var verified: FileIdentity? = Date().timeIntervalSince(status.changed) >= trustDelay ? identity : nil
            if let date, abs(date.timeIntervalSince(status.modified)) >= touchInterval {
                file.touch(date)
                // Touching changed the change time: check the body again next time.
                verified = nil
            }
            return .hit(entry, size: status.size, inode: status.inode, verified: verified)
        } catch is CacheFileFormat.Invalid {
            return .invalid(inode: status.inode)
        } catch is KeyMismatch {
            return .otherKey
        } catch {
            return .unreadable
        }
    }

    /// Reads a small file in one call and copies its body out.
    private static func readSmall(
        _ file: SystemFile, size: Int, key: CacheKey, checksBody: Bool, parseURL: (String) -> URL?
    ) throws -> CacheEntry {
        let bytes = try [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: 0)
        }
        // Shorter than fstat said: the file was truncated in place while we read it.
        guard bytes.count == size else { throw CacheFileFormat.Invalid(reason: "truncated while reading") }
        return try bytes.withUnsafeBytes { raw in
            let header = try CacheFileFormat.decodeHeader(raw)
            guard header.fileSize == size else { throw CacheFileFormat.Invalid(reason: "length mismatch") }
            let metadataEnd = CacheFileFormat.headerSize + header.metadataLength
            guard
                let metadata = try CacheFileFormat.decodeMetadata(
                    UnsafeRawBufferPointer(rebasing: raw[CacheFileFormat.headerSize..<metadataEnd]), header: header,
                    key: key)
            else { throw KeyMismatch() }
            let body = UnsafeRawBufferPointer(rebasing: raw[metadataEnd..<size])
            if checksBody { try CacheFileFormat.checkBody(body, header: header) }
            return try makeEntry(header: header, metadata: metadata, body: Data(body), parseURL: parseURL)
        }
    }

    /// Reads the header and metadata, then the body straight into a buffer of its own.
    private static func readLarge(
        _ file: SystemFile, size: Int, key: CacheKey, checksBody: Bool, parseURL: (String) -> URL?
    ) throws -> CacheEntry {
        let prefixLength = min(size, 4096)
        let prefix = try [UInt8](unsafeUninitializedCapacity: prefixLength) { buffer, count in
            count = try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: 0)
        }
        let header = try prefix.withUnsafeBytes { try CacheFileFormat.decodeHeader($0) }
        guard header.fileSize == size else { throw CacheFileFormat.Invalid(reason: "length mismatch") }
        let metadataEnd = CacheFileFormat.headerSize + header.metadataLength
        let metadataBytes: [UInt8]
        if metadataEnd <= prefix.count {
            metadataBytes = Array(prefix[CacheFileFormat.headerSize..<metadataEnd])
        } else {
            metadataBytes = try [UInt8](unsafeUninitializedCapacity: header.metadataLength) { buffer, count in
                count = try file.read(
                    into: UnsafeMutableRawBufferPointer(buffer), at: Int64(CacheFileFormat.headerSize))
            }
        }
        let decoded = try metadataBytes.withUnsafeBytes {
            try CacheFileFormat.decodeMetadata($0, header: header, key: key)
        }
        guard let metadata = decoded else { throw KeyMismatch() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, header.bodyLength), alignment: 16)
        let body: Data
        do {
            let read = try file.read(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<header.bodyLength]), at: Int64(metadataEnd))
            guard read == header.bodyLength else { throw CacheFileFormat.Invalid(reason: "truncated while reading") }
            if checksBody {
                try CacheFileFormat.checkBody(UnsafeRawBufferPointer(rebasing: buffer[0..<read]), header: header)
            }
            guard let base = buffer.baseAddress else { throw CacheFileFormat.Invalid(reason: "no buffer") }
            // The body keeps the buffer it was read into: no copy of a large body.
            body = Data(bytesNoCopy: base, count: read, deallocator: .custom { pointer, _ in pointer.deallocate() })
        } catch {
            buffer.deallocate()
            throw error
        }
        return try makeEntry(header: header, metadata: metadata, body: body, parseURL: parseURL)
    }

    private static func makeEntry(
        header: CacheFileFormat.Header, metadata: CacheFileFormat.Metadata, body: Data, parseURL: (String) -> URL?
    ) throws(CacheFileFormat.Invalid) -> CacheEntry {
        guard let url = parseURL(metadata.url) else { throw CacheFileFormat.Invalid(reason: "bad URL") }
        return CacheEntry(
            status: metadata.status, headers: metadata.headers, body: body, url: url, storedAt: header.storedAt,
            expiresAt: header.expiresAt, initialAge: metadata.initialAge, variant: metadata.variant,
            variantGroup: metadata.variantGroup)
    }

    /// The header of the entry file at `path` (`nil` header: not a valid entry) and its inode;
    /// `nil` when the file cannot be read.
    static func readHeader(path: String) -> (header: CacheFileFormat.Header?, inode: UInt64)? {
        guard let file = try? SystemFile.openForReading(path) else { return nil }
        defer { file.close() }
        guard let status = try? file.status(), status.isRegularFile else { return nil }
        var bytes = [UInt8](repeating: 0, count: CacheFileFormat.headerSize)
        guard let read = try? bytes.withUnsafeMutableBytes({ try file.read(into: $0, at: 0) }) else { return nil }
        let header = bytes.withUnsafeBytes { raw in
            read == CacheFileFormat.headerSize ? try? CacheFileFormat.decodeHeader(raw) : nil
        }
        guard let header, header.fileSize == Int(clamping: status.size) else { return (nil, status.inode) }
        return (header, status.inode)
    }

    /// Removes the file at `path` only if it is still the file that was read (same inode): a
    /// valid entry another writer renamed over it in the meantime is kept.
    static func removeIfUnchanged(_ path: String, inode: UInt64) {
        guard let status = try? SystemFile.status(atPath: path), status.inode == inode else { return }
        try? SystemFile.remove(path)
    }

    // MARK: Writing

    /// Writes the file next to its destination under a temporary name, flushes it, and renames it into place.
    func writeAtomically(prefix: [UInt8], body: Data, to path: String, modified: Date) throws(ServerAPIError) {
        let temporary =
            directoryPath + "/" + Self.temporaryPrefix + "\(getpid())-"
            + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let file = try createTemporary(temporary)
        var failure: (any Error)?
        do {
            try prefix.withUnsafeBytes { try file.write($0) }
            if let midWriteHook {
                let half = body.startIndex + body.count / 2
                try body[..<half].withUnsafeBytes { try file.write($0) }
                midWriteHook()
                try body[half...].withUnsafeBytes { try file.write($0) }
            } else {
                try body.withUnsafeBytes { try file.write($0) }
            }
            file.touch(modified)
            if configuration.synchronizesWrites { try file.synchronize() }
        } catch {
            failure = error
        }
        file.close()
        if failure == nil {
            do { try SystemFile.rename(temporary, to: path) } catch { failure = error }
        }
        if let failure {
            try? SystemFile.remove(temporary)
            throw ServerAPIError(
                .fileSystem, "cannot write a cache entry in \(directoryPath): \(failure)", underlying: failure)
        }
    }

    /// Creates a temporary file, creating the directory again (once) if it was removed meanwhile.
    private func createTemporary(_ path: String) throws(ServerAPIError) -> SystemFile {
        var failure: SystemCallError
        do {
            return try SystemFile.createExclusive(path)
        } catch {
            failure = error
        }
        if failure.isMissing {
            index.withLock { $0.directoryExists = false }
            try ensureDirectory()
            do {
                return try SystemFile.createExclusive(path)
            } catch {
                failure = error
            }
        }
        throw ServerAPIError(
            .fileSystem, "cannot write a cache entry in \(directoryPath): \(failure)", underlying: failure)
    }

    /// Creates the directory (mode 0700) and its parents unless it exists.
    /// - Throws: `ServerAPIError` of kind `fileSystem` when it cannot be created or is not a directory.
    func ensureDirectory() throws(ServerAPIError) {
        if index.withLock({ $0.directoryExists }) { return }
        do {
            do {
                if try SystemFile.isDirectory(directoryPath) {
                    index.withLock { $0.directoryExists = true }
                    return
                }
                throw ServerAPIError(.fileSystem, "the cache directory \(directoryPath) exists and is not a directory")
            } catch let error as SystemCallError where error.isMissing {
                let parent = directory.deletingLastPathComponent()
                try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
                try SystemFile.makeDirectory(directoryPath, mode: 0o700)
                index.withLock { $0.directoryExists = true }
            }
        } catch let error as ServerAPIError {
            throw error
        } catch {
            throw ServerAPIError(
                .fileSystem, "cannot create the cache directory \(directoryPath): \(error)", underlying: error)
        }
    }

    // MARK: The directory

    /// Lists the directory once, recording the size and modification time of every entry file
    /// and removing abandoned temporary files.
    func loadIndexIfNeeded() {
        if index.withLock({ $0.isLoaded }) { return }
        var found: [(String, FileCacheIndex.Record)] = []
        let names = (try? SystemFile.contentsOfDirectory(directoryPath)) ?? []
        for name in names {
            if Self.isEntryName(name) {
                guard let status = try? SystemFile.status(atPath: path(of: name)), status.isRegularFile else {
                    continue
                }
                found.append((name, FileCacheIndex.Record(size: status.size, lastUsed: status.modified)))
            } else if isAbandonedTemporary(name) {
                try? SystemFile.remove(path(of: name))
            }
        }
        let exists = !names.isEmpty || (try? SystemFile.isDirectory(directoryPath)) == true
        index.withLock { index in
            guard !index.isLoaded else { return }
            // What this instance did while the directory was listed is newer: keep it.
            for (name, record) in found where index.records[name] == nil {
                index.record(name, size: record.size, lastUsed: record.lastUsed)
            }
            index.isLoaded = true
            if exists { index.directoryExists = true }
        }
    }

    /// The names in the directory; a missing directory is empty.
    func listDirectory() throws(ServerAPIError) -> [String] {
        do {
            return try SystemFile.contentsOfDirectory(directoryPath)
        } catch  where error.isMissing {
            return []
        } catch {
            throw ServerAPIError(.fileSystem, "cannot list the cache directory: \(error)", underlying: error)
        }
    }

    /// Whether a name is a temporary file old enough to be a crashed writer's left-over
    /// (by its change time, which the kernel sets, on the wall clock).
    func isAbandonedTemporary(_ name: String) -> Bool {
        guard name.hasPrefix(Self.temporaryPrefix), let status = try? SystemFile.status(atPath: path(of: name)) else {
            return false
        }
        return Date().timeIntervalSince(status.changed) > Self.abandonedTemporaryAge
    }
}
