#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns a successful transport response into the value a call asked for.
///
/// The manager has already checked the HTTP status against the call's `acceptableStatus`
/// when it calls a formatter. A formatter may still fail: a malformed body, a business
/// envelope with a non-success code, a missing key path.
///
/// The core ships `.plain` (the payload as it is) and `.envelope(…)` (a business envelope
/// such as `{"code":0,"msg":"ok","data":…}`).
public protocol ResponseFormatting: Sendable {
    /// Formats a response as the call's `resultFormat`, at the call's `keyPath`.
    /// - Throws: `ServerAPIError` of kind `decoding` or `business`.
    func format(_ response: TransportResponse, for api: ServerAPI) throws -> ServerValue

    /// Decodes a model from the response at the call's `keyPath`.
    /// - Throws: `ServerAPIError` of kind `decoding` (naming the key path) or `business`.
    func decode<T: Decodable>(_ type: T.Type, from response: TransportResponse, for api: ServerAPI) throws -> T
}

/// The payload of a `ServerResult` (`ServerResult.value`), as the call's `resultFormat` asked: JSON, text,
/// bytes, or the URL of the downloaded file.
public enum ServerValue: Sendable, Hashable {
    /// Raw bytes.
    case data(Data)
    /// Text.
    case string(String)
    /// A JSON value.
    case json(JSONValue)
    /// A downloaded file.
    case file(URL)
}
