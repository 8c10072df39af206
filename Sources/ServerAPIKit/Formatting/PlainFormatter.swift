#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Formats the payload as it is: bytes, text, or JSON at the call's key path (`.plain`).
///
/// | `resultFormat` | result |
/// |---|---|
/// | `.data` | the body bytes, unchanged |
/// | `.string` | the body as text in the `Content-Type` charset (UTF-8 when none is declared) |
/// | `.json` | the `JSONValue` at the call's `keyPath` (the whole document without one) |
/// | any, for a download | `.file(url)` of the downloaded file |
///
/// Key paths start at the root of the document (`#` and `~` mean the root too). Models are decoded
/// with `JSONDecoder` from the bytes of the value at the key path only: the scanner finds them
/// without building the rest of the document, and nothing is re-serialized.
///
/// - Important: Text is decoded strictly. A body that is not valid in its charset (invalid UTF-8 in
///   a UTF-8 body) is a `decoding` error that says where, never a silently repaired string; a
///   charset the library does not know is an error too. Use `.data` to read such bodies yourself.
///   An empty body asked for as `.json` is a `decoding` error saying the body is empty, except for a
///   HEAD request or a 204, 205 or 304 response, whose `.json` result is `.null` (and whose model
///   is decoded from `null`, so an `Optional` model is `nil`).
public struct PlainFormatter: ResponseFormatting {
    /// Makes the decoder for each model decoded; configure dates, keys and data strategies here.
    public let makeDecoder: @Sendable () -> JSONDecoder

    /// Creates a formatter that reads the payload as it is, with no business envelope.
    /// - Parameter makeDecoder: Makes the `JSONDecoder` for each model (a plain `JSONDecoder()` by default).
    public init(makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }) {
        self.makeDecoder = makeDecoder
    }

    /// Formats a response as the call's `resultFormat`, at the call's key path.
    /// - Returns: `.data`, `.string`, `.json` or `.file`, as the table above says.
    /// - Throws: `ServerAPIError` of kind `decoding` (malformed JSON with its byte offset, a key path
    ///   that leads nowhere, undecodable text, an empty body), `invalidRequest` for a key path with bad syntax.
    public func format(_ response: TransportResponse, for api: ServerAPI) throws -> ServerValue {
        if case .file(let url, _) = response.body { return .file(url) }
        let data = response.data ?? Data()
        do throws(ServerAPIError) {
            switch api.resultFormat {
            case .data:
                return .data(data)
            case .string:
                return .string(try ResponseReading.text(of: data, in: response))
            case .json:
                let keyPath = try ResponseReading.keyPath(of: api)
                if data.isEmpty {
                    if ResponseReading.isBodiless(response, for: api) && keyPath.isEmpty { return .json(.null) }
                    throw ResponseReading.emptyBody(response, expected: "JSON")
                }
                let json = try ResponseReading.jsonBytes(of: data, in: response)
                return .json(try JSONScanner.value(at: keyPath.components, in: json))
            }
        } catch {
            throw ResponseReading.contextual(error, response)
        }
    }

    /// Decodes a model from the value at the call's key path (the whole document without one).
    /// - Returns: The model.
    /// - Throws: `ServerAPIError` of kind `decoding`, naming the key path and the coding path inside
    ///   the model that failed (`keyPath` is the two joined, such as `items[3].price`).
    public func decode<T: Decodable>(_ type: T.Type, from response: TransportResponse, for api: ServerAPI) throws -> T {
        do throws(ServerAPIError) {
            let keyPath = try ResponseReading.keyPath(of: api)
            let data = try ResponseReading.bytes(of: response)
            if data.isEmpty {
                guard ResponseReading.isBodiless(response, for: api), keyPath.isEmpty else {
                    throw ResponseReading.emptyBody(response, expected: "\(T.self) to decode")
                }
                return try ResponseReading.decode(
                    T.self, from: Data("null".utf8), range: nil, keyPath: "", makeDecoder: makeDecoder)
            }
            let json = try ResponseReading.jsonBytes(of: data, in: response)
            // The scanner validates the whole document even without a key path: `JSONDecoder` accepts
            // trailing commas, leading zeros and lone surrogates, and says only *that* JSON is malformed.
            let range = try JSONScanner.range(of: keyPath.components, in: json)
            return try ResponseReading.decode(
                T.self, from: json, range: range, keyPath: JSONKeyPath.describe(keyPath.components),
                makeDecoder: makeDecoder)
        } catch {
            throw ResponseReading.contextual(error, response)
        }
    }
}

extension ResponseFormatting where Self == PlainFormatter {
    /// The payload as it is.
    public static var plain: PlainFormatter { PlainFormatter() }

    /// The payload as it is, with models decoded by decoders from `makeDecoder`.
    /// - Parameter makeDecoder: Makes the `JSONDecoder` for each model.
    /// - Returns: The formatter.
    public static func plain(makeDecoder: @escaping @Sendable () -> JSONDecoder) -> PlainFormatter {
        PlainFormatter(makeDecoder: makeDecoder)
    }
}
