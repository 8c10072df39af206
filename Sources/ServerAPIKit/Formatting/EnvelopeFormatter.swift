#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads a business envelope such as `{"code":0,"msg":"ok","data":…}` (`.envelope()`).
///
/// Every response must be an envelope: a JSON object with the code key. A code that is not one of
/// the success codes becomes `ServerAPIError.business(code:message:)` (kind `business`, `code` set,
/// the message taken from the message key, or a default when the envelope has none). Then:
///
/// | `resultFormat` | result |
/// |---|---|
/// | `.json` | the `JSONValue` at the call's key path, which is relative to the data key |
/// | `.data` | the body bytes, unchanged (after the code was checked) |
/// | `.string` | the body as text, in the `Content-Type` charset (after the code was checked) |
/// | any, for a download | `.file(url)`, not read |
///
/// Key paths: `items` means `data.items`; `#.items` says the same explicitly; `~.meta` starts at
/// the root of the envelope (`~` alone is the whole envelope). Without a key path the result is the
/// data value; an envelope without a data key then gives `.null` (and a model is decoded from
/// `null`, so an `Optional` model is `nil`), while a key path below a missing data key is an error.
///
/// Codes compare as normalized text, so a JSON number and a JSON string with the same text match
/// the same success code: `0`, `"0"`, `0.0`, `-0` and `"0.0"` all match `"0"`. Numbers are normalized
/// by value (a whole number that fits in 64 bits is written as an integer: `1e3` is `1000`; other
/// numbers in their shortest form), booleans are `true` and `false`; a string that is not a JSON
/// number is compared exactly (`"OK"` does not match `"ok"`, `"00"` does not match `"0"`). The
/// success codes are normalized the same way, and the `code` of a business error is the normalized text.
///
/// Models are decoded with `JSONDecoder` from the bytes of the value at the key path only: one pass
/// over the envelope finds the code, the message and those bytes without building anything else.
///
/// - Important: An empty body is a `decoding` error ("the response body is empty"), except for a HEAD
///   request or a 204, 205 or 304 response, which carry no envelope: their `.json` result is `.null`.
public struct EnvelopeFormatter: ResponseFormatting {
    /// The key of the business code, such as `code`.
    public let codeKey: String
    /// The key of the message, such as `msg`.
    public let messageKey: String
    /// The key of the payload, such as `data`; key paths are relative to it.
    public let dataKey: String
    /// The codes that mean success, normalized (see the type's documentation).
    public let successCodes: Set<String>
    /// Makes the decoder for each model decoded.
    public let makeDecoder: @Sendable () -> JSONDecoder

    private let codeKeyBytes: [UInt8]
    private let messageKeyBytes: [UInt8]

    /// Creates a formatter for envelopes such as `{"code":0,"msg":"ok","data":…}` with these keys and success codes.
    /// - Parameters:
    ///   - codeKey: The key of the business code.
    ///   - messageKey: The key of the message.
    ///   - dataKey: The key of the payload.
    ///   - successCodes: The codes that mean success; numbers and strings alike (`"0"` matches `0` and `"0"`).
    ///   - makeDecoder: Makes the `JSONDecoder` for each model (a plain `JSONDecoder()` by default).
    public init(
        codeKey: String = "code", messageKey: String = "msg", dataKey: String = "data",
        successCodes: Set<String> = ["0"], makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) {
        self.codeKey = codeKey
        self.messageKey = messageKey
        self.dataKey = dataKey
        self.successCodes = Set(successCodes.map(JSONCursor.normalizedNumber))
        self.makeDecoder = makeDecoder
        self.codeKeyBytes = Array(codeKey.utf8)
        self.messageKeyBytes = Array(messageKey.utf8)
    }

    /// Checks the envelope and formats the response as the call's `resultFormat`.
    /// - Returns: `.json` at the key path (relative to the data key), `.data`, `.string` or `.file`.
    /// - Throws: `ServerAPIError` of kind `business` for a non-success code; `decoding` for a body that
    ///   is not an envelope, malformed JSON or a key path that leads nowhere; `invalidRequest` for a key
    ///   path with bad syntax.
    public func format(_ response: TransportResponse, for api: ServerAPI) throws -> ServerValue {
        if case .file(let url, _) = response.body { return .file(url) }
        let data = response.data ?? Data()
        do throws(ServerAPIError) {
            let keyPath = try ResponseReading.keyPath(of: api)
            if data.isEmpty && ResponseReading.isBodiless(response, for: api) {
                switch api.resultFormat {
                case .data: return .data(data)
                case .string: return .string("")
                case .json:
                    guard keyPath.isEmpty else { throw ResponseReading.emptyBody(response, expected: "envelope") }
                    return .json(.null)
                }
            }
            if data.isEmpty { throw ResponseReading.emptyBody(response, expected: "envelope") }
            let json = try ResponseReading.jsonBytes(of: data, in: response)
            // The key path matters only for `.json`; the other formats check the code alone.
            let readsJSON = api.resultFormat == .json
            let (_, range) = try open(json, keyPath: readsJSON ? keyPath : JSONKeyPath(), response: response)
            switch api.resultFormat {
            case .data: return .data(data)
            case .string: return .string(try ResponseReading.text(of: data, in: response))
            case .json:
                guard let range else { return .json(.null) }
                return .json(try JSONScanner.parse(json[range]))
            }
        } catch {
            throw ResponseReading.contextual(error, response)
        }
    }

    /// Checks the envelope and decodes a model from the value at the call's key path (relative to the data key).
    /// - Returns: The model.
    /// - Throws: `ServerAPIError` of kind `business` for a non-success code; `decoding` naming the key
    ///   path and the coding path inside the model that failed.
    public func decode<T: Decodable>(_ type: T.Type, from response: TransportResponse, for api: ServerAPI) throws -> T {
        do throws(ServerAPIError) {
            let keyPath = try ResponseReading.keyPath(of: api)
            let data = try ResponseReading.bytes(of: response)
            if data.isEmpty {
                guard ResponseReading.isBodiless(response, for: api), keyPath.isEmpty else {
                    throw ResponseReading.emptyBody(response, expected: "envelope")
                }
                return try ResponseReading.decode(
                    T.self, from: Data("null".utf8), range: nil, keyPath: "", makeDecoder: makeDecoder)
            }
            let json = try ResponseReading.jsonBytes(of: data, in: response)
            let (path, range) = try open(json, keyPath: keyPath, response: response)
            guard let range else {
                return try ResponseReading.decode(
                    T.self, from: Data("null".utf8), range: nil, keyPath: path, makeDecoder: makeDecoder)
            }
            return try ResponseReading.decode(T.self, from: json, range: range, keyPath: path, makeDecoder: makeDecoder)
        } catch {
            throw ResponseReading.contextual(error, response)
        }
    }

    /// The key path from the root of the envelope.
    func absolutePath(_ keyPath: JSONKeyPath) -> [JSONKeyPath.Component] {
        keyPath.anchor == .root ? keyPath.components : [.key(dataKey)] + keyPath.components
    }

    /// Reads the envelope: checks its shape and code, and finds the value at the key path.
    /// - Returns: The key path from the root as text, and the range of its value in `json`; `nil` when
    ///   the call reads the data value and the envelope has no data key.
    private func open(_ json: Data, keyPath: JSONKeyPath, response: TransportResponse) throws(ServerAPIError)
        -> (path: String, range: Range<Data.Index>?)
    {
        let components = absolutePath(keyPath)
        let steps = components.map(JSONStep.init)
        let scan = try JSONScanner.scan(json) { cursor throws(JSONSyntaxError) in
            try cursor.scanEnvelope(codeKey: codeKeyBytes, messageKey: messageKeyBytes, steps: steps)
        }
        guard scan.root == .object else {
            throw ServerAPIError(.decoding, "not a business envelope: the body is \(scan.root.name), not an object")
        }
        let code: String
        switch scan.code {
        case .missing:
            throw ServerAPIError(.decoding, "not a business envelope: missing key \"\(codeKey)\"")
        case .other(let kind):
            throw ServerAPIError(
                .decoding, "not a business envelope: the code \"\(codeKey)\" is \(kind.name), not a number or a string")
        case .text(let text):
            // Numbers arrive normalized; a string that spells a number is normalized the same way.
            code = JSONCursor.normalizedNumber(text)
        }
        guard successCodes.contains(code) else {
            var message = "the server answered with business code \(code)"
            if case .text(let text) = scan.message, !text.isEmpty { message = text }
            var error = ServerAPIError.business(code: code, message: message)
            error.status = response.status
            throw error
        }
        let path = JSONKeyPath.describe(components)
        switch scan.location {
        case .found(let range):
            return (path, (json.startIndex + range.lowerBound)..<(json.startIndex + range.upperBound))
        case .missing(.noKey(step: 0, _)) where keyPath.anchor != .root && keyPath.isEmpty:
            // No data key and no key path: a success without a payload.
            return (path, nil)
        case .missing(let miss):
            throw JSONScanner.missError(miss, components: components, in: json)
        }
    }
}

extension ResponseFormatting where Self == EnvelopeFormatter {
    /// A business envelope such as `{"code":0,"msg":"ok","data":…}`.
    /// - Parameters:
    ///   - codeKey: The key of the business code.
    ///   - messageKey: The key of the message.
    ///   - dataKey: The key of the payload; key paths are relative to it.
    ///   - successCodes: The codes that mean success; numbers and strings alike.
    ///   - makeDecoder: Makes the `JSONDecoder` for each model.
    /// - Returns: The formatter.
    public static func envelope(
        codeKey: String = "code", messageKey: String = "msg", dataKey: String = "data",
        successCodes: Set<String> = ["0"], makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) -> EnvelopeFormatter {
        EnvelopeFormatter(
            codeKey: codeKey, messageKey: messageKey, dataKey: dataKey, successCodes: successCodes,
            makeDecoder: makeDecoder)
    }
}
