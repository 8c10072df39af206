#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An HTTP(S) proxy a transport sends its requests through, or the choice to use the proxy the
/// environment names (`http_proxy`, `https_proxy`, `no_proxy`).
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
/// Requests to `http://` URLs are sent to the proxy in absolute form; `https://` URLs go through a
/// `CONNECT` tunnel, so the proxy never sees their content. An `https://` proxy is itself reached
/// over TLS.
///
/// - Important: Credentials are sent with Basic authentication (in clear text to an `http://` proxy)
///   and never appear in descriptions, logs or errors.
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
    ///   - url: `http://host:port` or `https://host:port` (the port defaults to 80 or 443). A user and
    ///     password in the URL become `credentials`.
    ///   - credentials: The user name and password for the proxy (Basic authentication).
    ///   - bypass: Hosts reached directly (see `bypass`).
    /// - Throws: `ServerAPIError` of kind `invalidRequest` when the URL is not an http(s) URL with a host.
    public init(_ url: URL, credentials: Credentials? = nil, bypass: [String] = []) throws(ServerAPIError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw ServerAPIError(
                .invalidRequest, "a proxy must be an http:// or https:// URL with a host, not \(Self.redacted(url))")
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
        components.port = url.port ?? (scheme == "https" ? 443 : 80)
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
    }

    /// Creates a proxy setting from the proxy's URL, as text.
    /// - Parameters:
    ///   - url: `http://host:port` or `https://host:port`; `host:port` alone means `http://`.
    ///   - credentials: The user name and password for the proxy.
    ///   - bypass: Hosts reached directly (see `bypass`).
    /// - Throws: `ServerAPIError` of kind `invalidRequest` when the text is not such a URL.
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

    /// The proxy's URL (`http://host:port`, without credentials); `nil` for `environment`.
    public var url: URL? {
        if case .server(let url) = source { return url }
        return nil
    }

    /// Whether the proxy comes from the environment.
    public var usesEnvironment: Bool { source == .environment }

    /// `http://proxy:3128` or `the environment's proxy`: never the credentials.
    public var description: String {
        switch source {
        case .server(let url): "\(url.absoluteString)" + (credentials == nil ? "" : " (with credentials)")
        case .environment: "the environment's proxy"
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
        guard url.user != nil || url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? "(the URL)"
    }
}
