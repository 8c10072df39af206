import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Connecting: the IPv6 loopback, and the connect timeout apart from the total timeout.
///
/// Happy eyeballs needs a name with an IPv6 and an IPv4 address: `localhost` resolves to 127.0.0.1 only on
/// this machine, so the test gives one with `CurlTransport.Configuration.resolve` (URLSession takes no
/// custom resolution).
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

    @Test("happy eyeballs: a name whose IPv6 address never answers is reached over IPv4 (curl)")
    func happyEyeballs() async throws {
        try await CurlTestServer.with { server in
            // ::1 at the server's port takes no connection: a client that waited on it would time out.
            let blackhole = try UnansweredListener(ipv6Port: server.port)
            func manager(_ addresses: [String]) -> ServerAPIManager {
                var configuration = CurlTransport.Configuration()
                configuration.resolve = [.init(host: "dual.test", port: server.port, addresses: addresses)]
                return ServerAPIManager(transport: CurlTransport(configuration: configuration))
            }
            let url = URL(string: "http://dual.test:\(server.port)/echo")!
            // The IPv6 address alone: nothing answers within the connect timeout.
            let alone = await #expect(throws: ServerAPIError.self) {
                try await manager(["::1"]).send(ServerAPI(url: url).connectTimeout(.seconds(2)).format(.data))
            }
            #expect(alone?.kind == .timedOut)
            // Both, IPv6 first: libcurl starts IPv4 after 200 ms and the call succeeds within the same limit.
            let result = try await manager(["::1", "127.0.0.1"]).send(
                ServerAPI(url: url).connectTimeout(.seconds(2)).format(.data))
            #expect(result.status == 200)
            withExtendedLifetime(blackhole) {}
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
        // libcurl's own words say it was the connection, in one of two texts depending on where the wait
        // ended: "Failed to connect … Timeout was reached" or "Connection timeout after 500 ms".
        #expect(error?.message.lowercased().contains("connect") == true, "\(String(describing: error))")
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
