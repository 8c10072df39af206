import Foundation

/// A running `curl_test_server.py` (see `FixtureScript.curlTestServer` and the routes listed at the top of
/// the script): one per test, on a free loopback port, so a test can count and break its connections.
public struct CurlTestServer: Sendable {
    /// The port it listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT` (or https).
    public let base: String

    /// A URL on this server.
    public func url(_ path: String) -> URL { URL(string: base + path)! }

    /// A URL on this server, addressed by another host name (`localhost`): another origin.
    public func otherHostURL(_ path: String) -> URL {
        URL(string: base.replacingOccurrences(of: "127.0.0.1", with: "localhost") + path)!
    }

    /// Runs `body` with a fresh server, which is stopped afterwards whatever happens.
    /// - Parameters:
    ///   - host: The address it listens on: `127.0.0.1`, or `::1` for the IPv6 loopback.
    ///   - tls: The server's certificate and key, for HTTPS.
    ///   - clientCA: With `tls`: the CA that client certificates must be signed by; the server then
    ///     requires one.
    ///   - onlyTLS11: With `tls`: the server offers TLS 1.1 alone, with a static-RSA suite (an old device).
    ///   - resetAfterHandshake: With `tls`: the server resets each connection once the handshake is done and the
    ///     request arrived, with no answer (as a server that drops a client whose certificate it rejects).
    ///   - body: Work that gets the running server.
    /// - Returns: What `body` returns.
    /// - Throws: `FixtureProcess.Failure` when the server did not start, or what `body` throws.
    public static func with<T>(
        host: String = "127.0.0.1", tls: (certificate: URL, key: URL)? = nil, clientCA: URL? = nil,
        onlyTLS11: Bool = false, resetAfterHandshake: Bool = false, _ body: (CurlTestServer) async throws -> T
    ) async throws -> T {
        var arguments = ["--host", host]
        if let tls { arguments += ["--certfile", tls.certificate.path, "--keyfile", tls.key.path] }
        if let clientCA { arguments += ["--client-ca", clientCA.path] }
        if onlyTLS11 { arguments.append("--only-tls-1-1") }
        if resetAfterHandshake { arguments.append("--reset-after-handshake") }
        let scheme = tls == nil ? "http" : "https"
        return try await FixtureProcess.withServer(script: FixtureScript.curlTestServer, arguments: arguments) { port in
            let address = host.contains(":") ? "[\(host)]" : host
            return try await body(CurlTestServer(port: port, base: "\(scheme)://\(address):\(port)"))
        }
    }
}
