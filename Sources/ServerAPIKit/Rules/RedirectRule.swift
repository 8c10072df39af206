#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The redirect rule every transport follows, so that a call is redirected the same way whichever
/// transport sends it: which statuses redirect, what the next request is, and which headers stay behind.
///
/// A transport asks `decide` once per final response head (not for 1xx heads) and acts on the answer;
/// it never follows a redirect on its own. The rewrite is the one browsers and Fetch apply:
///
/// - 301, 302, 303, 307 and 308 with a `Location` redirect; any other status is delivered.
/// - 303 becomes a GET (a HEAD stays a HEAD); 301 and 302 turn a POST into a GET; 307 and 308, and
///   301/302 of any other method, keep the method and the body.
/// - Becoming a GET drops the body and the headers that describe it (`bodyHeaders`).
/// - A redirect to another origin (scheme, host or port, with 80 and 443 as default ports) drops the
///   credentials and the caller's `Host` in `crossOriginHeaders`, and the request's `credentials`; the
///   transport then names the new host itself.
///
/// The articles' "Which headers cross a redirect" table lists the outcome header by header, and the tests
/// check its rows against this rule.
package enum RedirectRule {
    /// The headers that are never sent to another origin than the one they were given for: the credentials,
    /// and a `Host` the caller set (it names the first origin: sent to another server it would ask that
    /// server for the wrong site, as curl knows by dropping it).
    package static let crossOriginHeaders = ["Authorization", "Cookie", "Proxy-Authorization", "Host"]

    /// The headers that describe a request body; they go when a redirect turns the request into a GET.
    package static let bodyHeaders = [
        "Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding", "Content-Language",
        "Content-Location",
    ]

    /// Whether a status redirects when the response has a `Location`.
    /// - Parameter status: The response's status.
    /// - Returns: `true` for 301, 302, 303, 307 and 308.
    @inlinable
    package static func redirects(status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// Decides what to do with a final response head.
    /// - Parameters:
    ///   - request: The request the response answers (the caller's, or the previous redirect's).
    ///   - status: The response's status.
    ///   - location: The response's `Location` header, as the server sent it; `nil` when it has none.
    ///   - followed: How many redirects the call has followed before this response.
    /// - Returns: `.deliver` for anything that is not a redirect to follow, `.follow` with the next request,
    ///   or `.fail` with `tooManyRedirects` (one more than `request.redirects` allows) or `network`
    ///   (the target is not an http(s) URL).
    package static func decide(
        _ request: TransportRequest, status: Int, location: String?, followed: Int
    ) -> RedirectDecision {
        // The common case first, without touching the headers: not a redirect, or redirects are off.
        guard redirects(status: status), case .follow(let max) = request.redirects, let location else {
            return .deliver
        }
        let trimmed = HTTPSyntax.trimmed(location)
        // An empty Location names no target: the 3xx is all there is.
        guard !trimmed.isEmpty else { return .deliver }
        guard followed < max else { return .fail(.tooManyRedirects(max: max, status: status)) }
        guard let target = resolve(String(trimmed), against: request.url) else {
            return .fail(.redirectNotHTTP(to: location, status: status))
        }
        return .follow(redirected(request, to: target, status: status))
    }

    /// The URL a `Location` names, resolved against the URL of the request it answers (RFC 3986 §5).
    /// - Parameters:
    ///   - location: The `Location` value: absolute, scheme-relative (`//host/path`), or relative.
    ///   - base: The URL of the request that was redirected.
    /// - Returns: The absolute target, or `nil` when it is not an http(s) URL with a host.
    package static func resolve(_ location: String, against base: URL) -> URL? {
        // Foundation resolves dot segments; spaces and non-ASCII bytes are escaped first, as libcurl does, with
        // the location's own escapes kept (`PercentEncoding.encodeURL`).
        guard let target = URL(string: PercentEncoding.encodeURL(location), relativeTo: base)?.absoluteURL,
            let scheme = target.scheme, ServerOrigin.isHTTP(scheme),
            let host = target.host, !host.isEmpty
        else { return nil }
        return target
    }

    /// Whether two URLs have the same origin: scheme and host (ASCII case-insensitive) and port
    /// (80 for http and 443 for https when the URL names none).
    /// - Parameters:
    ///   - a: One URL.
    ///   - b: The other.
    /// - Returns: `true` when credentials given for `a` may be sent to `b`.
    package static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        ServerOrigin.same(a, b)
    }

    /// The request a redirect asks for: `request` sent to `target` with method, body and headers rewritten.
    /// - Parameters:
    ///   - request: The redirected request.
    ///   - target: The resolved target (see `resolve`).
    ///   - status: The redirect's status.
    /// - Returns: The next request.
    package static func redirected(_ request: TransportRequest, to target: URL, status: Int) -> TransportRequest {
        var next = request
        next.url = target
        if becomesGet(status: status, method: request.method) {
            next.method = .get
            next.body = .empty
            for name in bodyHeaders { next.headers.remove(name: name) }
        }
        if !sameOrigin(request.url, target) {
            for name in crossOriginHeaders { next.headers.remove(name: name) }
            // Challenge credentials (Digest) belong to the origin they were given for, like the headers.
            next.credentials = nil
            // The socket serves the origin the call named: another origin is reached over the network.
            if next.unixSocketPath != nil { next.unixSocketPath = nil }
        }
        return next
    }

    /// Cookies across a redirect, for a request that carries a cookie storage (`TransportRequest.cookies`):
    /// the redirect's `Set-Cookie` lines are stored for the URL that set them, then the next request's
    /// `Cookie` header is rebuilt from the storage for its URL. The caller's own `Cookie` header goes on
    /// only while the redirects stay on its origin; the jar's cookies go wherever the jar's domain and
    /// path rules send them, and nowhere else.
    /// - Parameters:
    ///   - headers: The redirect's response head.
    ///   - request: The request the redirect answers.
    ///   - next: The redirect's next request (from `decide`), updated in place.
    package static func carryCookies(
        _ headers: HTTPHeaders, of request: TransportRequest, to next: inout TransportRequest
    ) {
        guard var cookies = request.cookies else { return }
        cookies.storage.store(responseHeaders: headers, from: request.url)
        if !sameOrigin(request.url, next.url) { cookies.callerHeader = nil }
        next.cookies = cookies
        cookies.apply(to: &next)
    }

    /// Whether a redirect turns the request into a GET without a body.
    /// - Parameters:
    ///   - status: The redirect's status.
    ///   - method: The redirected request's method.
    /// - Returns: `true` for 303 (except after HEAD) and for 301 or 302 after POST.
    package static func becomesGet(status: Int, method: HTTPMethod) -> Bool {
        switch status {
        case 303: method != .head
        case 301, 302: method == .post
        default: false
        }
    }
}
