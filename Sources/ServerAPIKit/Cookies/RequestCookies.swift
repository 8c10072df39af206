#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The cookie storage a request carries, so that every hop of a call (the first request and each redirect
/// a transport follows) gets its `Cookie` header from the jar, and each response's `Set-Cookie` goes back
/// into it. The manager attaches it (`ServerAPIManager.Configuration.cookies`); `RedirectRule` and
/// `ExchangeStateMachine` apply it at each redirect, the same way for every transport.
package struct RequestCookies: Sendable {
    /// The storage the call's cookies come from and its `Set-Cookie` headers go to.
    package var storage: any CookieStorage
    /// The `Cookie` header the caller set itself: sent with the jar's cookies to the call's origin, and
    /// dropped once a redirect leaves it (see `RedirectRule.crossOriginHeaders`).
    package var callerHeader: String?

    /// Creates the cookie hook of one call; the manager makes it from its configuration's `cookies`.
    package init(storage: any CookieStorage, callerHeader: String? = nil) {
        self.storage = storage
        self.callerHeader = callerHeader
    }

    /// Sets `request`'s `Cookie` header: the caller's own, then the jar's cookies for its URL.
    package func apply(to request: inout TransportRequest) {
        let jar = storage.cookieHeader(for: request.url)
        let parts = [callerHeader, jar].compactMap { $0 }.filter { !$0.isEmpty }
        if parts.isEmpty {
            if request.headers.contains("Cookie") { request.headers.remove(name: "Cookie") }
        } else {
            request.headers.replaceOrAdd(name: "Cookie", value: parts.joined(separator: "; "))
        }
    }
}

extension TransportRequest {
    /// Attaches a cookie storage: the request's current `Cookie` header becomes the caller's own, and the
    /// jar's cookies for its URL are added to it.
    package mutating func attachCookies(_ storage: any CookieStorage) {
        let hook = RequestCookies(storage: storage, callerHeader: headers["Cookie"])
        cookies = hook
        hook.apply(to: &self)
    }
}
