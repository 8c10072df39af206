import Foundation
import ServerAPIKit

extension HARArchive {
    /// The largest HAR file `init(contentsOf:maximumFileSize:)` and `ReplayingTransport` read unless told
    /// otherwise: 256 MiB (268,435,456 bytes).
    // Decoded, a file takes several times its size in memory (its strings, then a body's bytes as it is replayed);
    // 256 MiB keeps that within what a test machine has, and is far above what a recording for tests holds.
    public static let defaultMaximumFileSize: Int64 = 256 << 20

    /// Reads an archive from a HAR file, and checks every number and encoding in it (`init(data:name:)`).
    ///
    /// A regular file larger than `maximumFileSize` is refused from its size, before any of it is read; from
    /// anything else (a pipe, a device) at most `maximumFileSize` bytes are read.
    /// - Parameters:
    ///   - file: The file.
    ///   - maximumFileSize: The most bytes it may have: `defaultMaximumFileSize` (256 MiB) unless told otherwise.
    /// - Throws: `fileSystem` when it cannot be read or is larger than `maximumFileSize`; `decoding` when it is not
    ///   a HAR file, or a number or an encoding in it is not one a replay can use.
    public init(
        contentsOf file: URL, maximumFileSize: Int64 = HARArchive.defaultMaximumFileSize
    ) throws(ServerAPIError) {
        try self.init(data: Self.read(file, maximumFileSize: maximumFileSize), name: file.lastPathComponent)
    }

    /// The file's bytes, at most `maximumFileSize` of them: read once, into one buffer.
    private static func read(_ file: URL, maximumFileSize: Int64) throws(ServerAPIError) -> Data {
        let limit = max(0, maximumFileSize)
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw fileError("cannot read the HAR file \(file.path)") }
        defer { _ = close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw fileError("cannot read the HAR file \(file.path)") }
        let regular = (info.st_mode & S_IFMT) == S_IFREG
        if regular, Int64(info.st_size) > limit {
            throw ServerAPIError(
                .fileSystem,
                "the HAR file \(file.path) is \(info.st_size) bytes, larger than the limit of \(limit) bytes "
                    + "(maximumFileSize)")
        }
        var data = Data()
        if regular { data.reserveCapacity(Int(info.st_size)) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw fileError("cannot read the HAR file \(file.path)")
            }
            // A file that grew since `fstat`, or one with no size to check first (a pipe, a device), stops here.
            guard Int64(data.count) + Int64(count) <= limit else {
                throw ServerAPIError(
                    .fileSystem,
                    "the HAR file \(file.path) is more than the limit of \(limit) bytes (maximumFileSize)")
            }
            data.append(contentsOf: buffer[..<count])
        }
    }

    /// Reads an archive from HAR JSON, and checks every number and encoding in it (`validate(name:)`).
    /// - Parameters:
    ///   - data: The JSON.
    ///   - name: What to call it in errors.
    /// - Throws: `decoding` when it is not a HAR archive, or when a number or an encoding in it is not one a replay
    ///   can use; the message names the entry (counted from 1) and the field.
    public init(data: Data, name: String = "the HAR archive") throws(ServerAPIError) {
        do {
            self = try JSONDecoder().decode(HARArchive.self, from: data)
        } catch let error as DecodingError {
            throw ServerAPIError(
                .decoding, "\(name) is not a HAR 1.2 archive: \(Self.describe(error))", underlying: error)
        } catch {
            throw ServerAPIError(.decoding, "\(name) is not a HAR 1.2 archive: \(error)", underlying: error)
        }
        try validate(name: name)
    }

    /// What a decoding error says, with where: "entry 3: response.status is 1e+300, not an integer …".
    private static func describe(_ error: DecodingError) -> String {
        let codingPath: [any CodingKey]
        let problem: String
        switch error {
        case .keyNotFound(let key, let context):
            (codingPath, problem) = (context.codingPath + [key], "is missing")
        case .valueNotFound(_, let context):
            (codingPath, problem) = (context.codingPath, "is null")
        case .typeMismatch(_, let context), .dataCorrupted(let context):
            (codingPath, problem) = (context.codingPath, context.debugDescription)
        @unknown default:
            return "\(error)"
        }
        var path = codingPath[...]
        var entry: String?
        if path.count >= 3, path[0].stringValue == "log", path[1].stringValue == "entries",
            let index = path[2].intValue
        {
            entry = "entry \(index + 1)"
            path = path.dropFirst(3)
        }
        let field = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().drop { $0 == "." }
        let place = [entry, field.isEmpty ? nil : String(field)].compactMap { $0 }.joined(separator: ": ")
        if place.isEmpty { return problem }
        return problem.hasPrefix("is ") ? "\(place) \(problem)" : "\(place): \(problem)"
    }

    /// The archive as HAR JSON: indented, keys sorted, so that a re-recorded file diffs well.
    public func encoded() throws(ServerAPIError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(self)
        } catch {
            throw ServerAPIError(.invalidRequest, "the HAR archive cannot be encoded: \(error)", underlying: error)
        }
    }

    /// Writes the archive to a file atomically: to a temporary file in the same folder, then renamed over
    /// `file`, so that a crash leaves the old file or the new one, never half of one. Creates the folder.
    /// - Parameters:
    ///   - file: The file.
    ///   - ownerOnly: Whether only the owner may read it (mode 0600): for an archive that keeps credentials
    ///     (`HARRedaction.redactsCredentials` is `false`). Otherwise 0644, less the process's umask.
    /// - Throws: `fileSystem` when it cannot be written.
    public func write(to file: URL, ownerOnly: Bool = false) throws(ServerAPIError) {
        let data = try encoded()
        do {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw ServerAPIError(.fileSystem, "cannot write the HAR file \(file.path)", underlying: error)
        }
        // The temporary file is created with its final mode (never readable by others, even for a moment)
        // and never through a link.
        let temporary = file.deletingLastPathComponent()
            .appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString).tmp").path
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        let descriptor = open(temporary, flags, ownerOnly ? 0o600 : 0o644)
        guard descriptor >= 0 else { throw Self.fileError("cannot write the HAR file \(file.path)") }
        var failed = false
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failed = true
                    return
                }
                offset += written
            }
        }
        if failed || fsync(descriptor) != 0 {
            let error = Self.fileError("cannot write the HAR file \(file.path)")
            _ = close(descriptor)
            _ = unlink(temporary)
            throw error
        }
        _ = close(descriptor)
        guard rename(temporary, file.path) == 0 else {
            let error = Self.fileError("cannot write the HAR file \(file.path)")
            _ = unlink(temporary)
            throw error
        }
    }

    private static func fileError(_ message: String) -> ServerAPIError {
        let code = errno
        return ServerAPIError(
            .fileSystem, "\(message): \(String(cString: strerror(code)))",
            underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
    }
}
