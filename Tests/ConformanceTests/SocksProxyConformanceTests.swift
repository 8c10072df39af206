import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession
import Testing

/// Requests through a real SOCKS server on loopback (pproxy, started by scripts/test-server.sh): one proxy
/// without authentication (SOCKS5 and SOCKS4), one that needs a user name and password (SOCKS5). Each
/// connects to servers from an address of its own (127.0.0.2, 127.0.0.3), which httpbin's `/get` echoes
/// as `origin`: a request that went around the proxy would come from 127.0.0.1.
///
/// pproxy does not speak SOCKS4a (it reads the 4a request as one for 0.0.0.1), so `socks4a://` is covered by
/// the unit tests of `Proxy`, not here. pproxy closes the connection on a wrong password and confirms a
/// connection before opening it: the protocol's own refusals come from `Tests/Fixtures/socks_refusal.py`.
@Suite("SOCKS proxies (CurlTransport)")
struct SocksProxyConformanceTests {
    /// The proxy's URL from the environment with another scheme (`socks5h`, `socks4`, …) and, optionally,
    /// other credentials in place of those it carries.
    static func proxyURL(
        _ base: String, scheme: String, user: String? = nil, password: String? = nil
    ) throws -> String {
        var components = try #require(URLComponents(string: base))
        components.scheme = scheme
        if let user { components.user = user }
        if let password { components.password = password }
        return try #require(components.string)
    }

    /// The user name and password the authenticating proxy accepts.
    static func credentials() throws -> (user: String, password: String) {
        let components = try #require(URLComponents(string: try TestServers.socks5Auth()))
        return (try #require(components.user), try #require(components.password))
    }

    static func transport(_ proxy: Proxy, kind: TransportKind = .curl) -> CurlTransport {
        CurlTransport(configuration: kind.curlConfiguration(.init(proxy: proxy)))
    }

    /// httpbin's `origin` for a `/get` sent through `transport`.
    static func origin(_ transport: CurlTransport, host: String = "127.0.0.1") async throws -> String? {
        var components = try #require(URLComponents(string: try TestServers.httpbin() + "/get"))
        components.host = host
        let response = try await transport.send(try #require(components.url))
        #expect(response.status == 200)
        let body = try JSONSerialization.jsonObject(with: response.data ?? Data()) as? [String: Any]
        return body?["origin"] as? String
    }

    @Test(
        "a GET through a SOCKS proxy without authentication reaches the server from the proxy",
        arguments: ["socks5", "socks5h", "socks4"])
    func withoutAuthentication(scheme: String) async throws {
        let proxy = try Proxy(try Self.proxyURL(try TestServers.socks5(), scheme: scheme))
        #expect(try await Self.origin(Self.transport(proxy)) == TestServers.socks5Source())
    }

    @Test("a host name reaches the server through socks5h (the proxy resolves it) and socks4 (resolved here)")
    func hostNames() async throws {
        // Not socks5://: it hands the proxy the address libcurl resolved, and libcurl 8.14 resolves `localhost`
        // to ::1 first, where httpbin does not listen (SOCKS4 carries IPv4 addresses only).
        for scheme in ["socks5h", "socks4"] {
            let proxy = try Proxy(try Self.proxyURL(try TestServers.socks5(), scheme: scheme))
            #expect(try await Self.origin(Self.transport(proxy), host: "localhost") == TestServers.socks5Source())
        }
    }

    @Test(
        "a SOCKS5 user name and password from the URL or from credentials: are accepted",
        arguments: ["socks5", "socks5h"])
    func withAuthentication(scheme: String) async throws {
        let inURL = try Proxy(try Self.proxyURL(try TestServers.socks5Auth(), scheme: scheme))
        #expect(try await Self.origin(Self.transport(inURL)) == TestServers.socks5AuthSource())

        let (user, password) = try Self.credentials()
        var bare = try Self.proxyURL(try TestServers.socks5Auth(), scheme: scheme)
        bare = bare.replacingOccurrences(of: "\(user):\(password)@", with: "")
        let separate = try Proxy(bare, credentials: .init(user: user, password: password))
        #expect(separate.description.contains(password) == false)
        #expect(try await Self.origin(Self.transport(separate)) == TestServers.socks5AuthSource())
    }

    @Test(
        "a wrong SOCKS5 password fails as a refused proxy login, like an HTTP proxy's 407, without the password",
        arguments: ["socks5", "socks5h"])
    func wrongPassword(scheme: String) async throws {
        let wrong = "not-the-password-42"
        let proxy = try Proxy(try Self.proxyURL(try TestServers.socks5Auth(), scheme: scheme, password: wrong))
        let error = await expectError { try await Self.transport(proxy).send(try TestServers.httpbin("/get")) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 407)
        #expect(error?.message.contains("SOCKS proxy \(proxy.url?.absoluteString ?? "?")") == true)
        #expect(error?.message.contains("credentials are missing or wrong") == true)
        let texts = [error?.message, error.map { String(describing: $0) }, error?.localizedDescription]
        for text in texts.compactMap({ $0 }) { #expect(!text.contains(wrong)) }
    }

    @Test("no credentials to a SOCKS5 proxy that needs them fails as a refused proxy login")
    func missingCredentials() async throws {
        var components = URLComponents(string: try TestServers.socks5Auth())
        components?.user = nil
        components?.password = nil
        let proxy = try Proxy(try #require(components?.string))
        let error = await expectError { try await Self.transport(proxy).send(try TestServers.httpbin("/get")) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 407)
    }

    @Test(
        "an https:// URL goes through the SOCKS connection with TLS end to end, no CONNECT",
        arguments: ["socks5", "socks5h"])
    func https(scheme: String) async throws {
        let url = try TestServers.url(base: TestServers.httpbinH2(), "/get")
        // The authenticating proxy: the same request without its credentials is refused, so the
        // successful one went through it.
        let proxy = try Proxy(try Self.proxyURL(try TestServers.socks5Auth(), scheme: scheme))
        for kind in [TransportKind.curl, .curlHTTP2] {
            var configuration = kind.curlConfiguration(.init(proxy: proxy))
            configuration.additionalTrustedCAFile = try TestServers.h2CAFile()
            let response = try await CurlTransport(configuration: configuration).send(url)
            #expect(response.status == 200)
            #expect(response.url.scheme == "https")
        }
        var refused = proxy
        refused.credentials = nil
        var configuration = CurlTransport.Configuration(proxy: refused)
        configuration.additionalTrustedCAFile = try TestServers.h2CAFile()
        let error = await expectError { try await CurlTransport(configuration: configuration).send(url) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 407)
    }

    @Test("a 407 from the server itself through a SOCKS proxy is the server's response, not a proxy refusal")
    func serverStatus407() async throws {
        let proxy = try Proxy(try Self.proxyURL(try TestServers.socks5(), scheme: "socks5h"))
        let response = try await Self.transport(proxy).send(try TestServers.httpbin("/status/407"))
        #expect(response.status == 407)
    }

    @Test("a SOCKS proxy that is not listening fails with cannotConnect, naming it without its password")
    func unreachableProxy() async throws {
        let port = try closedPort()
        let proxy = try Proxy("socks5h://someone:hidden-pw-9@127.0.0.1:\(port)")
        let error = await expectError { try await Self.transport(proxy).send(try TestServers.httpbin("/get")) }
        #expect(error?.kind == .cannotConnect)
        #expect(error?.message.contains("SOCKS proxy socks5h://127.0.0.1:\(port)") == true)
        #expect(error?.message.contains("hidden-pw-9") == false)
        #expect(error.map { String(describing: $0) }?.contains("hidden-pw-9") == false)
    }

    @Test("a SOCKS5 server that answers a login with RFC 1929's failure status fails as a refused proxy login")
    func rejectedLogin() async throws {
        try await FixtureProcess.withServer(script: FixtureScript.socksRefusal, arguments: ["--login"]) { port in
            let proxy = try Proxy("socks5h://alice:wrong-pw-5@127.0.0.1:\(port)")
            let error = await expectError { try await Self.transport(proxy).send(try TestServers.httpbin("/get")) }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 407)
            #expect(error?.message.contains("SOCKS proxy socks5h://127.0.0.1:\(port) rejected the user name") == true)
            #expect(error.map { String(reflecting: $0) }?.contains("wrong-pw-5") == false)
        }
    }

    @Test(
        "a SOCKS5 server that cannot reach the server (RFC 1928 replies 3, 4, 5) fails with cannotConnect naming both",
        arguments: [3, 4, 5])
    func targetUnreachable(reply: Int) async throws {
        try await FixtureProcess.withServer(script: FixtureScript.socksRefusal, arguments: ["--reply", "\(reply)"]) {
            port in
            let proxy = try Proxy("socks5h://127.0.0.1:\(port)")
            let url = try #require(URL(string: "http://unreachable.test:8080/get"))
            let error = await expectError { try await Self.transport(proxy).send(url) }
            #expect(error?.kind == .cannotConnect)
            #expect(
                error?.message.contains(
                    "the SOCKS proxy socks5h://127.0.0.1:\(port) could not connect to "
                        + "unreachable.test:8080") == true, "\(String(describing: error))")
        }
    }

    @Test("URLSessionTransport refuses a SOCKS proxy with a typed error when it is made")
    func urlSessionRefuses() throws {
        for text in ["socks5h://u:secret-pw@127.0.0.1:1080", "socks5://127.0.0.1:1080", "socks4://u@127.0.0.1"] {
            let proxy = try Proxy(text)
            let error = #expect(throws: ServerAPIError.self) { try URLSessionTransport(proxy: proxy) }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.message.contains("does not support SOCKS proxies") == true)
            #expect(error?.message.contains("CurlTransport") == true)
            #expect(error?.message.contains("secret-pw") == false)
        }
    }
}
