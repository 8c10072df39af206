import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// A running `Tests/Fixtures/forward_proxy.py`: one per test, on a free loopback port.
struct ProxyServer: Sendable {
    /// The port it listens on.
    let port: Int
    /// `http://127.0.0.1:PORT` (or https).
    let base: String

    /// What went through the proxy so far.
    struct Stats: Decodable, Equatable {
        var forwarded: Int
        var tunnels: Int
        var rejected: Int
    }

    /// Asks the proxy (directly, never through itself) what it has forwarded.
    func stats() async throws -> Stats {
        let transport = CurlTransport(configuration: .init(insecureHosts: ["127.0.0.1"]))
        let response = try await transport.perform(TransportRequest(url: URL(string: base + "/__proxy/stats")!))
        return try JSONDecoder().decode(Stats.self, from: response.data ?? Data())
    }
}

enum ProxyFixture {
    /// Runs `body` with a fresh proxy, stopped afterwards whatever happens.
    /// - Parameters:
    ///   - user: `NAME:PASSWORD` the proxy demands (407 otherwise); `nil` for an open proxy.
    ///   - tls: A certificate and key: the proxy itself speaks TLS.
    static func withProxy<T>(
        user: String? = nil, tls: (certificate: URL, key: URL)? = nil, _ body: (ProxyServer) async throws -> T
    ) async throws -> T {
        var arguments: [String] = []
        if let user { arguments += ["--user", user] }
        if let tls { arguments += ["--certfile", tls.certificate.path, "--keyfile", tls.key.path] }
        let scheme = tls == nil ? "http" : "https"
        return try await FixtureProcess.withServer(script: FixtureScript.forwardProxy, arguments: arguments) { port in
            try await body(ProxyServer(port: port, base: "\(scheme)://127.0.0.1:\(port)"))
        }
    }
}
