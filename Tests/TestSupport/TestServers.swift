import Foundation

/// The local test servers that scripts/test-server.sh starts: httpbin, the fault fixture, the HTTP/2 front,
/// the HTTP/3 peer and the SOCKS proxies.
///
/// Integration tests fail (they never skip) when the servers are not there: run them with
/// `scripts/test.sh`, which starts the servers and exports their URLs.
public enum TestServers {
    /// httpbin's base URL, from `SAPI_HTTPBIN_URL`, without a trailing slash.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func httpbin() throws -> String { try url("SAPI_HTTPBIN_URL", "httpbin") }

    /// The fault fixture server's base URL, from `SAPI_FIXTURE_URL`, without a trailing slash.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func fixture() throws -> String { try url("SAPI_FIXTURE_URL", "the fault fixture server") }

    /// A URL on httpbin.
    /// - Parameter path: The path and query, starting with `/`.
    /// - Throws: `MissingServer` when httpbin is not running.
    public static func httpbin(_ path: String) throws -> URL { try make(httpbin(), path) }

    /// A URL on the fault fixture server.
    /// - Parameter path: The path and query, starting with `/`.
    /// - Throws: `MissingServer` when the fixture server is not running.
    public static func fixture(_ path: String) throws -> URL { try make(fixture(), path) }

    /// The Unix-domain socket httpbin also listens on, from `SAPI_HTTPBIN_SOCKET`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func httpbinSocket() throws -> String {
        guard let value = ProcessInfo.processInfo.environment["SAPI_HTTPBIN_SOCKET"], !value.isEmpty else {
            throw MissingServer(
                description: "SAPI_HTTPBIN_SOCKET is not set: httpbin's Unix socket is not there. Restart the "
                    + "servers with scripts/test-server.sh start; eval \"$(scripts/test-server.sh env)\".")
        }
        return value
    }

    /// The HTTP/2 front's base URL for httpbin (nginx over TLS, proxying), from `SAPI_HTTPBIN_H2_URL`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func httpbinH2() throws -> String { try url("SAPI_HTTPBIN_H2_URL", "the HTTP/2 front (nginx)") }

    /// The HTTP/2 front's base URL for the fault fixture, from `SAPI_FIXTURE_H2_URL`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func fixtureH2() throws -> String { try url("SAPI_FIXTURE_H2_URL", "the HTTP/2 front (nginx)") }

    /// The HTTP/2 front's listener that allows at most 8 concurrent streams per connection (proxying to
    /// the fault fixture), from `SAPI_H2_LIMITED_URL`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func h2Limited() throws -> String { try url("SAPI_H2_LIMITED_URL", "the HTTP/2 front (nginx)") }

    /// The CA that signed the HTTP/2 front's certificate (a PEM file), from `SAPI_H2_CA_FILE`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func h2CAFile() throws -> URL {
        URL(fileURLWithPath: try url("SAPI_H2_CA_FILE", "the HTTP/2 front (nginx)"))
    }

    /// The HTTP/3 front's base URL for httpbin (the HTTP/3 peer relaying to it over HTTP/1.1), trusted through
    /// `h2CAFile()`, from `SAPI_HTTPBIN_H3_URL`: `https://127.0.0.1:PORT` on a UDP port.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func httpbinH3() throws -> String { try url("SAPI_HTTPBIN_H3_URL", "the HTTP/3 front (aioquic)") }

    /// The HTTP/3 front's base URL for the fault fixture, from `SAPI_FIXTURE_H3_URL`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func fixtureH3() throws -> String { try url("SAPI_FIXTURE_H3_URL", "the HTTP/3 front (aioquic)") }

    /// The HTTP/3 peer (Tests/Fixtures/h3_server.py, aioquic) over QUIC, trusted through `h2CAFile()`, from
    /// `SAPI_H3_URL`: `https://127.0.0.1:PORT` on a UDP port.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func h3() throws -> String { try url("SAPI_H3_URL", "the HTTP/3 peer (aioquic)") }

    /// The HTTP/3 peer's HTTPS/1.1 origin over TCP, whose answers announce the QUIC port in `Alt-Svc`, from
    /// `SAPI_H3_ALTSVC_URL`. Nothing listens on UDP at its port.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func h3AltSvc() throws -> String { try url("SAPI_H3_ALTSVC_URL", "the HTTP/3 peer (aioquic)") }

    /// The SOCKS proxy without authentication (pproxy; SOCKS5 and SOCKS4), from `SAPI_SOCKS5_URL`:
    /// `socks5://127.0.0.1:PORT`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func socks5() throws -> String { try url("SAPI_SOCKS5_URL", "the SOCKS proxy (pproxy)") }

    /// The SOCKS5 proxy that needs a user name and password, from `SAPI_SOCKS5_AUTH_URL`:
    /// `socks5://USER:PASSWORD@127.0.0.1:PORT`, with the credentials it accepts.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func socks5Auth() throws -> String {
        try url("SAPI_SOCKS5_AUTH_URL", "the SOCKS proxy with authentication (pproxy)")
    }

    /// The address the SOCKS proxy without authentication connects to servers from (httpbin's `origin`
    /// for a request through it), from `SAPI_SOCKS5_SOURCE`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func socks5Source() throws -> String { try url("SAPI_SOCKS5_SOURCE", "the SOCKS proxy (pproxy)") }

    /// The address the SOCKS proxy with authentication connects to servers from, from
    /// `SAPI_SOCKS5_AUTH_SOURCE`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func socks5AuthSource() throws -> String {
        try url("SAPI_SOCKS5_AUTH_SOURCE", "the SOCKS proxy with authentication (pproxy)")
    }

    /// The WebSocket peer's base URL (Tests/Fixtures/ws_server.py), from `SAPI_WS_URL`: `ws://127.0.0.1:PORT`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func webSocket() throws -> String { try url("SAPI_WS_URL", "the WebSocket peer") }

    /// The WebSocket peer over TLS (its certificate signed by the CA in `SAPI_H2_CA_FILE`), from `SAPI_WSS_URL`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func webSocketSecure() throws -> String { try url("SAPI_WSS_URL", "the WebSocket peer (TLS)") }

    /// The WebSocket peer with permessage-deflate (it accepts the client's offer and compresses every message), from
    /// `SAPI_WS_DEFLATE_URL`.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func webSocketDeflate() throws -> String {
        try url("SAPI_WS_DEFLATE_URL", "the WebSocket peer (permessage-deflate)")
    }

    /// The folder of a libcurl with WebSockets (bookworm-backports' 8.14, unpacked by scripts/libcurl-backports.sh),
    /// from `SAPI_LIBCURL_WS_DIR`: a process started with it as `LD_LIBRARY_PATH` loads that libcurl instead of
    /// the system's (Debian 12's 7.88), for the runs on bookworm-backports' 8.14.
    /// - Throws: `MissingServer` when the variable is not set.
    public static func webSocketLibcurlDirectory() throws -> String {
        try url("SAPI_LIBCURL_WS_DIR", "a libcurl with WebSockets (scripts/libcurl-backports.sh)")
    }

    /// A URL made of a base URL (as these accessors give it) and a path.
    /// - Parameters:
    ///   - base: The base URL, without a trailing slash.
    ///   - path: The path and query, starting with `/`.
    /// - Throws: `MissingServer` when the URL cannot be made.
    public static func url(base: String, _ path: String) throws -> URL { try make(base, path) }

    private static func url(_ variable: String, _ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            throw MissingServer(
                description: "\(variable) is not set: \(name) is not running. Run the tests with scripts/test.sh, "
                    + "which starts the local test servers (or: scripts/test-server.sh start; "
                    + "eval \"$(scripts/test-server.sh env)\"; swift test).")
        }
        return value.hasSuffix("/") ? String(value.dropLast()) : value
    }

    private static func make(_ base: String, _ path: String) throws -> URL {
        guard let url = URL(string: base + path) else { throw MissingServer(description: "bad URL \(base + path)") }
        return url
    }

    /// A local test server that is not running, or a URL that cannot be made.
    public struct MissingServer: Error, CustomStringConvertible {
        /// What is missing and how to start it.
        public var description: String
    }
}
