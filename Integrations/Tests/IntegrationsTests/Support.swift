import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPIURLSession
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The transports the integration tests run on.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case curl
    case urlsession

    var testDescription: String { rawValue }

    /// A manager on this backend.
    func manager(plugins: [any ServerAPIPlugin] = []) -> ServerAPIManager {
        switch self {
        case .curl: ServerAPIManager(transport: CurlTransport(), plugins: plugins)
        case .urlsession: ServerAPIManager(transport: URLSessionTransport(), plugins: plugins)
        }
    }
}

/// The local test servers that scripts/test-server.sh starts; the tests fail (never skip) without them.
enum TestServers {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// httpbin's base URL, from `SAPI_HTTPBIN_URL` (scripts/test.sh exports it).
    static func httpbin() throws -> URL {
        guard let value = ProcessInfo.processInfo.environment["SAPI_HTTPBIN_URL"], !value.isEmpty,
            let url = URL(string: value)
        else {
            throw Missing(
                description: "SAPI_HTTPBIN_URL is not set: httpbin is not running. Run scripts/test.sh, or "
                    + "scripts/test-server.sh start; eval \"$(scripts/test-server.sh env)\"; "
                    + "swift test --package-path Integrations")
        }
        return url
    }

    /// A URL on httpbin.
    static func httpbin(_ path: String) throws -> URL {
        let base = try httpbin().absoluteString
        return try #require(URL(string: (base.hasSuffix("/") ? String(base.dropLast()) : base) + path))
    }
}

/// Waits until `condition` holds, checking every 10 ms for at most `seconds`.
/// - Returns: Whether it held in time.
func poll(within seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// A loopback URL on which nothing listens.
func unusedLoopbackURL() throws -> URL {
    // Nothing listens on port 1 of the loopback address (a privileged port): connecting is refused.
    try #require(URL(string: "http://127.0.0.1:1"))
}
