import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

extension ServerAPI {
    static func test(_ path: String = "/x") -> ServerAPI { ServerAPI(host: "https://api.test", path: path) }
}

/// The older name of `expectError(_:sourceLocation:)`, still used by the resilience tests.
func errorOf(
    _ body: () async throws -> some Any, sourceLocation: SourceLocation = #_sourceLocation
) async -> ServerAPIError? {
    await expectError(body, sourceLocation: sourceLocation)
}
