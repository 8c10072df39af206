#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The origin of a URL (RFC 6454): its scheme, host and port, the one origin type of the library.
///
/// Resilience policies keep their state per origin: every call to `https://api.example.com/…` shares one
/// retry budget, one circuit breaker, one latency history and one concurrency limit, whatever its path;
/// `http://api.example.com` is another origin. A redirect to another origin drops the credentials, and an
/// unsafe method invalidates cached responses of its own origin only.
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
        self.port = port ?? Self.defaultPort(scheme) ?? 0
    }

    /// The origin of a URL.
    /// - Parameter url: An absolute URL.
    public init(_ url: URL) {
        self.init(scheme: url.scheme ?? "", host: url.host ?? "", port: url.port)
    }

    /// `scheme://host:port`, such as `https://api.example.com:443`.
    public var description: String { "\(scheme)://\(host):\(port)" }

    /// Whether two URLs have the same origin.
    package static func same(_ a: URL, _ b: URL) -> Bool { ServerOrigin(a) == ServerOrigin(b) }

    /// Whether a scheme is http or https, in any case.
    package static func isHTTP(_ scheme: String) -> Bool {
        HTTPHeaders.sameName(scheme, "http") || HTTPHeaders.sameName(scheme, "https")
    }

    /// The port a URL without one connects to; `nil` for schemes other than http(s).
    package static func defaultPort(_ scheme: String) -> Int? {
        if HTTPHeaders.sameName(scheme, "http") { return 80 }
        if HTTPHeaders.sameName(scheme, "https") { return 443 }
        return nil
    }
}
