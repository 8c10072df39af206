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

/// Writes a download to disk as it arrives, with the same resume, error-body and 416
/// semantics for every transport.
///
/// The body goes to `DownloadTarget.partialURL` and is moved onto `destination` only when it
/// is complete, so the destination only ever appears whole. An error response (404, 500, …)
/// is kept in memory and never touches any file; an interrupted download leaves its partial
/// file and validator (ETag or Last-Modified) in place for a later resume.
///
/// A transport uses one writer per transfer:
/// ```swift
/// let writer = DownloadFileWriter(target: target, requestID: request.id, url: request.url)
/// var request = request
/// _ = writer.prepare(&request)                  // adds Range / If-Range when resuming
/// // for each response head:
/// switch try writer.receiveHead(status: status, headers: headers) {
/// case .file, .memory: break                    // feed the body to write(_:)
/// case .alreadyComplete: break                  // ignore the body; finish() completes the file
/// case .restart: _ = writer.prepare(&request)   // discard this response, send `request` again
/// }
/// try writer.write(bytes)                       // as bytes arrive
/// let body = try writer.finish()                // at the end of the body
/// // on any error or cancellation: writer.abandon()
/// ```
/// - Important: Not thread-safe: one transfer owns one writer and calls it from one thread at a time.
package final class DownloadFileWriter {
    /// Where the body of the current response goes.
    package enum Disposition: Sendable, Hashable {
        /// A 2xx body: written to the partial file (appended for a matching 206, from zero for a 200).
        case file
        /// A non-2xx body: kept in memory (bounded), the files untouched.
        case memory
        /// A 416 that says the partial file already is the whole resource: ignore the body, call
        /// `finish()`, and report the response as a 200 (the download is complete).
        case alreadyComplete
        /// The range asked for cannot be used: ignore this response and send the request again
        /// after calling `prepare(_:)`, which now asks for the whole resource.
        case restart
    }

    /// The download target.
    package let target: DownloadTarget
    /// The largest error body kept in memory; bytes past it are dropped.
    package let maxErrorBodySize: Int

    private let requestID: RequestID
    private let url: URL
    private var disposition: Disposition?
    private var descriptor: Int32 = -1
    private var errorBody = Data()
    /// The offset the last `prepare(_:)` asked the server to start at; `nil` when no `Range` was sent.
    private var requestedOffset: Int64?
    private var restarted = false

    /// Bytes of the download now in the partial file (for a resume, including what was there before).
    package private(set) var bytesOnDisk: Int64 = 0
    /// The size of the whole file, when the server said it.
    package private(set) var expectedTotal: Int64?

    /// Creates a writer for one transfer.
    /// - Parameters:
    ///   - target: Where the download goes and whether to resume.
    ///   - requestID: The call's id, for errors.
    ///   - url: The request's URL, for errors.
    ///   - maxErrorBodySize: The most bytes of an error response kept in memory (1 MiB by default).
    package init(target: DownloadTarget, requestID: RequestID, url: URL, maxErrorBodySize: Int = 1 << 20) {
        self.target = target
        self.requestID = requestID
        self.url = url
        self.maxErrorBodySize = maxErrorBodySize
    }

    deinit { closeFile() }

    /// Download progress: bytes on disk out of the expected total.
    package var progress: TransferProgress {
        TransferProgress(direction: .download, completed: bytesOnDisk, total: expectedTotal)
    }

    // MARK: Request

    /// Adds `Range: bytes=N-` (and `If-Range` with the recorded validator) when resuming an
    /// existing partial file; after a `.restart`, removes them so the whole resource is asked for.
    ///
    /// Call it before every send of the request, including the one after `.restart`.
    /// - Parameter request: The request to send; its `Range` and `If-Range` headers are set or removed.
    /// - Returns: The offset the download resumes from (0 when not resuming).
    @discardableResult
    package func prepare(_ request: inout TransportRequest) -> Int64 {
        request.headers.remove(name: "Range")
        request.headers.remove(name: "If-Range")
        requestedOffset = nil
        guard target.resume, !restarted, let size = Self.fileSize(target.partialURL), size > 0 else {
            bytesOnDisk = 0
            return 0
        }
        request.headers.add(name: "Range", value: "bytes=\(size)-")
        if let validator = readValidator() { request.headers.add(name: "If-Range", value: validator) }
        requestedOffset = size
        bytesOnDisk = size
        return size
    }

    // MARK: Response

    /// Decides where the body of a response goes; call it once per response head.
    /// - Parameters:
    ///   - status: The response's status.
    ///   - headers: The response's headers.
    /// - Returns: What to do with the body (see `Disposition`).
    /// - Throws: `fileSystem` when the partial file cannot be opened; `network` when the server
    ///   sends a partial response that was not asked for.
    package func receiveHead(status: Int, headers: HTTPHeaders) throws(ServerAPIError) -> Disposition {
        closeFile()
        errorBody = Data()
        let decision = try decide(status: status, headers: headers)
        disposition = decision
        return decision
    }

    private func decide(status: Int, headers: HTTPHeaders) throws(ServerAPIError) -> Disposition {
        switch status {
        case 206:
            let range = headers["Content-Range"].flatMap(ContentRange.init)
            if let offset = requestedOffset, let range, let start = range.start, start == offset,
                Self.fileSize(target.partialURL) == offset
            {
                try openPartial(truncating: false)
                bytesOnDisk = offset
                expectedTotal = range.total ?? range.end.map { $0 + 1 }
                try recordValidator(headers)
                return .file
            }
            if requestedOffset == nil, let range, range.start == 0 {
                // A 206 for the whole file though no range was asked for: take it as a 200.
                return try startOver(headers: headers, total: range.total)
            }
            return try restart(because: "the server's Content-Range does not continue the partial file")
        case 200..<300:
            return try startOver(headers: headers, total: ResponseSizeRule.decodedLength(of: headers))
        case 416 where requestedOffset != nil:
            let range = headers["Content-Range"].flatMap(ContentRange.init)
            if let total = range?.total, total == requestedOffset, range?.start == nil {
                bytesOnDisk = total
                expectedTotal = total
                return .alreadyComplete
            }
            return try restart(because: "the server cannot serve the rest of the partial file")
        default:
            return .memory
        }
    }

    /// Writes the current response's body bytes where `receiveHead` decided.
    /// - Parameter bytes: The next bytes of the body.
    /// - Throws: `fileSystem` when writing fails (disk full, permissions).
    package func write(_ bytes: UnsafeRawBufferPointer) throws(ServerAPIError) {
        guard !bytes.isEmpty else { return }
        switch disposition {
        case .file:
            try writeToFile(bytes)
        case .memory:
            let room = maxErrorBodySize - errorBody.count
            if room > 0 { errorBody.append(contentsOf: bytes.prefix(room)) }
        case .alreadyComplete, .restart, nil:
            break
        }
    }

    /// Writes the current response's body bytes where `receiveHead` decided.
    /// - Parameter data: The next bytes of the body.
    /// - Throws: `fileSystem` when writing fails (disk full, permissions).
    package func write(_ data: Data) throws(ServerAPIError) {
        var failure: ServerAPIError?
        data.withUnsafeBytes { buffer in
            do throws(ServerAPIError) { try write(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Ends the transfer: for a file, closes it and moves it onto the destination (atomically,
    /// replacing any file there) and removes the validator.
    /// - Returns: `.file(destination, bytes:)` for a 2xx or already complete download, or
    ///   `.data` with the error response's body.
    /// - Throws: `fileSystem` when the file cannot be moved; `network` when the body ended
    ///   before the length the server announced (the partial file is kept for a resume) or no
    ///   response head was received.
    package func finish() throws(ServerAPIError) -> ResponseBody {
        switch disposition {
        case .memory:
            return .data(errorBody)
        case .file, .alreadyComplete:
            closeFile()
            if let expectedTotal, bytesOnDisk != expectedTotal {
                throw ServerAPIError(
                    .network, "the download ended after \(bytesOnDisk) of \(expectedTotal) bytes",
                    requestID: requestID, url: url)
            }
            if rename(target.partialURL.path, target.destination.path) != 0 {
                throw fileError("cannot move the download to \(target.destination.path)")
            }
            removeValidator()
            return .file(target.destination, bytes: bytesOnDisk)
        case .restart, nil:
            throw ServerAPIError(
                .network, "the download ended without a usable response", requestID: requestID, url: url)
        }
    }

    /// Ends a failed or cancelled transfer: closes the partial file and keeps it, with its
    /// validator, for a later resume. The destination is not touched.
    package func abandon() {
        closeFile()
        disposition = nil
        errorBody = Data()
    }

    // MARK: Steps

    private func startOver(headers: HTTPHeaders, total: Int64?) throws(ServerAPIError) -> Disposition {
        try openPartial(truncating: true)
        bytesOnDisk = 0
        expectedTotal = total
        try recordValidator(headers)
        return .file
    }

    private func restart(because reason: String) throws(ServerAPIError) -> Disposition {
        guard !restarted, requestedOffset != nil else {
            throw ServerAPIError(
                .network, "\(reason), and the whole resource was already asked for", requestID: requestID, url: url)
        }
        restarted = true
        try? FileManager.default.removeItem(at: target.partialURL)
        removeValidator()
        bytesOnDisk = 0
        expectedTotal = nil
        return .restart
    }

    private func openPartial(truncating: Bool) throws(ServerAPIError) {
        let path = target.partialURL.path
        let directory = target.partialURL.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.path) {
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw ServerAPIError(
                    .fileSystem, "cannot create the folder \(directory.path) for the download", requestID: requestID,
                    url: url, underlying: error)
            }
        }
        descriptor = try Self.openForWriting(path, truncating: truncating, requestID: requestID, url: url)
    }

    /// Opens a file the download writes, never through a symbolic link: an existing regular file is opened
    /// with `O_NOFOLLOW` (truncated or appended to), a missing one is created with `O_CREAT | O_EXCL` (which
    /// fails on any link, even a dangling one). A link there, planted before or during the call, is the
    /// `fileSystem` error `symbolicLink(at:)`; anything else that is not a regular file is refused too (a
    /// FIFO would block the transfer).
    static func openForWriting(
        _ path: String, truncating: Bool, requestID: RequestID?, url: URL?
    ) throws(ServerAPIError) -> Int32 {
        var status = stat()
        let exists = lstat(path, &status) == 0
        if exists {
            let type = status.st_mode & S_IFMT
            if type == S_IFLNK { throw ServerAPIError.symbolicLink(at: path, requestID: requestID, url: url) }
            guard type == S_IFREG else {
                throw ServerAPIError(
                    .fileSystem, "\(path) is not a regular file: the download cannot be written there",
                    requestID: requestID, url: url)
            }
        }
        let flags =
            O_WRONLY | O_NOFOLLOW | O_CLOEXEC
            | (exists ? (truncating ? O_TRUNC : O_APPEND) : (O_CREAT | O_EXCL | (truncating ? 0 : O_APPEND)))
        let descriptor = open(path, flags, 0o644)
        guard descriptor < 0 else { return descriptor }
        let code = errno
        // ELOOP: a link replaced the file after the check; EEXIST: something appeared where none was.
        if code == ELOOP || code == EEXIST {
            throw ServerAPIError.symbolicLink(at: path, requestID: requestID, url: url)
        }
        throw ServerAPIError(
            .fileSystem, "cannot open \(path) for the download: \(String(cString: strerror(code)))",
            requestID: requestID, url: url, underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
    }

    private func writeToFile(_ bytes: UnsafeRawBufferPointer) throws(ServerAPIError) {
        guard descriptor >= 0, var base = bytes.baseAddress else {
            throw ServerAPIError(.fileSystem, "the download file is not open", requestID: requestID, url: url)
        }
        var remaining = bytes.count
        while remaining > 0 {
            let written = Self.systemWrite(descriptor, base, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw fileError("writing the download to \(target.partialURL.path) failed")
            }
            remaining -= written
            base += written
            bytesOnDisk += Int64(written)
        }
    }

    private static func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.write(descriptor, bytes, count)
        #elseif canImport(Musl)
            Musl.write(descriptor, bytes, count)
        #else
            Darwin.write(descriptor, bytes, count)
        #endif
    }

    private func closeFile() {
        if descriptor >= 0 {
            _ = close(descriptor)
            descriptor = -1
        }
    }

    // MARK: Validator

    /// Records the response's strong ETag, or else its Last-Modified, for a later `If-Range`.
    private func recordValidator(_ headers: HTTPHeaders) throws(ServerAPIError) {
        // If-Range needs a strong validator: a weak ETag (W/"…") cannot be used.
        let etag = headers["ETag"].flatMap { $0.hasPrefix("W/") ? nil : $0 }
        guard let validator = etag ?? headers["Last-Modified"], !validator.isEmpty else {
            removeValidator()
            return
        }
        // Written to a temporary name and renamed, without Data.write's fsync: this runs in the
        // transport's receive path, and an fsync on a busy disk stalls it for a long time.
        let path = target.validatorURL.path
        let temporary = path + ".tmp"
        let file = try Self.openForWriting(temporary, truncating: true, requestID: requestID, url: url)
        let bytes = Array(validator.utf8)
        let written = bytes.withUnsafeBytes { Self.systemWrite(file, $0.baseAddress!, $0.count) }
        let failed = written != bytes.count
        _ = close(file)
        if failed || rename(temporary, path) != 0 {
            let error = fileError("cannot write \(path)")
            _ = unlink(temporary)
            throw error
        }
    }

    private func readValidator() -> String? {
        // Never through a link: a planted one would send another file's first line as `If-Range`.
        let file = open(target.validatorURL.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        _ = close(file)
        guard count > 0 else { return nil }
        let data = Data(buffer[..<count])
        let text = String(HTTPSyntax.trimming(String(decoding: data, as: UTF8.self), \.properties.isWhitespace))
        // A validator with a line break would be a header injection: ignore a damaged file.
        guard !text.isEmpty, !text.contains(where: { $0.isNewline }) else { return nil }
        return text
    }

    private func removeValidator() { try? FileManager.default.removeItem(at: target.validatorURL) }

    // MARK: Helpers

    private func fileError(_ message: String) -> ServerAPIError {
        let code = errno
        let underlying = POSIXErrorCode(rawValue: code).map { POSIXError($0) }
        return ServerAPIError(
            .fileSystem, "\(message): \(String(cString: strerror(code)))", requestID: requestID, url: url,
            underlying: underlying)
    }

    private static func fileSize(_ url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            (attributes[.type] as? FileAttributeType) == .typeRegular
        else { return nil }
        // A `UInt` with FoundationEssentials alone, an `NSNumber` (which casts to one) with Foundation.
        return (attributes[.size] as? UInt).flatMap { Int64(exactly: $0) }
    }
}

/// A parsed `Content-Range` value: `bytes 0-99/1000`, `bytes 0-99/*` or `bytes */1000`.
struct ContentRange: Hashable {
    /// The first byte, or `nil` for `*/total`.
    var start: Int64?
    /// The last byte (inclusive), or `nil` for `*/total`.
    var end: Int64?
    /// The whole length, or `nil` for `/*`.
    var total: Int64?

    init(start: Int64?, end: Int64?, total: Int64?) {
        self.start = start
        self.end = end
        self.total = total
    }

    /// Parses a header value; `nil` when it is not a valid byte range.
    init?(_ value: String) {
        let text = HTTPSyntax.trimmed(value)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = HTTPSyntax.trimmed(text.dropFirst("bytes ".count))
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        if halves[1] == "*" {
            total = nil
        } else {
            guard let total = Int64(halves[1]), total >= 0 else { return nil }
            self.total = total
        }
        if halves[0] == "*" {
            guard total != nil else { return nil }
            return
        }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start >= 0, end >= start
        else { return nil }
        self.start = start
        self.end = end
    }
}
