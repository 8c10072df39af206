import Foundation

/// The local test servers that scripts/test-server.sh starts: httpbin and the fault fixture.
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
