#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The rules an exchange applies, each written once for every transport so that a call behaves the same whichever
// transport sends it: where a redirect leads (`RedirectRule`), how large a response may be (`ResponseSizeRule`),
// how far a content-coded body may expand (`DecompressionRule`) and which fields a trailer section may carry
// (`TrailerRule`). `ExchangeStateMachine` applies the first three as a backend reports the exchange.

// MARK: - Redirects

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

/// What a transport does with a response head that may be a redirect (see `RedirectRule.decide`).
package enum RedirectDecision: Sendable {
    /// Send this request next: the redirect's target, with method, body and headers rewritten.
    case follow(TransportRequest)
    /// The response is the caller's: not a redirect, a redirect without `Location`, or redirects are off.
    case deliver
    /// End the call with this error: too many redirects, or a target that is not an http(s) URL.
    case fail(ServerAPIError)
}

// MARK: - Response size

/// The response-size rules every transport applies: the body length a response head announces, and
/// `TransportRequest.maxResponseSize` checked against it and against the bytes that arrive.
///
/// The limit is on the body as the caller gets it, after content decoding: a transport calls
/// `check(announced:…)` once per final head, and `check(received:…)` as decoded body bytes arrive.
///
/// A body held in memory is bounded by default: a request that sets no `maxResponseSize` of its own gets
/// `defaultMemoryLimit` (64 MiB) when its whole body is collected in memory (`limit(for:streamed:)`), so
/// that a server that sends bytes forever ends the call with `responseTooLarge` instead of taking the
/// process's memory. A download to disk and a streamed body have no default limit: the disk, and the
/// stream's own buffer with its backpressure, bound them. `Int64.max` asks for no limit at all.
@usableFromInline package enum ResponseSizeRule {
    /// The largest body a request without a `maxResponseSize` of its own may hold in memory: 64 MiB
    /// (67,108,864 bytes). `ServerAPIManager.Configuration.maxResponseSize` starts from it.
    @usableFromInline package static let defaultMemoryLimit: Int64 = 64 << 20

    /// The limit that applies to a request's body: its own `maxResponseSize`, else `defaultMemoryLimit`
    /// when the whole body is kept in memory, else none (a download, or a streamed body).
    /// - Parameters:
    ///   - request: The request.
    ///   - streamed: Whether the body is handed over as a stream (`RequestPerforming.stream`).
    /// - Returns: The limit in bytes, or `nil` for none.
    @inlinable
    package static func limit(for request: TransportRequest, streamed: Bool) -> Int64? {
        if let own = request.maxResponseSize { return own }
        return streamed || request.download != nil ? nil : defaultMemoryLimit
    }

    /// The `Content-Length` a response announces (RFC 9110 §8.6), parsed strictly.
    ///
    /// Only digits are accepted, with optional whitespace around them. Repeated fields, or a
    /// comma-separated list (as URLSession joins repeated fields), count when every value is the same.
    /// - Parameter headers: The response's headers.
    /// - Returns: The length, or `nil` when there is none, it is malformed, or the values disagree.
    package static func contentLength(of headers: HTTPHeaders) -> Int64? {
        var length: Int64?
        let agrees = headers.everyValue(for: "Content-Length") { field in
            HTTPSyntax.forEachElement(of: field) { element in
                guard let value = HTTPSyntax.decimal(element.utf8), length == nil || length == value else {
                    return false
                }
                length = value
                return true
            }
        }
        return agrees ? length : nil
    }

    /// The length of the body as the caller receives it, when the head says so: the `Content-Length`,
    /// unless a content coding (gzip, br, …) makes it the length of the encoded bytes, or the body is
    /// framed by `Transfer-Encoding`, which overrides `Content-Length` (RFC 9112 §6.3).
    /// - Parameter headers: The response's headers.
    /// - Returns: The decoded length, or `nil` when it is not known in advance.
    package static func decodedLength(of headers: HTTPHeaders) -> Int64? {
        if headers.contains("Transfer-Encoding") { return nil }
        guard headers.everyValue(for: "Content-Encoding", satisfies: isIdentity) else { return nil }
        return contentLength(of: headers)
    }

    /// Checks the length a final response head announces against the request's `maxResponseSize`.
    ///
    /// A response without a body (to a HEAD, or 1xx, 204 or 304) is never too large: its
    /// `Content-Length` describes a body that is not sent.
    /// - Parameters:
    ///   - announced: The decoded length the head announces (see `decodedLength(of:)`).
    ///   - status: The response's status.
    ///   - method: The method of the request it answers.
    ///   - limit: The request's `maxResponseSize`.
    /// - Returns: `responseTooLarge` when the announced body exceeds the limit, else `nil`.
    package static func check(announced: Int64?, status: Int, method: HTTPMethod, limit: Int64?) -> ServerAPIError? {
        guard let limit, let announced, announced > limit, carriesBody(status: status, method: method) else {
            return nil
        }
        return .responseTooLarge(limit: limit, announced: announced, status: status)
    }

    /// Checks the decoded body bytes received so far against the request's `maxResponseSize`.
    /// - Parameters:
    ///   - received: Decoded body bytes of the current response so far.
    ///   - status: The response's status.
    ///   - limit: The request's `maxResponseSize`.
    /// - Returns: `responseTooLarge` once `received` exceeds the limit, else `nil`.
    @inlinable
    package static func check(received: Int64, status: Int, limit: Int64?) -> ServerAPIError? {
        // Runs for every piece of every body: two comparisons, the error only built when it fails.
        guard let limit, received > limit else { return nil }
        return .responseTooLarge(limit: limit, status: status)
    }

    /// Whether a response to `method` with `status` has a body (RFC 9110 §6.4.1).
    /// - Parameters:
    ///   - status: The response's status.
    ///   - method: The request's method.
    /// - Returns: `false` for a response to HEAD, and for 1xx, 204 and 304.
    package static func carriesBody(status: Int, method: HTTPMethod) -> Bool {
        method != .head && status >= 200 && status != 204 && status != 304
    }

    /// Whether a `Content-Encoding` value leaves the bytes as they are: `identity`, or nothing, in any case.
    private static func isIdentity(_ value: String) -> Bool {
        HTTPSyntax.forEachElement(of: value) { coding in
            coding.isEmpty || HTTPSyntax.equals(coding, lowercased: "identity")
        }
    }
}

// MARK: - Decompression

/// The decompression-bomb rule every transport applies: a response whose content coding (gzip, deflate,
/// br, zstd) expands its bytes more than `TransportRequest.maxDecompressionRatio` times is stopped.
///
/// The size limit (`ResponseSizeRule.limit(for:streamed:)`) already bounds the decoded body; the ratio bounds
/// it where no size limit applies (a download, a stream), and stops a bomb (10 MB of zeros is 10 KB of gzip) long before a generous size limit would. The check
/// compares the decoded bytes received so far with the encoded bytes they came from: the bytes received
/// so far when the library counts them (libcurl's `CURLINFO_SIZE_DOWNLOAD_T`, counted before decoding),
/// else the encoded body's `Content-Length` (the whole encoded body: a looser, still bounded check). A
/// response that is not content-coded, or whose encoded size is not known at all, is checked against
/// `maxResponseSize` only.
///
/// Bodies up to `floor` decoded bytes are never refused: a small response compresses far beyond any
/// ratio (a 1 KB run of spaces is a 30-byte gzip) and costs nothing to hold.
@usableFromInline package enum DecompressionRule {
    /// The ratio a request allows unless it says otherwise: 100. Text and JSON compress 3 to 20 times, and
    /// rarely beyond 50; gzip's own ceiling is about 1030, reached only by runs of one byte, as bombs are.
    @usableFromInline package static let defaultRatio = 100

    /// The decoded bytes always allowed, whatever the ratio: 1 MiB.
    @usableFromInline package static let floor: Int64 = 1 << 20

    /// Whether a response's body is content-coded: its `Content-Encoding` names a coding other than
    /// `identity`.
    /// - Parameter headers: The response's headers.
    /// - Returns: `true` when the transport decodes the body (or should).
    package static func isEncoded(_ headers: HTTPHeaders) -> Bool {
        !headers.everyValue(for: "Content-Encoding") { value in
            HTTPSyntax.forEachElement(of: value) { coding in
                coding.isEmpty || HTTPSyntax.equals(coding, lowercased: "identity")
            }
        }
    }

    /// Checks the decoded bytes received so far against the encoded bytes they came from.
    /// - Parameters:
    ///   - decoded: Decoded body bytes of the current response so far.
    ///   - encoded: Encoded body bytes received so far, or the encoded body's whole length; `nil` when
    ///     not known (then nothing is checked).
    ///   - ratio: The request's `maxDecompressionRatio`; `nil` for no ratio limit.
    ///   - status: The response's status.
    /// - Returns: `responseTooLarge` once `decoded` exceeds both `floor` and `ratio` × `encoded`.
    @inlinable
    package static func check(decoded: Int64, encoded: Int64?, ratio: Int?, status: Int) -> ServerAPIError? {
        guard let ratio, let encoded, decoded > floor else { return nil }
        let (allowed, overflow) = max(encoded, 1).multipliedReportingOverflow(by: Int64(max(ratio, 1)))
        guard !overflow, decoded > allowed else { return nil }
        return .decompressionRatioExceeded(ratio: ratio, encoded: encoded, decoded: decoded, status: status)
    }
}

// MARK: - Trailers

/// The rules for trailer fields, the fields that follow a body (RFC 9110 §6.5), for every transport.
///
/// A trailer section is kept apart from the head: `StreamedResponse.trailers`, `TransportResponse.trailers`
/// and `ServerResult.trailers`, never merged into the headers. Fields that control framing, routing,
/// authentication, caching or how the body is read cannot be trailers: received, they are dropped;
/// sent, they make the call fail. A received section larger than `maximumSize` bytes or `maximumCount`
/// fields fails the call with `responseTooLarge`.
package enum TrailerRule {
    /// The most bytes of names and values a received trailer section may have: 64 KiB.
    package static let maximumSize = 64 << 10
    /// The most fields a received trailer section may have.
    package static let maximumCount = 100

    /// Field names (lower case) that a trailer section must not carry (RFC 9110 §6.5.1): framing, routing,
    /// request modifiers, authentication, response control, and what says how to read the content.
    static let forbiddenNames: Set<String> = [
        "transfer-encoding", "content-length", "host", "trailer", "te", "connection", "keep-alive", "upgrade",
        "cache-control", "expect", "max-forwards", "pragma", "range", "if-match", "if-none-match",
        "if-modified-since", "if-unmodified-since", "if-range", "authorization", "proxy-authorization",
        "www-authenticate", "proxy-authenticate", "authentication-info", "proxy-authentication-info",
        "cookie", "set-cookie", "age", "expires", "date", "location", "retry-after", "vary", "warning",
        "content-encoding", "content-type", "content-range",
    ]

    /// Whether a field may be a trailer.
    /// - Parameter name: The field name, in any case.
    package static func allowsTrailer(named name: String) -> Bool {
        !forbiddenNames.contains(name.lowercased())
    }

    /// Whether a trailer section being received has grown past the limits: a transport that collects
    /// trailers as they arrive stops there, with `tooLarge`.
    /// - Parameters:
    ///   - count: Its fields so far.
    ///   - size: The bytes of their names and values so far.
    package static func exceedsLimits(count: Int, size: Int) -> Bool { count > maximumCount || size > maximumSize }

    /// The error for a received trailer section past the limits.
    package static var tooLarge: ServerAPIError {
        ServerAPIError(
            .responseTooLarge,
            "the response's trailer section is larger than \(maximumCount) fields or \(maximumSize) bytes")
    }

    /// A received trailer section as the caller sees it: forbidden fields dropped.
    /// - Parameter fields: The fields after the body, in order.
    /// - Returns: The fields the caller gets.
    /// - Throws: `responseTooLarge` when the section is past the limits.
    package static func received(_ fields: HTTPHeaders) throws(ServerAPIError) -> HTTPHeaders {
        let size = fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        guard !exceedsLimits(count: fields.count, size: size) else { throw tooLarge }
        return HTTPHeaders(fields.filter { allowsTrailer(named: $0.name) })
    }

    /// Checks a trailer section before it is sent.
    /// - Parameter fields: The fields to send after the body.
    /// - Returns: The fields, unchanged.
    /// - Throws: `invalidRequest` naming a field that is not valid, or that cannot be a trailer.
    package static func outgoing(_ fields: HTTPHeaders) throws(ServerAPIError) -> HTTPHeaders {
        try fields.validate()
        if let field = fields.first(where: { !allowsTrailer(named: $0.name) }) {
            throw ServerAPIError(.invalidRequest, "\(field.name) cannot be sent as a trailer field (RFC 9110 §6.5.1)")
        }
        return fields
    }
}
