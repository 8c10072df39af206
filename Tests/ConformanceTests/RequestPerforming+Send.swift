import Foundation
import ServerAPIKit

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
