/// A user name and password that the transport answers an authentication challenge with, for schemes
/// that cannot be sent as a plain `Authorization` header (Basic and Bearer can: see
/// `ServerAPI.basicAuth(user:password:)` and `ServerAPI.bearerAuth(_:)`).
///
/// A transport that cannot answer the scheme refuses the call with `invalidRequest` rather than sending it
/// without credentials. Credentials follow a redirect to the same origin only (see `RedirectRule`).
public struct HTTPCredentials: Sendable, Hashable, CustomStringConvertible {
    /// A challenge-response scheme.
    public struct Scheme: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// HTTP Digest (RFC 7616): the transport answers the server's `401` challenge.
        public static let digest = Scheme(rawValue: "digest")
    }

    /// The challenge scheme these credentials answer (only `.digest` today).
    public var scheme: Scheme
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Creates credentials.
    public init(_ scheme: Scheme, user: String, password: String) {
        self.scheme = scheme
        self.user = user
        self.password = password
    }

    /// Digest credentials.
    public static func digest(user: String, password: String) -> HTTPCredentials {
        HTTPCredentials(.digest, user: user, password: password)
    }

    /// The scheme and the user, never the password: safe to log.
    public var description: String { "\(scheme.rawValue) \(user):<redacted>" }
}
