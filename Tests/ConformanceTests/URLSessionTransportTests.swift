import Foundation
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession
import Testing

/// What only the URLSession backend has: its configuration and its documented limits.
@Suite("URLSessionTransport")
struct URLSessionTransportTests {
    @Test("additional headers are sent, and a request's own header wins")
    func additionalHeaders() async throws {
        let transport = URLSessionTransport(
            configuration: .init(additionalHeaders: ["X-App": "demo", "X-Override": "session"]))
        let echo = try Echo(
            try await transport.send(try TestServers.fixture("/headers"), headers: ["X-Override": "request"]))
        #expect(echo.values("X-App") == ["demo"])
        #expect(echo.values("X-Override") == ["request"])
    }

    @Test("a User-Agent among the additional headers replaces the default one")
    func additionalUserAgent() async throws {
        let transport = URLSessionTransport(configuration: .init(additionalHeaders: ["User-Agent": "Session/3"]))
        let echo = try Echo(try await transport.send(try TestServers.fixture("/headers")))
        #expect(echo.values("User-Agent") == ["Session/3"])
    }

    @Test("the idle timeout ends a silent transfer before its total timeout")
    func idleTimeout() async throws {
        let transport = URLSessionTransport(configuration: .init(idleTimeout: .seconds(1)))
        let started = ContinuousClock.now
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(
                try TestServers.fixture("/hang-body?size=100000&after=100"), timeout: .seconds(30))
        }
        #expect(error?.kind == .timedOut)
        #expect(ContinuousClock.now - started < TestTiming.bound(.seconds(10)))
    }

    @Test("a GET with a body is refused before anything is sent")
    func getWithBody() async throws {
        let transport = URLSessionTransport()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(try TestServers.fixture("/echo"), body: .data(Data("x".utf8)))
        }
        #expect(error?.kind == .invalidRequest)
    }

    @Test("a redirected POST with a body is returned as the 307 rather than re-sent without its body")
    func temporaryRedirectWithBody() async throws {
        let response = try await URLSessionTransport().send(
            try TestServers.fixture("/redirect-to?url=/echo&status=307"), method: .post, body: .data(Data("x".utf8)))
        #expect(response.status == 307)
        #expect(response.headers["Location"] == "/echo")
    }

    @Test("the transport is named urlsession")
    func name() {
        #expect(URLSessionTransport().name == "urlsession")
    }
}

/// What URLSession on Linux does with proxies (see URLSessionTransport+Proxy.swift).
@Suite("URLSessionTransport: proxies")
struct URLSessionProxyTests {
    @Test("an explicit proxy is refused when the transport is made, on Linux")
    func explicitProxyRefused() throws {
        let proxy = try Proxy("http://127.0.0.1:3128", credentials: .init(user: "alice", password: "hunter22"))
        #if canImport(FoundationNetworking)
            let error = #expect(throws: ServerAPIError.self) { try URLSessionTransport(proxy: proxy) }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.message.contains("connectionProxyDictionary") == true)
            #expect(error?.message.contains("CurlTransport") == true)
            #expect(error?.message.contains("hunter22") == false)
        #else
            // Apple platforms take a proxy without credentials through connectionProxyDictionary.
            let error = #expect(throws: ServerAPIError.self) { try URLSessionTransport(proxy: proxy) }
            #expect(error?.kind == .unsupported)
        #endif
    }

    @Test("no proxy, or the environment's, is accepted and sends requests")
    func environmentAccepted() async throws {
        for proxy in [nil, Proxy.environment] {
            let transport = try URLSessionTransport(proxy: proxy)
            let response = try await transport.send(try TestServers.fixture("/health"))
            #expect(response.status == 200)
        }
    }
}
