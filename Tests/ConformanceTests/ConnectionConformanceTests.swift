import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Connecting: the IPv6 loopback, and the connect timeout apart from the total timeout.
///
/// Happy eyeballs (a name with both an IPv6 and an IPv4 address, the first one dead) cannot be tested on
/// this machine's loopback: `localhost` resolves to 127.0.0.1 only, and neither transport takes a custom
/// resolution from a call.
@Suite("Conformance: connecting")
struct ConnectionConformanceTests {
    @Test("a server on the IPv6 loopback is reached through an [::1] URL (curl)")
    func ipv6() async throws {
        let kind = TransportKind.curl
        try await CurlTestServer.with(host: "::1") { server in
            #expect(server.base.hasPrefix("http://[::1]:"))
            let manager = ServerAPIManager(transport: kind.make())
            let result = try await manager.send(ServerAPI(url: server.url("/echo")).format(.data))
            #expect(result.status == 200)
            let echo = try JSONSerialization.jsonObject(with: result.data ?? Data()) as? [String: Any]
            #expect(echo?["path"] as? String == "/echo")
        }
    }

    @Test("URLSession refuses an IPv6 address literal with a clear error (FoundationNetworking cannot request one)")
    func ipv6URLSession() async throws {
        try await CurlTestServer.with(host: "::1") { server in
            let manager = ServerAPIManager(transport: TransportKind.urlsession.make())
            let error = await #expect(throws: ServerAPIError.self) {
                try await manager.send(ServerAPI(url: server.url("/echo")).format(.data))
            }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.message.contains("IPv6") == true)
        }
    }

    @Test("the connect timeout ends a connection that is never completed, well before the total timeout")
    func connectTimeoutCurl() async throws {
        let listener = try UnansweredListener()
        let manager = ServerAPIManager(transport: TransportKind.curl.make())
        let api = ServerAPI(url: URL(string: "http://127.0.0.1:\(listener.port)/")!)
            .timeout(.seconds(60)).connectTimeout(.milliseconds(500))
        let error = await #expect(throws: ServerAPIError.self) { try await manager.send(api) }
        #expect(error?.kind == .timedOut)
        // libcurl's own words say it was the connection: "Failed to connect … Timeout was reached".
        #expect(error?.message.contains("connect") == true, "\(String(describing: error))")
        withExtendedLifetime(listener) {}
    }

    @Test("URLSession has no separate connect timeout on Linux: the total timeout ends the wait")
    func connectTimeoutURLSession() async throws {
        let listener = try UnansweredListener()
        let manager = ServerAPIManager(transport: TransportKind.urlsession.make())
        let api = ServerAPI(url: URL(string: "http://127.0.0.1:\(listener.port)/")!)
            .timeout(.seconds(2)).connectTimeout(.milliseconds(500))
        let error = await #expect(throws: ServerAPIError.self) { try await manager.send(api) }
        #expect(error?.kind == .timedOut)
        withExtendedLifetime(listener) {}
    }
}
