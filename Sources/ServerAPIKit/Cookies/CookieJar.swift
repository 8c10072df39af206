#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The cookies of one storage, as a plain value: storing (replacement, deletion, caps) and selecting
/// the cookies for a request (RFC 6265 §5.3 and §5.4). `MemoryCookieStorage` and `FileCookieStorage`
/// keep one behind a lock.
public struct CookieJar: Sendable, Hashable, Codable {
    /// How many cookies a jar keeps.
    public struct Limits: Sendable, Hashable, Codable {
        /// The most cookies for one domain; storing one more evicts that domain's oldest.
        public var perDomain: Int
        /// The most cookies in all; storing one more evicts the oldest.
        public var total: Int

        /// Creates limits; the defaults are a browser's (50 per domain, 3000 in all).
        public init(perDomain: Int = 50, total: Int = 3000) {
            self.perDomain = max(1, perDomain)
            self.total = max(1, total)
        }
    }

    /// The cookies, oldest first.
    public private(set) var cookies: [Cookie] = []
    /// The most cookies kept per domain and in all; storing past them evicts the oldest.
    public var limits: Limits

    /// Creates an empty jar.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Stores a parsed cookie: it replaces the one with the same name, domain and path (keeping its
    /// creation time); an expired one only deletes. Expired cookies go first, then the caps evict the oldest.
    /// - Returns: Whether the jar changed.
    @discardableResult
    public mutating func store(_ cookie: Cookie, now: Date) -> Bool {
        var cookie = cookie
        var changed = false
        if let index = cookies.firstIndex(where: { $0.sameSlot(as: cookie) }) {
            cookie.created = cookies[index].created
            cookies.remove(at: index)
            changed = true
        }
        guard !cookie.isExpired(at: now) else { return changed }
        removeExpired(now: now)
        // Kept in creation order, so that the oldest are first.
        let position = cookies.firstIndex { $0.created > cookie.created } ?? cookies.endIndex
        cookies.insert(cookie, at: position)
        let domain = cookie.domain
        var inDomain = cookies.lazy.filter { $0.domain == domain }.count
        while inDomain > limits.perDomain, let oldest = cookies.firstIndex(where: { $0.domain == domain }) {
            cookies.remove(at: oldest)
            inDomain -= 1
        }
        if cookies.count > limits.total { cookies.removeFirst(cookies.count - limits.total) }
        return true
    }

    /// Parses and stores every `Set-Cookie` line of a response from `url`; malformed lines are ignored.
    /// - Returns: Whether the jar changed.
    @discardableResult
    public mutating func store(setCookieLines lines: [String], from url: URL, now: Date) -> Bool {
        var changed = false
        for line in lines {
            if let cookie = SetCookie.parse(line, from: url, now: now), store(cookie, now: now) { changed = true }
        }
        return changed
    }

    /// The cookies that go with a request to `url`, in `Cookie` header order: longer paths first, then
    /// earlier creation (§5.4).
    public func cookies(for url: URL, now: Date) -> [Cookie] {
        cookies.filter { $0.matches(url, at: now) }.sorted { a, b in
            a.path.count != b.path.count ? a.path.count > b.path.count : a.created < b.created
        }
    }

    /// Drops the expired cookies.
    /// - Returns: Whether any was dropped.
    @discardableResult
    public mutating func removeExpired(now: Date) -> Bool {
        let before = cookies.count
        cookies.removeAll { $0.isExpired(at: now) }
        return cookies.count != before
    }

    /// Drops every cookie.
    public mutating func removeAll() { cookies.removeAll() }

    /// The `Cookie` header value for cookies: `name=value` pairs joined with "; ".
    public static func header(for cookies: [Cookie]) -> String? {
        cookies.isEmpty ? nil : cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }
}
