import Foundation
import ServerAPIKit
import ServerAPITesting
import Testing

/// A request is checked once by the core; transports send a prepared request without checking it again,
/// and anything that changes what was checked makes it unprepared.
@Suite struct PreparedRequestTests {
    /// Adds a header after the core prepared the request.
    struct HeaderPlugin: ServerAPIPlugin {
        let value: String
        func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
            var request = request
            request.headers.add(name: "X-Signed", value: value)
            return request
        }
    }

    @Test("A call's transport request is prepared; changing a checked field clears the mark, others keep it")
    func mark() throws {
        var request = try ServerAPI(host: "api.test", path: "/x").transportRequest()
        #expect(request.isPrepared)
        request.attempt = 2
        request.maxResponseSize = 10
        #expect(request.isPrepared)
        request.headers.add(name: "X-A", value: "1")
        #expect(!request.isPrepared)
        try request.prepare()
        #expect(request.isPrepared)
        request.url = URL(string: "https://api.test/y")!
        #expect(!request.isPrepared)
    }

    @Test("A request made by hand is checked when sent; a prepared one only for the transport's own stall limit")
    func validateForSending() throws {
        var request = TransportRequest(url: URL(string: "https://api.test/x")!)
        request.headers.add(name: "X-Bad", value: "a\r\nInjected: 1")
        #expect(!request.isPrepared)
        let injected = #expect(throws: ServerAPIError.self) { try request.validateForSending(defaultStallTimeout: nil) }
        #expect(injected?.kind == .invalidRequest)
        let prepared = try ServerAPI(host: "api.test", path: "/x").transportRequest()
        try prepared.validateForSending(defaultStallTimeout: nil)
        let badStall = StallTimeout(bytesPerSecond: 0, duration: .seconds(1))
        let stall = #expect(throws: ServerAPIError.self) {
            try prepared.validateForSending(defaultStallTimeout: badStall)
        }
        #expect(stall?.kind == .invalidRequest)
    }

    @Test("A header with a line break added by a plugin is refused before the transport sees the call")
    func pluginInjection() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .json("{}"))
        let manager = ServerAPIManager(transport: mock, plugins: [HeaderPlugin(value: "a\r\nInjected: 1")])
        let error = await #expect(throws: ServerAPIError.self) {
            try await manager.send(.init(host: "api.test", path: "/x"))
        }
        #expect(error?.kind == .invalidRequest)
        #expect(mock.requestCount == 0)
        let fine = ServerAPIManager(transport: mock, plugins: [HeaderPlugin(value: "ok")])
        _ = try await fine.send(.init(host: "api.test", path: "/x"))
        #expect(mock.requests.last?.headers["X-Signed"] == "ok")
    }
}
