import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import Testing

@Suite("CurlTransport behind a ServerAPIManager")
struct CurlManagerTests {
    struct Item: Codable, Equatable {
        var name: String
        var count: Int
    }

    @Test("a manager composed with CurlTransport sends a JSON call and formats the answer")
    func json() async throws {
        try await CurlTestServer.with { server in
            let manager = ServerAPIManager(transport: CurlTransport())
            let api = ServerAPI(host: server.base, path: "/echo").method(.post).json(Item(name: "tea", count: 2))
                .format(.data)
            let result = try await manager.send(api)
            #expect(result.status == 200)
            #expect(result.metrics.transport?.transport == "curl")
            let echo = try JSONDecoder().decode(Echo.self, from: result.data ?? Data())
            #expect(try JSONDecoder().decode(Item.self, from: echo.body ?? Data()) == Item(name: "tea", count: 2))
            #expect(echo.values("Content-Type") == ["application/json"])
        }
    }

    @Test("cancelling by tag through the manager tears the curl transfer down")
    func cancelByTag() async throws {
        try await CurlTestServer.with { server in
            let manager = ServerAPIManager(transport: CurlTransport())
            let api = ServerAPI(host: server.base, path: "/delay").query("seconds", "30").tag("slow")
                .method(.post).body(.text("x"))
            let sent = EventCounter()
            let task = Task {
                try await manager.send(api) { progress in
                    if progress.direction == .upload, progress.completed == 1 { sent.fire() }
                }
            }
            await sent.wait()
            #expect(manager.cancel(tag: "slow").count == 1)
            let error = await expectError { try await task.value }
            #expect(error?.kind == .cancelled)
        }
    }
}
