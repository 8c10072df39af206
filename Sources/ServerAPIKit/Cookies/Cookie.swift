#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One stored cookie (RFC 6265 §5.3): what a `Set-Cookie` line set, resolved against the URL it came from.
public struct Cookie: Sendable, Hashable, Codable {
    /// What a cookie's `SameSite` attribute said; recorded, not enforced (a client has no "site" of its own).
    public enum SameSite: String, Sendable, Hashable, Codable {
        /// `SameSite=Strict`.
        case strict
        /// `SameSite=Lax`.
        case lax
        /// `SameSite=None`.
        case none
    }

    /// The cookie's name, as the server sent it (case-sensitive).
    public var name: String
    /// The value, as the server sent it.
    public var value: String
    /// The domain, lower-case, without a leading dot: the host itself when `hostOnly`.
    public var domain: String
    /// Whether the cookie goes to `domain` only (no `Domain` attribute), not to its subdomains.
    public var hostOnly: Bool
    /// The path the cookie applies to, and below.
    public var path: String
    /// Whether the cookie is sent over https only.
    public var secure: Bool
    /// Whether the server marked it `HttpOnly` (recorded: every use here is HTTP).
    public var httpOnly: Bool
    /// When it expires; `nil` for a session cookie (kept for the storage's lifetime).
    public var expires: Date?
    /// The `SameSite` attribute, if any.
    public var sameSite: SameSite?
    /// When it was first stored; a replacement keeps the original's.
    public var created: Date

    /// Creates a cookie; `SetCookie` parses them from responses, tests and imports make their own.
    public init(
        name: String, value: String, domain: String, hostOnly: Bool = true, path: String = "/",
        secure: Bool = false, httpOnly: Bool = false, expires: Date? = nil, sameSite: SameSite? = nil,
        created: Date = Date()
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.secure = secure
        self.httpOnly = httpOnly
        self.expires = expires
        self.sameSite = sameSite
        self.created = created
    }

    /// Whether the cookie has expired at `now`.
    public func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// What makes the cookie unfit to store and send, or `nil`: the checks `SetCookie.parse` makes, for
    /// cookies read from a file (a jar file, a session file is input from outside, like a response).
    package var defect: String? {
        if name.isEmpty { return "its name is empty" }
        if name.contains("=") { return "its name contains \"=\"" }
        if !SetCookie.isCookieText(name) || !SetCookie.isCookieText(value) {
            return "its name or value contains a control character, \";\" or U+FFFD"
        }
        if domain.isEmpty || !SetCookie.isASCIICookieText(domain) { return "its domain is empty or not ASCII" }
        if !path.hasPrefix("/") || !SetCookie.isASCIICookieText(path) {
            return "its path does not start with \"/\" or is not ASCII"
        }
        return nil
    }

    /// Whether two cookies are the same slot in a jar (name, domain, path): the later replaces the earlier.
    package func sameSlot(as other: Cookie) -> Bool {
        name == other.name && domain == other.domain && path == other.path
    }

    /// Whether the cookie goes with a request to `url` (RFC 6265 §5.4): the host domain-matches (exactly
    /// for a host-only cookie), the path path-matches, a `Secure` cookie only over https, and not expired.
    public func matches(_ url: URL, at now: Date) -> Bool {
        guard !isExpired(at: now), let host = CookieRules.canonicalHost(of: url) else { return false }
        if hostOnly {
            guard host == domain else { return false }
        } else {
            guard CookieRules.domainMatches(host, domain) else { return false }
        }
        if secure, url.scheme?.lowercased() != "https" { return false }
        return CookieRules.pathMatches(CookieRules.requestPath(of: url), path)
    }
}
