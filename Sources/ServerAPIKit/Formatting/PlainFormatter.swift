import Foundation

/// Formats the payload as it is: bytes, text, or JSON at the call's key path.
/// (Provisional implementation; the key-path scanner replaces it.)
public struct PlainFormatter: ResponseFormatting {
    /// Creates the formatter.
    public init() {}

    public func format(_ response: TransportResponse, for api: ServerAPI) throws -> ServerValue {
        if case .file(let url, _) = response.body { return .file(url) }
        let data = response.data ?? Data()
        switch api.resultFormat {
        case .data: return .data(data)
        case .string: return .string(String(decoding: data, as: UTF8.self))
        case .json:
            do {
                let json = try JSONDecoder().decode(JSONValue.self, from: data)
                return .json(json)
            } catch {
                throw ServerAPIError(.decoding, "the response is not valid JSON", underlying: error)
            }
        }
    }

    public func decode<T: Decodable>(_ type: T.Type, from response: TransportResponse, for api: ServerAPI) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: response.data ?? Data())
        } catch {
            throw ServerAPIError(.decoding, "the response could not be decoded as \(T.self)", underlying: error)
        }
    }
}

extension ResponseFormatting where Self == PlainFormatter {
    /// The payload as it is.
    public static var plain: PlainFormatter { PlainFormatter() }
}
