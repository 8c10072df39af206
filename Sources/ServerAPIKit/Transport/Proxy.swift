#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An HTTP(S) or SOCKS proxy a transport sends its requests through, or the choice to use the proxy the
/// environment names (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`).
///
/// Transports connect directly by default (their `proxy` is `nil`): they ignore proxy environment
/// variables unless they are given `Proxy.environment`.
///
/// ```swift
/// let proxy = try Proxy(
///     "http://proxy.internal:3128", credentials: .init(user: "build", password: secret),
///     bypass: ["localhost", "127.0.0.1", ".internal"])
/// let transport = CurlTransport(configuration: .init(proxy: proxy))
/// ```
///
/// The proxy URL's scheme says how the transport talks to it:
///
/// | scheme | proxy | who resolves the server's host name | credentials |
/// |---|---|---|---|
/// | `http://` (port 80) | HTTP proxy | the proxy | user and password (Basic) |
/// | `https://` (port 443) | HTTP proxy reached over TLS | the proxy | user and password (Basic) |
/// | `socks5h://` (port 1080) | SOCKS5 | the proxy | user and password (RFC 1929) |
/// | `socks5://` (port 1080) | SOCKS5 | this machine; the proxy gets the address | user and password (RFC 1929) |
/// | `socks4a://` (port 1080) | SOCKS4a | the proxy | a user name only |
/// | `socks4://` (port 1080) | SOCKS4 | this machine (IPv4 addresses only) | a user name only |
///
/// Through an HTTP proxy, requests to `http://` URLs are sent to the proxy in absolute form and `https://`
/// URLs go through a `CONNECT` tunnel, so the proxy never sees their content. Through a SOCKS proxy, the
/// proxy opens a TCP connection to the server and the request travels over it unchanged: TLS to an
/// `https://` server runs end to end, with no `CONNECT`. Prefer `socks5h://` when the server's name is
/// known only to the proxy's network, or when the names you look up should not leave it.
///
/// - Important: Credentials are sent in clear text to an `http://` or SOCKS proxy (Basic authentication,
///   or SOCKS5's user name and password), and never appear in descriptions, logs or errors. SOCKS4 has
///   no password: a SOCKS4 proxy given one is refused with `invalidRequest` rather than the password
///   being dropped without a word.
public struct Proxy: Sendable, Hashable, CustomStringConvertible {
    /// A proxy user name and password.
    public struct Credentials: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// The user name.
        public var user: String
        /// The password; the type's mirror prints it as `<redacted>`.
        public var password: String

        /// Creates the credentials sent to the proxy (`Proxy-Authorization`), never to the origin.
        /// - Parameters:
        ///   - user: The user name.
        ///   - password: The password.
        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }

        /// The user name only: the password is never printed.
        public var description: String { "\(user):<redacted>" }

        /// Keeps the password out of `dump` and debug descriptions.
        public var customMirror: Mirror { Mirror(self, children: ["user": user, "password": "<redacted>"]) }
    }

    /// Where the proxy comes from.
    enum Source: Hashable {
        case server(URL)
        case environment
    }

    let source: Source
    /// The credentials sent to the proxy, if any.
    public var credentials: Credentials?
    /// Hosts reached directly, in `no_proxy` form: a host name or IP address, a domain (`example.com`
    /// and `.example.com` both match `example.com` and its subdomains), or `*` for every host.
    public var bypass: [String]

    /// Creates a proxy setting from the proxy's URL.
    /// - Parameters:
    ///   - url: `http://host:port`, `https://host:port`, `socks5h://host:port`, `socks5://host:port`,
    ///     `socks4a://host:port` or `socks4://host:port` (the port defaults to 80, 443, or 1080 for SOCKS;
    ///     the table above says what each scheme means). A user and password in the URL become `credentials`.
    ///   - credentials: The user name and password for the proxy (Basic authentication for an HTTP proxy,
    ///     RFC 1929 for SOCKS5, the user name alone for SOCKS4).
    ///   - bypass: Hosts reached directly (see `bypass`).
    /// - Throws: `ServerAPIError` of kind `invalidRequest` when the URL is not such a URL with a host, when
    ///   a `socks4://` or `socks4a://` proxy is given a password, or when a SOCKS5 user name or password is
    ///   longer than the protocol's 255 bytes. The message never contains the password.
    public init(_ url: URL, credentials: Credentials? = nil, bypass: [String] = []) throws(ServerAPIError) {
        guard let scheme = url.scheme?.lowercased(), let defaultPort = Self.defaultPorts[scheme],
            let host = url.host, !host.isEmpty
        else {
            throw ServerAPIError(
                .invalidRequest,
                "a proxy must be an http://, https://, socks5h://, socks5://, socks4a:// or socks4:// URL with a "
                    + "host, not \(Self.redacted(url))")
        }
        // Only scheme, host and port are kept: the credentials move to `credentials`, out of the URL.
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw ServerAPIError(.invalidRequest, "the proxy URL \(Self.redacted(url)) is not valid")
        }
        components.user = nil
        components.password = nil
        components.path = ""
        components.query = nil
        components.fragment = nil
        components.scheme = scheme
        components.port = url.port ?? defaultPort
        guard let clean = components.url else {
            throw ServerAPIError(.invalidRequest, "the proxy URL \(Self.redacted(url)) is not valid")
        }
        var credentials = credentials
        if credentials == nil, let user = url.user(percentEncoded: false), !user.isEmpty {
            credentials = Credentials(user: user, password: url.password(percentEncoded: false) ?? "")
        }
        self.source = .server(clean)
        self.credentials = credentials
        self.bypass = bypass
        try checkCredentials()
    }

    /// Creates a proxy setting from the proxy's URL, as text.
    /// - Parameters:
    ///   - url: `http://host:port`, `https://host:port`, `socks5h://host:port`, `socks5://host:port`,
    ///     `socks4a://host:port` or `socks4://host:port`; `host:port` alone means `http://`.
    ///   - credentials: The user name and password for the proxy.
    ///   - bypass: Hosts reached directly (see `bypass`).
    /// - Throws: `ServerAPIError` of kind `invalidRequest` when the text is not such a URL, or when the
    ///   credentials do not fit the scheme (see `init(_:credentials:bypass:)` with a `URL`).
    public init(_ url: String, credentials: Credentials? = nil, bypass: [String] = []) throws(ServerAPIError) {
        let text = url.contains("://") ? url : "http://" + url
        guard let parsed = URL(string: text) else {
            throw ServerAPIError(.invalidRequest, "the proxy \"\(text)\" is not a valid URL")
        }
        try self.init(parsed, credentials: credentials, bypass: bypass)
    }

    private init(source: Source) {
        self.source = source
        self.credentials = nil
        self.bypass = []
    }

    /// The proxy the environment names: `http_proxy` for `http://` URLs, `https_proxy` for
    /// `https://` URLs (either falls back to `all_proxy`), bypassed for the hosts in `no_proxy`;
    /// directly when none is set. Credentials come from the variables' URLs.
    ///
    /// - Important: Only `CurlTransport` can honour this; `URLSessionTransport` refuses it.
    public static var environment: Proxy { Proxy(source: .environment) }

    /// The proxy's URL (`http://host:port`, `socks5h://host:port`, …, without credentials); `nil` for
    /// `environment`.
    public var url: URL? {
        if case .server(let url) = source { return url }
        return nil
    }

    /// Whether the proxy comes from the environment.
    public var usesEnvironment: Bool { source == .environment }

    /// `http://proxy:3128`, `socks5h://proxy:1080 (with credentials)` or `the environment's proxy`: never
    /// the credentials.
    public var description: String {
        switch source {
        case .server(let url): "\(url.absoluteString)" + (credentials == nil ? "" : " (with credentials)")
        case .environment: "the environment's proxy"
        }
    }

    /// Whether the proxy is a SOCKS proxy (`socks4://`, `socks4a://`, `socks5://`, `socks5h://`).
    package var isSOCKS: Bool {
        guard let scheme = url?.scheme else { return false }
        return Self.socksSchemes.contains(scheme)
    }

    /// The default port of each scheme a proxy URL may have.
    private static let defaultPorts = [
        "http": 80, "https": 443, "socks4": 1080, "socks4a": 1080, "socks5": 1080, "socks5h": 1080,
    ]
    private static let socksSchemes: Set<String> = ["socks4", "socks4a", "socks5", "socks5h"]

    /// Refuses credentials the proxy's protocol cannot carry: a SOCKS4 password (SOCKS4 sends a user
    /// name only), and a SOCKS5 user name or password over RFC 1929's 255 bytes.
    /// - Throws: `ServerAPIError` of kind `invalidRequest`, naming the proxy without its credentials.
    package func checkCredentials() throws(ServerAPIError) {
        guard let credentials, let url, let scheme = url.scheme else { return }
        switch scheme {
        case "socks4", "socks4a":
            guard credentials.password.isEmpty else {
                throw ServerAPIError(
                    .invalidRequest,
                    "the \(scheme) proxy \(url.absoluteString) was given a password, which SOCKS4 cannot send (it "
                        + "carries a user name only): leave the password out, or use socks5:// or socks5h:// for a "
                        + "user name and password")
            }
        case "socks5", "socks5h":
            guard credentials.user.utf8.count <= 255, credentials.password.utf8.count <= 255 else {
                throw ServerAPIError(
                    .invalidRequest,
                    "the SOCKS5 proxy \(url.absoluteString) cannot take a user name or password longer than 255 "
                        + "bytes (RFC 1929)")
            }
        default:
            return
        }
    }

    /// Whether a request to `host` skips the proxy, by the `no_proxy` rules of `bypass`.
    /// - Parameter host: The request's host name or address.
    /// - Returns: `true` when the request goes directly.
    public func bypasses(_ host: String) -> Bool {
        Self.matches(host, bypass)
    }

    /// `no_proxy` matching: `*`, an exact host, or a domain and its subdomains (a leading dot is optional).
    static func matches(_ host: String, _ list: [String]) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        for entry in list {
            var pattern = HTTPSyntax.trimmed(entry).lowercased()
            if pattern == "*" { return true }
            while pattern.hasPrefix(".") { pattern.removeFirst() }
            if pattern.hasPrefix("["), pattern.hasSuffix("]") { pattern = String(pattern.dropFirst().dropLast()) }
            guard !pattern.isEmpty else { continue }
            if name == pattern || name.hasSuffix("." + pattern) { return true }
        }
        return false
    }

    private static func redacted(_ url: URL) -> String {
        guard url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? "(the URL)"
    }
}
