#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a manager keeps cookies between calls (`ServerAPIManager.Configuration.cookies`).
///
/// The manager and the transports use it synchronously, from any thread: the `Cookie` header of each
/// request (the first and each redirect's) comes from `cookies(for:)`, and the `Set-Cookie` lines of each
/// response (redirects included) go to `store(setCookieLines:from:)`.
public protocol CookieStorage: Sendable {
    /// The cookies for a request to `url`, in `Cookie` header order (see `CookieJar.cookies(for:now:)`).
    func cookies(for url: URL) -> [Cookie]
    /// Parses and stores the `Set-Cookie` lines of a response from `url`.
    func store(setCookieLines lines: [String], from url: URL)
    /// Every cookie stored, expired ones left out.
    var allCookies: [Cookie] { get }
    /// Forgets every cookie.
    func removeAll()
}

extension CookieStorage {
    /// The `Cookie` header value for a request to `url`, or `nil` when no cookie applies.
    package func cookieHeader(for url: URL) -> String? {
        CookieJar.header(for: cookies(for: url))
    }

    /// Stores the `Set-Cookie` fields of a response's headers (each field may hold several lines joined
    /// with ", ", as FoundationNetworking joins them).
    package func store(responseHeaders headers: HTTPHeaders, from url: URL) {
        let fields = headers.values(for: "Set-Cookie")
        guard !fields.isEmpty else { return }
        store(setCookieLines: fields.flatMap(SetCookie.split), from: url)
    }
}

/// Cookies kept in memory for the storage's lifetime.
public final class MemoryCookieStorage: CookieStorage {
    private let jar: Locked<CookieJar>
    private let now: @Sendable () -> Date

    /// Creates an empty storage whose cookies end with it (nothing is written to disk).
    /// - Parameters:
    ///   - limits: The caps per domain and in all.
    ///   - now: The current time, for expiry; tests pass one they control.
    public init(limits: CookieJar.Limits = .init(), now: @escaping @Sendable () -> Date = { Date() }) {
        jar = Locked(CookieJar(limits: limits))
        self.now = now
    }

    public func cookies(for url: URL) -> [Cookie] {
        let now = now()
        return jar.withLock { $0.cookies(for: url, now: now) }
    }

    public func store(setCookieLines lines: [String], from url: URL) {
        let now = now()
        jar.withLock { _ = $0.store(setCookieLines: lines, from: url, now: now) }
    }

    /// Stores a cookie as it is (no parsing, no domain check).
    public func store(_ cookie: Cookie) {
        let now = now()
        jar.withLock { _ = $0.store(cookie, now: now) }
    }

    public var allCookies: [Cookie] {
        let now = now()
        return jar.withLock { $0.cookies.filter { !$0.isExpired(at: now) } }
    }

    public func removeAll() { jar.withLock { $0.removeAll() } }
}
