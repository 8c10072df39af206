import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPICurl

#if canImport(Glibc)
    import Glibc
#endif

@Suite("CurlTransport: proxies")
struct CurlProxyTests {
    static let via = "1.1 serverapikit-proxy"

    func transport(_ proxy: Proxy?, caFile: URL? = nil) -> CurlTransport {
        CurlTransport(configuration: .init(additionalTrustedCAFile: caFile, proxy: proxy))
    }

    @Test("a GET goes through the proxy, which the server sees in Via")
    func get() async throws {
        try await CurlTestServer.with { server in
            try await ProxyFixture.withProxy { proxy in
                let transport = transport(try Proxy(proxy.base))
                let response = try await transport.perform(TransportRequest(url: server.url("/echo?x=1")))
                #expect(response.status == 200)
                let echo = try Echo(response)
                #expect(echo.values("Via") == [Self.via])
                #expect(echo.query == "x=1")
                #expect(try await proxy.stats().forwarded == 1)
            }
        }
    }

    @Test("a POST body arrives whole through the proxy, in memory and streamed from a file")
    func post() async throws {
        try await CurlTestServer.with { server in
            try await ProxyFixture.withProxy { proxy in
                let transport = transport(try Proxy(proxy.base))
                let small = noiseBytes(10_000)
                let response = try await transport.perform(
                    TransportRequest(url: server.url("/echo"), method: .post, body: .data(small)))
                #expect(try Echo(response).body == small)
                #expect(try Echo(response).values("Via") == [Self.via])
                try await withTemporaryDirectory { directory in
                    // Larger than the copy limit: libcurl reads it through the body reader.
                    let large = noiseBytes(3_000_000, seed: 7)
                    let file = directory.appendingPathComponent("body.bin")
                    try large.write(to: file)
                    let streamed = try await transport.perform(
                        TransportRequest(url: server.url("/echo"), method: .put, body: .file(file)))
                    #expect(try Echo(streamed).length == large.count)
                    #expect(try Echo(streamed).body == large)
                }
                #expect(try await proxy.stats().forwarded == 2)
            }
        }
    }

    @Test("a download through the proxy is written to its file")
    func download() async throws {
        try await CurlTestServer.with { server in
            try await ProxyFixture.withProxy { proxy in
                try await withTemporaryDirectory { directory in
                    let target = DownloadTarget(destination: directory.appendingPathComponent("file.bin"))
                    let response = try await transport(try Proxy(proxy.base)).perform(
                        TransportRequest(url: server.url("/bytes/500000"), download: target))
                    #expect(response.status == 200)
                    #expect(try Data(contentsOf: target.destination) == patternBytes(500_000))
                    #expect(try await proxy.stats().forwarded == 1)
                }
            }
        }
    }

    @Test("a bypassed host is reached directly; others still go through the proxy")
    func bypass() async throws {
        try await CurlTestServer.with { server in
            try await ProxyFixture.withProxy { proxy in
                let transport = transport(try Proxy(proxy.base, bypass: ["localhost"]))
                let direct = try await transport.perform(TransportRequest(url: server.otherHostURL("/echo")))
                #expect(try Echo(direct).values("Via").isEmpty)
                #expect(try await proxy.stats().forwarded == 0)
                let proxied = try await transport.perform(TransportRequest(url: server.url("/echo")))
                #expect(try Echo(proxied).values("Via") == [Self.via])
                #expect(try await proxy.stats().forwarded == 1)
            }
        }
    }

    @Test("proxy credentials are sent with Basic authentication, from the options or the URL")
    func credentials() async throws {
        try await CurlTestServer.with { server in
            try await ProxyFixture.withProxy(user: "alice:s3cret pass") { proxy in
                let given = try Proxy(proxy.base, credentials: .init(user: "alice", password: "s3cret pass"))
                let response = try await transport(given).perform(TransportRequest(url: server.url("/echo")))
                #expect(response.status == 200)
                // The proxy takes its credentials off: the server never sees them.
                #expect(try Echo(response).values("Proxy-Authorization").isEmpty)
                let inURL = try Proxy("http://alice:s3cret%20pass@127.0.0.1:\(proxy.port)")
                #expect(inURL.url?.absoluteString == "http://127.0.0.1:\(proxy.port)")
                let again = try await transport(inURL).perform(TransportRequest(url: server.url("/echo")))
                #expect(again.status == 200)
                #expect(try await proxy.stats() == ProxyServer.Stats(forwarded: 2, tunnels: 0, rejected: 0))
            }
        }
    }

    @Test("wrong or missing proxy credentials fail with a 407 error that names the proxy, not the password")
    func wrongCredentials() async throws {
        try await CurlTestServer.with { server in
            try await ProxyFixture.withProxy(user: "alice:s3cret") { proxy in
                for credentials in [Proxy.Credentials(user: "alice", password: "wrongpass"), nil] {
                    let error = await expectError {
                        try await transport(try Proxy(proxy.base, credentials: credentials)).perform(
                            TransportRequest(url: server.url("/echo")))
                    }
                    #expect(error?.kind == .httpStatus)
                    #expect(error?.status == 407)
                    #expect(error?.message.contains("http://127.0.0.1:\(proxy.port)") == true)
                    #expect(error?.message.contains("407 Proxy Authentication Required") == true)
                    let everything = "\(String(describing: error)) \(String(reflecting: error))"
                    #expect(!everything.contains("wrongpass"))
                    #expect(!everything.contains("s3cret"))
                }
                let stats = try await proxy.stats()
                #expect(stats == ProxyServer.Stats(forwarded: 0, tunnels: 0, rejected: 2))
            }
        }
    }

    @Test("a proxy that does not listen is a cannot-connect error that says it was the proxy")
    func deadProxy() async throws {
        try await CurlTestServer.with { server in
            let port = try closedPort()
            let proxy = try Proxy("http://127.0.0.1:\(port)", credentials: .init(user: "bob", password: "hunter22"))
            let error = await expectError {
                try await transport(proxy).perform(TransportRequest(url: server.url("/echo")))
            }
            #expect(error?.kind == .cannotConnect)
            #expect(error?.message.contains("could not connect to the proxy http://127.0.0.1:\(port)") == true)
            #expect(error.map { !"\($0) \(String(reflecting: $0))".contains("hunter22") } == true)
        }
    }

    @Test("errors name the proxy libcurl used: explicit, bypassed, or from the environment variables")
    func route() throws {
        let plain = URL(string: "http://api.example.com/x")!
        let secure = URL(string: "https://api.example.com/x")!
        let explicit = try Proxy("http://u:p@proxy:3128", bypass: ["example.com"])
        #expect(CurlProxyRoute.proxy(for: plain, explicit, environment: [:]) == nil)
        #expect(
            CurlProxyRoute.proxy(for: URL(string: "http://other.org")!, explicit, environment: [:])
                == "http://proxy:3128")
        let environment = [
            "http_proxy": "http://user:secret@web-proxy:8080", "HTTPS_PROXY": "tls-proxy:3129", "no_proxy": "internal",
        ]
        #expect(CurlProxyRoute.proxy(for: plain, .environment, environment: environment) == "http://web-proxy:8080")
        #expect(CurlProxyRoute.proxy(for: secure, .environment, environment: environment) == "http://tls-proxy:3129")
        #expect(
            CurlProxyRoute.proxy(for: URL(string: "http://db.internal")!, .environment, environment: environment) == nil
        )
        // libcurl ignores an upper-case HTTP_PROXY.
        #expect(CurlProxyRoute.proxy(for: plain, .environment, environment: ["HTTP_PROXY": "http://p:1"]) == nil)
        #expect(
            CurlProxyRoute.proxy(for: plain, .environment, environment: ["all_proxy": "http://p:1"]) == "http://p:1")
        #expect(CurlProxyRoute.proxy(for: plain, .environment, environment: [:]) == nil)
    }

    @Test("a SOCKS route is named by its URL without credentials, explicit or from all_proxy")
    func socksRoute() throws {
        let plain = URL(string: "http://api.example.com/x")!
        let explicit = try Proxy("socks5h://u:secret@socks.internal")
        #expect(CurlProxyRoute.proxy(for: plain, explicit, environment: [:]) == "socks5h://socks.internal:1080")
        let environment = ["all_proxy": "socks5://user:secret@socks.internal:9050"]
        let fromEnvironment = CurlProxyRoute.proxy(for: plain, .environment, environment: environment)
        #expect(fromEnvironment == "socks5://socks.internal:9050")
        #expect(CurlProxyRoute.isSOCKS("socks4a://p:1080"))
        #expect(!CurlProxyRoute.isSOCKS("http://p:3128"))
    }

    /// `CurlProxy.socksFailure` for a `CURLcode` and `CURLproxycode` (numbers from curl.h, stable across
    /// libcurl versions), as libcurl 7.88 and 8.14 both report them.
    static func socksFailure(
        _ code: Int, _ proxyCode: Int = 0, detail: String, proxy: String = "socks5h://127.0.0.1:1080"
    ) -> ServerAPIError? {
        CurlProxy.socksFailure(
            code: code, proxyCode: proxyCode, proxy: proxy, target: "api.example.com:443",
            underlying: CurlError(code: code, summary: "summary", detail: detail))
    }

    @Test("SOCKS failures: refused credentials as a 407, the server out of the proxy's reach as cannotConnect")
    func socksFailures() throws {
        // 97 CURLE_PROXY with 33 CURLPX_USER_REJECTED, 12 CURLPX_NO_AUTH, 3 CURLPX_CLOSED (a server that
        // closes instead of answering the login), 8 CURLPX_IDENTD_DIFFER (SOCKS4 user id).
        for (proxyCode, detail) in [
            (33, "User was rejected by the SOCKS5 server (1 1)."), (12, "No authentication method was acceptable."),
            (3, "connection to proxy closed"), (8, "cannot complete SOCKS4 connection to 1.2.3.4:443. (93)"),
        ] {
            let error = try #require(Self.socksFailure(97, proxyCode, detail: detail))
            #expect(error.kind == .httpStatus)
            #expect(error.status == 407)
            #expect(error.message.contains("the SOCKS proxy socks5h://127.0.0.1:1080"))
            #expect(error.message.contains("credentials are missing or wrong"))
            #expect(error.message.contains(detail))
        }
        // libcurl before 7.73 had no CURLE_PROXY: a rejected login was CURLE_COULDNT_CONNECT and its message.
        let old = try #require(Self.socksFailure(7, detail: "User was rejected by the SOCKS5 server (1 1)."))
        #expect(old.status == 407)
        // 21 CURLPX_REPLY_HOST_UNREACHABLE, 19 CURLPX_REPLY_CONNECTION_REFUSED, 26 CURLPX_REQUEST_FAILED (SOCKS4).
        for proxyCode in [21, 19, 26] {
            let error = try #require(Self.socksFailure(97, proxyCode, detail: "Can't complete SOCKS5 connection"))
            #expect(error.kind == .cannotConnect)
            #expect(error.message.contains("could not connect to api.example.com:443"))
        }
        let resolve = try #require(
            Self.socksFailure(97, 27, detail: "Failed to resolve \"api.example.com\"", proxy: "socks5://127.0.0.1:1080")
        )
        #expect(resolve.kind == .cannotConnect)
        #expect(resolve.message.contains("socks5h:// or socks4a:// let the proxy resolve them"))
        let unreachable = try #require(Self.socksFailure(7, detail: "Failed to connect to 127.0.0.1 port 1080"))
        #expect(unreachable.kind == .cannotConnect)
        #expect(unreachable.message.contains("could not connect to the SOCKS proxy socks5h://127.0.0.1:1080"))
        let long = try #require(Self.socksFailure(97, 11, detail: "Excessive user name length for proxy auth"))
        #expect(long.kind == .invalidRequest)
        let other = try #require(
            Self.socksFailure(97, 2, detail: "Received invalid version in initial SOCKS5 response"))
        #expect(other.kind == .cannotConnect)
        #expect(other.message.contains("SOCKS5 handshake with the proxy socks5h://127.0.0.1:1080 failed"))
        // A failure after the handshake is the server's or the connection's, not the proxy's.
        #expect(Self.socksFailure(52, detail: "Empty reply from server") == nil)
    }

    @Test("an https URL goes through a CONNECT tunnel; the proxy sees no request")
    func tunnel() async throws {
        try await TestCertificates.with { certificates in
            let ca = certificates.file("ca.pem")
            let tls = (certificates.file("server.pem"), certificates.file("server.key"))
            try await CurlTestServer.with(tls: tls) { server in
                try await ProxyFixture.withProxy(user: "alice:s3cret") { proxy in
                    let good = try Proxy(proxy.base, credentials: .init(user: "alice", password: "s3cret"))
                    let response = try await transport(good, caFile: ca).perform(
                        TransportRequest(url: server.url("/echo"), method: .post, body: .data(Data("tunnelled".utf8))))
                    #expect(response.status == 200)
                    let echo = try Echo(response)
                    #expect(echo.body == Data("tunnelled".utf8))
                    // Inside the tunnel the proxy cannot add anything.
                    #expect(echo.values("Via").isEmpty)
                    #expect(try await proxy.stats() == ProxyServer.Stats(forwarded: 0, tunnels: 1, rejected: 0))

                    let bad = try Proxy(proxy.base, credentials: .init(user: "alice", password: "nope-nope"))
                    let error = await expectError {
                        try await transport(bad, caFile: ca).perform(TransportRequest(url: server.url("/echo")))
                    }
                    #expect(error?.kind == .httpStatus)
                    #expect(error?.status == 407)
                    #expect(error?.message.contains("proxy") == true)
                    #expect(error.map { !String(reflecting: $0).contains("nope-nope") } == true)
                }
            }
        }
    }

    @Test("an https:// proxy is reached over TLS and verified")
    func httpsProxy() async throws {
        try await TestCertificates.with { certificates in
            let ca = certificates.file("ca.pem")
            let tls = (certificates.file("server.pem"), certificates.file("server.key"))
            try await CurlTestServer.with { server in
                try await ProxyFixture.withProxy(tls: tls) { proxy in
                    #expect(proxy.base.hasPrefix("https://"))
                    let response = try await transport(try Proxy(proxy.base), caFile: ca).perform(
                        TransportRequest(url: server.url("/echo")))
                    #expect(try Echo(response).values("Via") == [Self.via])
                    // Without the CA, the proxy's certificate is not trusted.
                    let error = await expectError {
                        try await transport(try Proxy(proxy.base)).perform(TransportRequest(url: server.url("/echo")))
                    }
                    #expect(error?.kind == .tls)
                    #expect(try await proxy.stats().forwarded == 1)
                }
            }
        }
    }
}
