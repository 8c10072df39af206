import Foundation
import ServerAPITestSupport
import Testing

/// `sapi --proxy socks5h://…` through the test servers' SOCKS proxy with authentication (pproxy), which
/// connects to httpbin from an address of its own (see scripts/test-server.sh).
@Suite("sapi --proxy with a SOCKS proxy")
struct SapiSocksTests {
    /// The authenticating proxy as a socks5h:// URL, with its credentials, and its password.
    static func proxy() throws -> (url: String, password: String) {
        var components = try #require(URLComponents(string: try TestServers.socks5Auth()))
        components.scheme = "socks5h"
        return (try #require(components.string), try #require(components.password))
    }

    @Test("--proxy socks5h://user:password@… sends the call through the proxy; -v and --har never show the password")
    func throughProxy() async throws {
        let (proxy, password) = try Self.proxy()
        let scratch = try Scratch()
        let har = scratch.file("run.har")
        let outcome = try await SapiProcess.run([
            "--proxy", proxy, "-v", "--har", har.path, "--pretty", "none", "\(try SapiProcess.httpbin)/get",
        ])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        // -v prints the request's head, the response's head and the body, each after a blank line.
        let body = try #require(outcome.text.components(separatedBy: "\n\n").last)
        let echo = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(echo["origin"] as? String == (try TestServers.socks5AuthSource()))
        #expect(!outcome.text.contains(password))
        #expect(!outcome.stderr.contains(password))
        #expect(!(try String(contentsOf: har, encoding: .utf8)).contains(password))
    }

    @Test("a wrong SOCKS password exits 4, as a proxy's 407 does, and names the proxy without the password")
    func wrongPassword() async throws {
        var components = try #require(URLComponents(string: try Self.proxy().url))
        components.password = "wrong-pw-31"
        let outcome = try await SapiProcess.run([
            "--proxy", try #require(components.string), "-v", "\(try SapiProcess.httpbin)/get",
        ])
        #expect(outcome.code == 4, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("SOCKS proxy socks5h://127.0.0.1:"))
        #expect(!outcome.stderr.contains("wrong-pw-31"))
    }

    @Test("--backend urlsession refuses a SOCKS proxy and points to the curl backend")
    func urlSessionRefuses() async throws {
        let (proxy, password) = try Self.proxy()
        let outcome = try await SapiProcess.run([
            "--backend", "urlsession", "--proxy", proxy, "\(try SapiProcess.httpbin)/get",
        ])
        #expect(outcome.code == 1)
        #expect(outcome.stderr.contains("does not support SOCKS proxies"))
        #expect(outcome.stderr.contains("--backend curl"))
        #expect(!outcome.stderr.contains(password))
    }
}
