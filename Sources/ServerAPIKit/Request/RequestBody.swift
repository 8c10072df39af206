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

/// The body of a call, as the caller describes it: `.json(_:)`, `.form(_:)`, `.multipart(_:)`, `.file(_:)`,
/// `.stream(_:)` (a `RequestBodyStream`), and so on. This is the body type a user writes.
///
/// The manager resolves it into the `BodySource` a transport sends (`TransportRequest.body`); only a
/// transport or a plugin that reads the bytes sees that one.
///
/// JSON bodies are encoded when the body is created so that the description stays a
/// `Hashable` value; an encoding failure is kept and reported as an `invalidRequest`
/// error when the call is sent, never as a crash.
public struct RequestBody: Sendable, Hashable {
    enum Storage: Sendable, Hashable {
        case none
        case data(Data, contentType: String?)
        case form([FormField])
        case multipart(MultipartForm)
        case file(URL, contentType: String?)
        case stream(RequestBodyStream, contentType: String?)
        case invalid(String)
    }

    let storage: Storage

    init(_ storage: Storage) { self.storage = storage }

    /// No body.
    public static let none = RequestBody(.none)

    /// Raw bytes with an optional content type.
    public static func data(_ data: Data, contentType: String? = nil) -> RequestBody {
        RequestBody(.data(data, contentType: contentType))
    }

    /// A UTF-8 string with a content type (default `text/plain; charset=utf-8`).
    public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> RequestBody {
        RequestBody(.data(Data(text.utf8), contentType: contentType))
    }

    /// A JSON body encoded from a value.
    /// - Parameters:
    ///   - value: The value to encode.
    ///   - encoder: The encoder to use; keys are sorted by default so the bytes are stable.
    public static func json(_ value: some Encodable, encoder: JSONEncoder = RequestBody.defaultJSONEncoder)
        -> RequestBody
    {
        do {
            return RequestBody(.data(try encoder.encode(value), contentType: "application/json"))
        } catch {
            return RequestBody(.invalid("the JSON body cannot be encoded: \(error)"))
        }
    }

    /// An `application/x-www-form-urlencoded` body from ordered fields.
    public static func form(_ fields: [(String, String)]) -> RequestBody {
        RequestBody(.form(fields.map { FormField(name: $0.0, value: $0.1) }))
    }

    /// An `application/x-www-form-urlencoded` body from a dictionary; fields are sorted by name.
    public static func form(_ fields: [String: String]) -> RequestBody {
        form(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// A `multipart/form-data` body; file parts are streamed from disk by the transport.
    public static func multipart(_ form: MultipartForm) -> RequestBody { RequestBody(.multipart(form)) }

    /// The contents of a file, streamed from disk by the transport.
    public static func file(_ url: URL, contentType: String? = nil) -> RequestBody {
        RequestBody(.file(url, contentType: contentType))
    }

    /// Bytes from an `AsyncSequence`, sent as they are produced (see `RequestBodyStream`).
    /// - Parameters:
    ///   - body: The body's chunks and length, if known.
    ///   - contentType: The content type; `application/octet-stream` when `nil`.
    public static func stream(_ body: RequestBodyStream, contentType: String? = nil) -> RequestBody {
        RequestBody(.stream(body, contentType: contentType))
    }

    /// Whether there is no body.
    public var isEmpty: Bool { if case .none = storage { true } else { false } }

    /// The encoder `json(_:)` uses by default: sorted keys, ISO 8601 dates.
    public static var defaultJSONEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// Resolves the body into what a transport sends, with the content type it implies.
    func resolve() throws(ServerAPIError) -> (body: BodySource, contentType: String?) {
        switch storage {
        case .none:
            return (.empty, nil)
        case .data(let data, let contentType):
            return (.data(data), contentType)
        case .form(let fields):
            let encoded = fields.map {
                "\(PercentEncoding.formEncode($0.name))=\(PercentEncoding.formEncode($0.value))"
            }
            .joined(separator: "&")
            return (.data(Data(encoded.utf8)), "application/x-www-form-urlencoded")
        case .multipart(let form):
            return (.segments(try form.encodedSegments()), form.contentType)
        case .file(let url, let contentType):
            guard url.isFileURL else {
                throw ServerAPIError(.invalidRequest, "a file body needs a file URL, not \(url)")
            }
            return (.file(url), contentType ?? "application/octet-stream")
        case .stream(let body, let contentType):
            return (.stream(body), contentType ?? "application/octet-stream")
        case .invalid(let message):
            throw ServerAPIError(.invalidRequest, message)
        }
    }
}

/// One `name=value` field of a form body.
package struct FormField: Sendable, Hashable {
    /// The field name.
    package var name: String
    /// The field value.
    package var value: String

    /// Creates a form field, percent-encoded when the form is sent.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

// MARK: - What the transport sends

/// A piece of a `BodySource`: bytes in memory, or a whole file read from disk as it is sent
/// (a multipart body with file parts is a list of them).
public enum BodySegment: Sendable, Hashable {
    /// Bytes in memory.
    case data(Data)
    /// A file's whole contents, streamed from disk.
    case file(URL)
}

/// What a transport sends as the request body: the resolved form of the caller's `RequestBody`
/// (`TransportRequest.body`).
///
/// A user writes a `RequestBody`; a transport reads this: `segments` in order (bytes, and files streamed
/// from disk), or a `.stream` body's `RequestBodyStream` through `makeChunks()`. Plugins see it too
/// (`SigningPlugin.Request.body`).
public enum BodySource: Sendable, Hashable {
    /// No body.
    case empty
    /// Bytes in memory.
    case data(Data)
    /// A file, streamed from disk and never read whole.
    case file(URL)
    /// Segments sent one after the other (a multipart body with file parts).
    case segments([BodySegment])
    /// Bytes from an `AsyncSequence`, read once as they are sent.
    case stream(RequestBodyStream)

    /// The streamed body, for `.stream`.
    public var streamedBody: RequestBodyStream? { if case .stream(let body) = self { body } else { nil } }

    /// The segments this body is made of, in order.
    public var segments: [BodySegment] {
        switch self {
        case .empty: []
        case .data(let data): [.data(data)]
        case .file(let url): [.file(url)]
        case .segments(let segments): segments
        case .stream: []
        }
    }

    /// Whether the body is fully in memory (no file or sequence to stream).
    package var isInMemory: Bool {
        streamedBody == nil && !segments.contains { if case .file = $0 { true } else { false } }
    }

    /// The total length in bytes, reading file sizes from disk; `nil` for a streamed body of unknown length.
    /// - Throws: `invalidRequest` when a file is missing or unreadable.
    public func knownLength() throws(ServerAPIError) -> Int64? {
        if let stream = streamedBody { return stream.length }
        return try contentLength()
    }

    /// The total length in bytes, reading file sizes from disk.
    /// - Throws: `invalidRequest` when a file is missing or unreadable, or the body is a streamed one of
    ///   unknown length (see `knownLength()`).
    public func contentLength() throws(ServerAPIError) -> Int64 {
        if let stream = streamedBody {
            guard let length = stream.length else {
                throw ServerAPIError(.invalidRequest, "the streamed request body's length is not known")
            }
            return length
        }
        var total: Int64 = 0
        for segment in segments {
            switch segment {
            case .data(let data): total += Int64(data.count)
            case .file(let url): total += try Self.fileSize(url)
            }
        }
        return total
    }

    /// The bytes of an in-memory body; `nil` when the body streams a file.
    public var inMemoryBytes: Data? {
        guard isInMemory else { return nil }
        var data = Data()
        for case .data(let chunk) in segments { data.append(chunk) }
        return data
    }

    /// Creates a reader that yields the body's bytes in order, a bounded chunk at a time.
    /// - Throws: `invalidRequest` when a file cannot be opened, or for a streamed body (read it with
    ///   `RequestBodyStream.makeChunks()`).
    package func makeReader() throws(ServerAPIError) -> BodyReader {
        guard streamedBody == nil else {
            throw ServerAPIError(.invalidRequest, "a streamed request body is read with its chunks, not a reader")
        }
        return try BodyReader(segments: segments)
    }

    static func fileSize(_ url: URL) throws(ServerAPIError) -> Int64 {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            guard (attributes[.type] as? FileAttributeType) != .typeDirectory else {
                throw ServerAPIError(.invalidRequest, "the body file \(url.path) is a directory")
            }
            // A `UInt` with FoundationEssentials alone, an `NSNumber` (which casts to one) with Foundation.
            return (attributes[.size] as? UInt).flatMap { Int64(exactly: $0) } ?? 0
        } catch let error as ServerAPIError {
            throw error
        } catch {
            throw ServerAPIError(.invalidRequest, "the body file \(url.path) cannot be read", underlying: error)
        }
    }
}

/// Reads a body's segments in order, holding at most one chunk of a file in memory.
///
/// - Important: Not thread-safe: one transfer owns one reader and reads it from one thread at a time.
package final class BodyReader {
    private var segments: ArraySlice<BodySegment>
    private var current: Data?
    private var currentOffset = 0
    /// The open file's descriptor (plain POSIX: FoundationEssentials has no `FileHandle`).
    private var file: Int32?
    /// Bytes handed out so far.
    package private(set) var bytesRead: Int64 = 0

    init(segments: [BodySegment]) throws(ServerAPIError) {
        self.segments = segments[...]
        for case .file(let url) in segments where !FileManager.default.isReadableFile(atPath: url.path) {
            throw ServerAPIError(.invalidRequest, "the body file \(url.path) does not exist or cannot be read")
        }
    }

    deinit { if let file { close(file) } }

    /// Copies up to `maxLength` bytes into `buffer`.
    /// - Returns: The number of bytes copied; 0 at the end of the body.
    /// - Throws: `fileSystem` when a file cannot be read.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(ServerAPIError) -> Int {
        guard buffer.count > 0 else { return 0 }
        while true {
            if let data = current {
                let count = min(buffer.count, data.count - currentOffset)
                if count > 0 {
                    data.withUnsafeBytes { source in
                        buffer.baseAddress!.copyMemory(
                            from: source.baseAddress!.advanced(by: currentOffset), byteCount: count)
                    }
                    currentOffset += count
                    bytesRead += Int64(count)
                    return count
                }
                current = nil
                currentOffset = 0
            }
            if let descriptor = file {
                let count = systemRead(descriptor, buffer.baseAddress!, buffer.count)
                if count < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    throw ServerAPIError(
                        .fileSystem, "reading the request body file failed",
                        underlying: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
                }
                if count == 0 {
                    close(descriptor)
                    file = nil
                    continue
                }
                bytesRead += Int64(count)
                return count
            }
            guard let next = segments.popFirst() else { return 0 }
            switch next {
            case .data(let data):
                current = data
                currentOffset = 0
            case .file(let url):
                let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    throw ServerAPIError(
                        .fileSystem, "cannot open the request body file \(url.path)",
                        underlying: POSIXErrorCode(rawValue: errno).map { POSIXError($0) })
                }
                file = descriptor
            }
        }
    }

    /// Reads up to `maxLength` bytes into a new `Data`; empty at the end of the body.
    package func read(maxLength: Int) throws(ServerAPIError) -> Data {
        var data = Data(count: maxLength)
        var failure: ServerAPIError?
        let count = data.withUnsafeMutableBytes { buffer -> Int in
            do throws(ServerAPIError) { return try read(into: buffer) } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        data.count = count
        return data
    }
}

/// The C library's `read(2)`, which `BodyReader.read(into:)` hides inside the type.
private func systemRead(_ file: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(file, buffer, count)
}
