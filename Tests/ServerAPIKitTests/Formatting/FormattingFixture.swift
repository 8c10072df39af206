import Foundation
import Testing

@testable import ServerAPIKit

/// Responses and calls for the formatter tests.
enum FormattingFixture {
    static let url = URL(string: "https://api.test/items")!

    /// A response with a UTF-8 body.
    static func response(
        _ body: String, status: Int = 200, contentType: String? = "application/json"
    ) -> TransportResponse {
        response(Data(body.utf8), status: status, contentType: contentType)
    }

    /// A response with raw bytes.
    static func response(_ body: Data, status: Int = 200, contentType: String? = "application/json")
        -> TransportResponse
    {
        var headers: HTTPHeaders = [:]
        if let contentType { headers.add(name: "Content-Type", value: contentType) }
        return TransportResponse(status: status, headers: headers, body: .data(body), url: url)
    }

    /// A call reading `format` at `keyPath`.
    static func api(_ keyPath: String? = nil, format: ResultFormat = .json, method: HTTPMethod = .get) -> ServerAPI {
        ServerAPI(host: "https://api.test", path: "/items", method: method).format(format).keyPath(keyPath)
    }

    /// Runs `body` and returns the `ServerAPIError` it threw; records an issue when it threw nothing or something else.
    static func error(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) -> ServerAPIError? {
        do {
            try body()
            Issue.record("expected a ServerAPIError, but nothing was thrown", sourceLocation: sourceLocation)
            return nil
        } catch let error as ServerAPIError {
            return error
        } catch {
            Issue.record("expected a ServerAPIError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }
}

/// A model for decoding tests.
struct FixtureProduct: Codable, Hashable, Sendable {
    var id: Int
    var name: String
    var price: Double
}
