#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where resilience policies keep their state: a URL's scheme, host and port (RFC 6454's origin).
///
/// Every call to `https://api.example.com/…` shares one retry budget, one circuit breaker, one latency
/// history and one concurrency limit, whatever its path; `http://api.example.com` is another origin.
public struct ServerOrigin: Sendable, Hashable, CustomStringConvertible {
    /// The scheme, lower-cased: `http` or `https` (or another scheme a transport serves).
    public var scheme: String
    /// The host, lower-cased.
    public var host: String
    /// The port: the URL's, else the scheme's default (80, 443); 0 for schemes without one.
    public var port: Int

    /// Creates an origin: the scheme, host and port that per-origin policies are kept for.
    /// - Parameters:
    ///   - scheme: The scheme; compared without case.
    ///   - host: The host; compared without case.
    ///   - port: The port; `nil` for the scheme's default.
    public init(scheme: String, host: String, port: Int? = nil) {
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.port = port ?? Origin.defaultPort(scheme) ?? 0
    }

    /// The origin of a URL.
    /// - Parameter url: An absolute URL.
    public init(_ url: URL) {
        self.init(scheme: url.scheme ?? "", host: url.host ?? "", port: url.port)
    }

    /// `scheme://host:port`, such as `https://api.example.com:443`.
    public var description: String { "\(scheme)://\(host):\(port)" }
}
