import Foundation
import ServerAPIKit

/// A request as a fixture server read it: the answer of the fault fixture's `/echo`, `/upload-sink` and
/// `/headers` routes (`Tests/Fixtures/fault_server.py`) and of `curl_test_server.py`'s `/echo`.
///
/// The two servers name the body fields differently (`length` and `body_base64`, or `body_length` and
/// `body`); both decode into the same properties.
public struct Echo: Decodable, Sendable {
    /// The request method.
    public var method: String
    /// The request path, without the query.
    public var path: String
    /// The raw query string, without `?`.
    public var query: String
    /// Every header line as `[name, value]`, in the order received.
    public var headers: [[String]]
    /// How many body bytes the server read; `nil` for a route that does not read the body (`/headers`).
    public var length: Int?
    /// The SHA-256 of the body as lower-case hex (fault fixture only).
    public var sha256: String?
    /// The body in base64; `nil` when the server did not send it back (too large, or not asked for).
    public var bodyBase64: String?

    private enum CodingKeys: String, CodingKey {
        case method, path, query, headers, length, sha256
        case bodyBase64 = "body_base64"
        case bodyLength = "body_length"
        case body
    }

    /// Decodes a response's body.
    /// - Throws: A `DecodingError` when the body is not an echo.
    public init(_ response: TransportResponse) throws {
        self = try JSONDecoder().decode(Echo.self, from: response.data ?? Data())
    }

    /// Decodes either server's answer.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decode(String.self, forKey: .method)
        path = try container.decode(String.self, forKey: .path)
        query = try container.decode(String.self, forKey: .query)
        headers = try container.decode([[String]].self, forKey: .headers)
        length =
            try container.decodeIfPresent(Int.self, forKey: .length)
            ?? container.decodeIfPresent(Int.self, forKey: .bodyLength)
        sha256 = try container.decodeIfPresent(String.self, forKey: .sha256)
        bodyBase64 =
            try container.decodeIfPresent(String.self, forKey: .bodyBase64)
            ?? container.decodeIfPresent(String.self, forKey: .body)
    }

    /// The body the server received; `nil` when it was not sent back or is not valid base64.
    public var body: Data? { bodyBase64.flatMap { Data(base64Encoded: $0) } }

    /// Every value the server received for a header name (compared case-insensitively), in order.
    public func values(_ name: String) -> [String] {
        headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap { $0.last }
    }
}
