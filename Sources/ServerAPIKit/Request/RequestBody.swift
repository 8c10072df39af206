#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
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
