import Foundation

/// The fixture scripts that tests launch themselves, one process per test (the shared httpbin and
/// fault fixture servers are started by `scripts/test-server.sh` instead: see `TestServers`).
public enum FixtureScript {
    /// `Tests/`, found from this file's path.
    private static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// `Tests/ServerAPICurlTests/Fixtures/curl_test_server.py`: an HTTP(S) server with routes for the
    /// transports' edge cases; see `CurlTestServer`.
    public static let curlTestServer = tests.appendingPathComponent("ServerAPICurlTests/Fixtures/curl_test_server.py")

    /// `Tests/ServerAPICurlTests/Fixtures/make_test_certificates.sh`: makes a throw-away CA and the
    /// certificates, keys and pins the TLS tests use; see `TestCertificates`.
    public static let makeTestCertificates = tests.appendingPathComponent(
        "ServerAPICurlTests/Fixtures/make_test_certificates.sh")

    /// `Tests/Fixtures/forward_proxy.py`: a forward HTTP proxy with CONNECT tunnels and statistics.
    public static let forwardProxy = tests.appendingPathComponent("Fixtures/forward_proxy.py")

    /// `Tests/Fixtures/socks_refusal.py`: a SOCKS5 server that refuses every login, or answers every
    /// `CONNECT` with a given reply code, as RFC 1928 and RFC 1929 say.
    public static let socksRefusal = tests.appendingPathComponent("Fixtures/socks_refusal.py")
}
