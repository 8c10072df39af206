import Foundation
import ServerAPIKit

/// What the fault fixture's `/echo`, `/upload-sink` and `/headers` routes answer.
struct Echo: Decodable, Sendable {
    var method: String
    var path: String
    var query: String
    var headers: [[String]]
    var length: Int?
    var sha256: String?
    var bodyBase64: String?

    enum CodingKeys: String, CodingKey {
        case method, path, query, headers, length, sha256
        case bodyBase64 = "body_base64"
    }

    /// Decodes a response's body.
    init(_ response: TransportResponse) throws {
        self = try JSONDecoder().decode(Echo.self, from: response.data ?? Data())
    }

    /// The body the server received.
    var body: Data? { bodyBase64.flatMap { Data(base64Encoded: $0) } }

    /// Every value the server received for a header name, in order.
    func values(_ name: String) -> [String] {
        headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap { $0.last }
    }
}

extension RequestPerforming {
    /// Sends a plain request.
    func send(
        _ url: URL, method: HTTPMethod = .get, headers: HTTPHeaders = [:], body: BodySource = .empty,
        timeout: Duration = .seconds(30), configure: (inout TransportRequest) -> Void = { _ in }
    ) async throws -> TransportResponse {
        var request = TransportRequest(url: url, method: method, headers: headers, body: body, timeout: timeout)
        configure(&request)
        return try await perform(request)
    }
}
