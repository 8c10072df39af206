#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The cache's decision for one call, as one pure value: before the network, whether a stored response answers,
/// the call misses, or it fetches (conditionally, with a stored response to stand in if the server fails); after
/// it, what is removed, stored and served.
///
/// Its inputs are the call's mode and TTL, the manager's settings, the request, what the cache holds and the time;
/// it does no I/O. The manager looks up, sends, stores and removes as it says (the cache's steps in
/// `ServerAPIManager+Pipeline.swift`), and decides nothing. The HTTP rules it applies are `HTTPCacheRules`' (RFC
/// 9111, for a private cache); how the seeds' modes layer over them is the Caching article's.
struct CacheDecision: Sendable {
    /// How the call uses the cache.
    var mode: CacheMode
    /// Whether HTTP's cache headers and the request's directives count (`Configuration.honorsHTTPCacheHeaders`).
    var honorsHTTP = true
    /// The call's TTL (`cache(_:ttl:)`), which replaces the lifetime the headers give.
    var ttl: Duration?
    /// The lifetime of a 2xx whose headers give none (`Configuration.defaultCacheTTL`).
    var defaultTTL = Duration.seconds(300)
    /// How long past its freshness a stored response is kept (`Configuration.maxStaleAge`); `nil` for ever.
    var maxStaleAge: Duration?
    /// The manager's default headers, which count for a variant where the call does not set them.
    var defaultHeaders: HTTPHeaders = [:]
    /// Whether the call's method may be cached (GET, HEAD, or one it opted in with `cacheable(methods:)`).
    var cacheableMethod = true
    /// The request fields the call's responses vary on besides their `Vary` (`varying(_:)`).
    var varying: [String] = []
    /// Whether the call's URL has user-info, which its requests carry as `Authorization`.
    var carriesUserInfo = false
}

extension CacheDecision {
    /// The decision for a call of the manager.
    init(_ api: ServerAPI, _ configuration: ServerAPIManager.Configuration) {
        self.init(
            mode: api.cacheMode, honorsHTTP: configuration.honorsHTTPCacheHeaders, ttl: api.cacheTTL,
            defaultTTL: configuration.defaultCacheTTL, maxStaleAge: configuration.maxStaleAge,
            defaultHeaders: configuration.defaultHeaders, cacheableMethod: api.isCacheableMethod,
            varying: api.varyingHeaders, carriesUserInfo: api.carriesUserInfo)
    }

    /// The request headers a stored variant is matched against: the request's, with the manager's default headers
    /// it does not set (plugins' headers come later and are not part of the match).
    func variantHeaders(of request: TransportRequest) -> HTTPHeaders {
        guard !defaultHeaders.isEmpty else { return request.headers }
        var headers = request.headers
        for field in defaultHeaders where !headers.contains(field.name) {
            headers.add(name: field.name, value: field.value)
        }
        return headers
    }

    /// Whether a stored entry went stale longer ago than `maxStaleAge`: it answers nothing, not even offline, and
    /// the manager removes it when it finds it. How old is too old is the manager's setting, never the store's.
    func outlived(_ entry: CacheEntry, at now: Date) -> Bool {
        guard let maxStaleAge, let expiresAt = entry.expiresAt else { return false }
        return now >= expiresAt.addingTimeInterval(maxStaleAge.seconds)
    }
}

// MARK: - Before the network

extension CacheDecision {
    /// What the cache holds for a call, fresh or not: the stored response its variant selects (`fitting`), and the
    /// URL's latest stored response of whichever variant (`latest`), whose entity tag a call that no variant fits
    /// may offer. Both come from the one lookup a call makes.
    struct Stored: Sendable {
        var fitting: CacheEntry?
        var latest: CacheEntry?
    }

    /// What the manager found for a call.
    enum Lookup: Sendable {
        /// The manager has no cache.
        case noCache
        /// The call has no cache key: its mode is `never` or its method is not cacheable.
        case notCacheable
        /// What the cache holds (nothing when the call's mode does not read it).
        case found(Stored)
    }

    /// What a call does before the network.
    enum Before: Sendable {
        /// A stored response answers: no request is sent.
        case answer(Answer)
        /// The call may be answered from the cache only, and it cannot be: a `cacheMiss` error.
        case miss(Miss)
        /// The call goes to the network.
        case fetch(Fetch)
    }

    /// A stored response answering a call.
    struct Answer: Sendable, Equatable {
        var entry: CacheEntry
        /// The part of the stored body a `Range` request asked for: answered as a 206 with its `Content-Range`.
        var range: Range<Int>?
        /// The call's own preconditions hold for the entry: answered as a 304 without a body.
        var notModified = false
        /// It answers stale within `stale-while-revalidate`: the manager revalidates it in the background.
        var revalidatesInBackground = false
    }

    /// Why a call that may only be answered from the cache is not.
    enum Miss: Sendable, Equatable, CustomStringConvertible {
        case noCache
        case notCacheable(HTTPMethod)
        case mustRevalidate
        case noEntry

        var description: String {
            switch self {
            case .noCache: "no cache is configured"
            case .notCacheable(let method): "\(method) responses are not cacheable for this call"
            case .mustRevalidate: "the stored response must be revalidated"
            case .noEntry: "the cache has no entry for this call"
            }
        }
    }

    /// A call that goes to the network.
    struct Fetch: Sendable {
        /// The conditional request that revalidates a stored response, when there is one to revalidate.
        var conditional: Conditional?
        /// The stored response that stands in for a failed call: cut off from the server (RFC 9111 §4.2.4),
        /// `stale-if-error` (RFC 5861), or the offline fallback of `loadElseReturnCache`.
        var fallback: CacheEntry?

        /// Whether a 5xx is refused whatever the call accepts: a stored response that may stand in for a failed call
        /// stands in for a 5xx too, since RFC 9111 §4.3.3 lets a cache treat a 5xx to a revalidation as no answer,
        /// and RFC 5861 counts 500, 502, 503 and 504 as errors.
        var refusesServerErrors: Bool { fallback != nil }

        /// The stored answer to a call that failed with `error`, when the network did not answer usefully (no
        /// connection, a timeout, TLS, a 5xx) and a stored response may stand in; `nil` when the failure is the
        /// caller's.
        func answer(after error: ServerAPIError) -> Answer? {
            guard let fallback else { return nil }
            switch error.kind {
            case .timedOut, .cannotConnect, .network, .tls: return Answer(entry: fallback)
            case .httpStatus where (error.status ?? 0) >= 500: return Answer(entry: fallback)
            default: return nil
            }
        }
    }

    /// A conditional request made from a stored response's validators (`ETag`, `Last-Modified`), so that the server
    /// can answer 304 Not Modified instead of the whole body (RFC 9111 §4.3.1).
    struct Conditional: Sendable {
        /// The stored response it revalidates.
        var entry: CacheEntry
        /// The call's request with `If-None-Match` / `If-Modified-Since`.
        var request: TransportRequest
    }

    /// What a call does before the network: answered by the stored response that fits it where its mode and HTTP
    /// allow (fresh; stale within `stale-while-revalidate`, revalidated in the background; for `cacheOnly`, whatever
    /// may be served offline); a miss when it may only be answered from the cache (`cacheOnly`, `only-if-cached`);
    /// otherwise fetched, conditionally when a stored response has validators, with the stored response that may
    /// stand in if the server fails. A request for part of a response is the server's to answer, unless a stored
    /// whole answers it.
    /// - Parameters:
    ///   - request: The call's request.
    ///   - lookup: What the cache holds for it.
    ///   - now: The time.
    func before(_ request: TransportRequest, _ lookup: Lookup, at now: Date) -> Before {
        let headers = request.headers
        var stored: CacheEntry?
        var latest: CacheEntry?
        if case .found(let found) = lookup { (stored, latest) = (found.fitting, found.latest) }
        var standing = stored.map { Standing($0, request: headers, at: now) }
        if let stored, let standing, let answer = answer(stored, standing, headers) { return .answer(answer) }
        if headers.contains("Range") { (stored, standing) = (nil, nil) }
        if mode == .cacheOnly || (honorsHTTP && CacheControl(headers, isRequest: true).onlyIfCached) {
            switch lookup {
            case .noCache: return .miss(.noCache)
            case .notCacheable: return .miss(.notCacheable(request.method))
            case .found: return .miss(stored == nil ? .noEntry : .mustRevalidate)
            }
        }
        var fetch = Fetch()
        if honorsHTTP, mode == .returnCacheElseLoad || mode == .loadElseReturnCache {
            if let stored {
                fetch.conditional = Self.conditional(revalidating: stored, request)
            } else if !headers.contains("Range"), let other = Self.offerable(latest) {
                fetch.conditional = Self.conditional(revalidating: other, request)
            }
        }
        if let stored, let standing,
            mode == .loadElseReturnCache ? standing.mayAnswerOffline : answersOnError(standing)
        {
            fetch.fallback = stored
        }
        return .fetch(fetch)
    }

    /// The first result of a `returnCacheThenLoad` call, shown before the network answers: the stored response when
    /// it is fresh or may be served stale; `nil` otherwise.
    func firstResult(_ stored: CacheEntry?, request: TransportRequest, at now: Date) -> Answer? {
        guard let stored, Standing(stored, request: request.headers, at: now).mayAnswerOffline else { return nil }
        return Answer(entry: stored)
    }

    /// The stored answer of a call whose mode reads the cache first, when HTTP allows; `nil` when it goes to the
    /// network. Only a stored whole answers a request for part of it, as that part; `If-Range` is the server's.
    private func answer(_ stored: CacheEntry, _ standing: Standing, _ headers: HTTPHeaders) -> Answer? {
        var answer = Answer(entry: stored)
        if let value = headers["Range"] {
            guard stored.status == 200, !headers.contains("If-Range"),
                let part = HTTPCacheRules.byteRange(value, length: stored.body.count)
            else { return nil }
            answer.range = part
        }
        switch mode {
        case .returnCacheElseLoad:
            if answersFresh(standing) { break }
            guard answer.range == nil, answersWhileRevalidating(standing) else { return nil }
            answer.revalidatesInBackground = true
        case .cacheOnly:
            guard answersFresh(standing) || standing.mayAnswerOffline else { return nil }
        default:
            return nil
        }
        // The call's own validators, when the stored response meets them, are answered here as the server would.
        answer.notModified =
            stored.status == 200 && answer.range == nil
            && HTTPCacheRules.notModified(request: headers, stored: stored.headers) == true
        return answer
    }

    /// The conditional request that revalidates a stored response, or `nil` when the call sets its own validators
    /// or the response has neither an `ETag` nor a `Last-Modified`.
    private static func conditional(revalidating entry: CacheEntry, _ request: TransportRequest) -> Conditional? {
        guard !request.headers.contains("If-None-Match"), !request.headers.contains("If-Modified-Since") else {
            return nil
        }
        let etag = entry.headers["ETag"]
        let lastModified = entry.headers["Last-Modified"]
        guard etag != nil || lastModified != nil else { return nil }
        var conditional = request
        if let etag { conditional.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified { conditional.headers.add(name: "If-Modified-Since", value: lastModified) }
        return Conditional(entry: entry, request: conditional)
    }

    /// The URL's latest stored response, when a call that no stored variant fits may offer its entity tag (RFC 9111
    /// §4.3.1 lets a cache send the validators of the responses it stores for the URL): a 304 says the server's
    /// response to this call is that one, which is then stored as this call's variant too (§4.3.4). `nil` when it
    /// has no `ETag`, or varies on `*`, `Authorization` or `Cookie`: another party's response is never offered.
    private static func offerable(_ latest: CacheEntry?) -> CacheEntry? {
        guard let latest, latest.status == 200, latest.headers.contains("ETag"), !Vary(latest.headers).isStar,
            !latest.variant.names.contains(where: { $0 == "authorization" || $0 == "cookie" })
        else { return nil }
        return latest
    }
}

// MARK: - How a stored response stands toward a request (RFC 9111 §4.2, §4.2.4, RFC 5861)

extension CacheDecision {
    /// A stored response's age and lifetime at a date, with its own and the request's directives.
    private struct Standing {
        /// The response's age at the date, in seconds.
        let age: TimeInterval
        /// Its freshness lifetime, in seconds (`.infinity` for an entry that never expires).
        let lifetime: TimeInterval
        let response: CacheControl
        let request: CacheControl

        init(_ entry: CacheEntry, request headers: HTTPHeaders, at now: Date) {
            age = entry.age(at: now).seconds
            lifetime =
                entry.expiresAt.map { $0.timeIntervalSince(entry.storedAt) + entry.initialAge.seconds } ?? .infinity
            response = CacheControl(entry.headers)
            // `Pragma` is not read: RFC 9111 §5.4 deprecates it and defines no cache behaviour for it (a call that
            // wants the origin's answer says `Cache-Control: no-cache`); it still goes on the wire, for HTTP/1.0
            // caches.
            request = CacheControl(headers, isRequest: true)
        }

        var isFresh: Bool { age < lifetime }

        /// How long it has been stale, in seconds (0 while fresh).
        var staleness: TimeInterval { max(0, age - lifetime) }

        /// Whether the server forbade serving it stale.
        var forbidsStale: Bool { response.noCache || response.mustRevalidate }

        /// Whether the seeds' modes that serve without the network (`cacheOnly`, the offline fallback of
        /// `loadElseReturnCache`, the first result of `returnCacheThenLoad`) may serve it: fresh, or stale when the
        /// server did not say `no-cache` or `must-revalidate`.
        var mayAnswerOffline: Bool { !response.noCache && (isFresh || !response.mustRevalidate) }
    }

    /// Whether a stored response answers the request without the server: fresh and acceptable to the request's
    /// `max-age` and `min-fresh`, or stale within its `max-stale` (never after `no-cache` or, once stale,
    /// `must-revalidate`).
    private func answersFresh(_ standing: Standing) -> Bool {
        let (response, request) = (standing.response, standing.request)
        if response.noCache { return false }
        guard honorsHTTP else { return standing.isFresh }
        // A request that may not be stored is not answered from storage either: it asked for the origin's answer.
        if request.noCache || request.noStore { return false }
        // A fresh `immutable` response will not change: a reload's `max-age=0` does not send for it (RFC 8246).
        if let maxAge = request.maxAge, standing.age > TimeInterval(maxAge), !(response.immutable && standing.isFresh) {
            return false
        }
        if let minFresh = request.minFresh, standing.lifetime - standing.age < TimeInterval(minFresh) { return false }
        if standing.isFresh { return true }
        guard let maxStale = request.maxStale, !standing.forbidsStale else { return false }
        return maxStale == Int.max || standing.staleness <= TimeInterval(maxStale)
    }

    /// Whether a stale response answers while the manager revalidates it in the background (`stale-while-revalidate`).
    private func answersWhileRevalidating(_ standing: Standing) -> Bool {
        guard honorsHTTP, !standing.isFresh, !standing.forbidsStale, !standing.request.noCache,
            let window = standing.response.staleWhileRevalidate
        else { return false }
        return standing.staleness <= TimeInterval(window)
    }

    /// Whether a stored response answers when the server does not (no connection, a connection dropped, a timeout)
    /// or answers with a 5xx, which RFC 9111 §4.3.3 lets a cache treat as no answer. Fresh, it does (unless
    /// `no-cache`). Stale: within `stale-if-error` when the response or the request gives one (RFC 5861: past the
    /// window the failure is the caller's); without one, when the cache is cut off from the server RFC 9111 §4.2.4
    /// allows stale unless forbidden: not after `no-cache` or `must-revalidate`, not for a request that said
    /// `no-cache` or `no-store`, and within the request's `max-stale` when it gives one.
    private func answersOnError(_ standing: Standing) -> Bool {
        let (response, request) = (standing.response, standing.request)
        guard honorsHTTP, !standing.forbidsStale || standing.isFresh && !response.noCache else { return false }
        if standing.isFresh { return true }
        let window = max(response.staleIfError ?? -1, request.staleIfError ?? -1)
        if window >= 0 { return standing.staleness <= TimeInterval(window) }
        guard !standing.forbidsStale, !request.noCache, !request.noStore else { return false }
        guard let maxStale = request.maxStale else { return true }
        return maxStale == Int.max || standing.staleness <= TimeInterval(maxStale)
    }
}

// MARK: - After the network

extension CacheDecision {
    /// A change to the cache.
    enum Change: Sendable, Equatable {
        /// Store the entry under the key (and, when it varies, under its variant's key).
        case store(CacheEntry, CacheKey)
        /// Remove what the key holds.
        case remove(CacheKey)
    }

    /// What the cache does with a response.
    struct After: Sendable {
        /// The changes made at once, in order, before the response is served: what an unsafe request invalidates
        /// (RFC 9111 §4.4), and the stored responses this one describes (a `POST`'s own `Content-Location`, the
        /// `GET` a `HEAD` describes); for a refused status, its own storing too.
        var changes: [Change] = []
        /// What the caller gets: the response as it came; a 304's stored response, merged with the 304's fields; a
        /// `HEAD`'s with the stored fields it did not carry.
        var response: TransportResponse
        /// Where the response comes from: a 304's is the cache's, just received.
        var source = ResultSource.network
        /// The change made once the caller's value is made (a response the call could not use is not kept): the
        /// response stored, or a revalidated one stored anew or removed.
        var change: Change?
    }

    /// What the cache does with a response to a call (whole, or a refused status's).
    /// - Parameters:
    ///   - response: The response, after the plugins (as it came, for a refused status).
    ///   - request: The attempt's request.
    ///   - key: The call's cache key; `nil` when the call does not use the cache (it still invalidates).
    ///   - accepted: Whether the call accepted the status; a refused one is stored (a 404 with `max-age`) and
    ///     invalidates (a redirect), nothing more.
    ///   - conditional: The call's conditional request, when it revalidated a stored response.
    ///   - storedGET: For a `HEAD`, the stored response `storedGET(describedBy:to:key:accepted:)` named.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response was received.
    func after(
        _ response: TransportResponse, to request: TransportRequest, key: CacheKey?, accepted: Bool,
        conditional: Conditional?, storedGET: CacheEntry? = nil, requestTime: Date, responseTime: Date
    ) -> After {
        var after = After(changes: Self.invalidations(after: response, to: request), response: response)
        let times = (request: requestTime, response: responseTime)
        guard accepted else {
            if let key, let entry = storing(response, to: request, cacheable: cacheableMethod, times) {
                after.changes.append(.store(entry, key))
            }
            return after
        }
        if let stored = storedAsGET(response, to: request, times) { after.changes.append(stored) }
        if let conditional, response.status == 304 {
            let entry = conditional.entry
            // Merged once: what the caller gets is what is stored, but for the fields a response never stores.
            let merged = HTTPCacheRules.merge(entry.headers, response.headers)
            after.response = TransportResponse(
                status: entry.status, headers: merged, body: .data(entry.body), url: entry.url,
                metrics: response.metrics)
            after.source = .cache(storedAt: responseTime, age: .zero)
            guard let key else { return after }
            let renewed = renewed(entry, merged: merged, from: response.headers, times)
            after.change = Change(renewed.map { filed($0, variantHeaders(of: conditional.request)) }, key: key)
            return after
        }
        if let storedGET, let get = self.storedGET(describedBy: response, to: request, key: key, accepted: accepted),
            storedGET.status == 200
        {
            let described = describing(storedGET, head: response, to: request, times)
            after.changes.append(Change(described.entry, key: get.key))
            if let headers = described.headers { after.response.headers = headers }
        }
        if let key, let entry = storing(after.response, to: request, cacheable: cacheableMethod, times) {
            after.change = .store(entry, key)
        }
        return after
    }

    /// The changes an unsafe request's non-error response makes, whatever the call's mode: what the cache holds for
    /// its URL, and for the `Location` and `Content-Location` of the same origin, is removed (RFC 9111 §4.4).
    static func invalidations(after response: TransportResponse, to request: TransportRequest) -> [Change] {
        var changes: [Change] = []
        let urls = HTTPCacheRules.invalidatedURLs(
            method: request.method, status: response.status, url: request.url, headers: response.headers)
        for url in urls {
            var target = request
            target.url = url
            target.body = .empty
            for method in [HTTPMethod.get, .head, request.method] {
                target.method = method
                changes.append(.remove(CacheKey(request: target)))
            }
        }
        return changes
    }

    /// The stored `GET` response a `200` to a `HEAD` describes (RFC 9111 §4.3.5), which the manager finds before
    /// `after`: its key and the headers its variant is matched against; `nil` for another response.
    func storedGET(
        describedBy response: TransportResponse, to request: TransportRequest, key: CacheKey?, accepted: Bool
    ) -> (key: CacheKey, variantHeaders: HTTPHeaders)? {
        guard accepted, key != nil, request.method == .head, response.status == 200 else { return nil }
        var get = request
        get.method = .get
        get.body = .empty
        return (CacheKey(request: get), variantHeaders(of: request))
    }

    /// The entry a response is stored as, when RFC 9111 §3 allows it (never a partial one, never one that said
    /// `no-store`, any status with explicit freshness), with its variant; `nil` otherwise.
    private func storing(
        _ response: TransportResponse, to request: TransportRequest, cacheable: Bool,
        _ times: (request: Date, response: Date)
    ) -> CacheEntry? {
        guard case .data(let body) = response.body, cacheable, mode.writesCache,
            honorsHTTP || (200..<300).contains(response.status)
        else { return nil }
        let control = CacheControl(response.headers)
        guard
            HTTPCacheRules.mayStore(
                status: response.status, response: control, headers: response.headers,
                request: CacheControl(request.headers, isRequest: true), requestHeaders: request.headers)
        else { return nil }
        let headers = HTTPCacheRules.storedHeaders(response.headers)
        let initialAge = HTTPCacheRules.initialAge(
            headers: headers, requestTime: times.request, responseTime: times.response)
        var entry = CacheEntry(
            status: response.status, headers: headers, body: body, url: response.url, storedAt: times.response,
            expiresAt: nil, initialAge: .seconds(initialAge))
        entry.expiresAt = expiry(of: entry, control: control)
        return filed(entry, variantHeaders(of: request))
    }

    /// For a `POST` whose success names its own URL as `Content-Location` and has explicit freshness: that response
    /// stored as the URL's `GET` (RFC 9110 §9.3.3), when the call's mode writes the cache.
    private func storedAsGET(
        _ response: TransportResponse, to request: TransportRequest, _ times: (request: Date, response: Date)
    ) -> Change? {
        guard request.method == .post, mode.writesCache, (200..<300).contains(response.status),
            let location = response.headers["Content-Location"],
            URL(string: location, relativeTo: request.url)?.absoluteURL == request.url,
            HTTPCacheRules.hasExplicitFreshness(CacheControl(response.headers), response.headers)
        else { return nil }
        var get = request
        get.method = .get
        get.body = .empty
        return storing(response, to: get, cacheable: true, times).map { .store($0, CacheKey(request: get)) }
    }

    /// What a `200` to a `HEAD` does to the stored `GET` response it describes (`HTTPCacheRules.headDescribes`): it
    /// gets the HEAD's fields and a freshness computed anew from them, as after a 304; one it does not describe is
    /// made stale, so that its next use revalidates.
    /// - Returns: The entry to store (`nil` to remove it), and the updated stored fields, which the HEAD's caller
    ///   gets (those the HEAD did not carry included) — `nil` when nothing was updated.
    private func describing(
        _ stored: CacheEntry, head response: TransportResponse, to request: TransportRequest,
        _ times: (request: Date, response: Date)
    ) -> (entry: CacheEntry?, headers: HTTPHeaders?) {
        var entry = stored
        guard
            HTTPCacheRules.headDescribes(
                stored: entry.headers, bodyLength: entry.body.count, head: response.headers)
        else {
            entry.expiresAt = entry.storedAt.addingTimeInterval(-entry.initialAge.seconds)
            return (filed(entry, variantHeaders(of: request)), nil)
        }
        let merged = HTTPCacheRules.merge(entry.headers, response.headers)
        guard let renewed = renewed(entry, merged: merged, from: response.headers, times) else { return (nil, nil) }
        return (filed(renewed, variantHeaders(of: request)), renewed.headers)
    }

    /// A stored response updated by a 304 or a HEAD (RFC 9111 §4.3.4, §4.3.5): its fields `merged`, stored as just
    /// received, its age and freshness computed anew from the update's fields; `nil` when it now says `no-store`.
    private func renewed(
        _ entry: CacheEntry, merged: HTTPHeaders, from update: HTTPHeaders, _ times: (request: Date, response: Date)
    ) -> CacheEntry? {
        var entry = entry
        entry.headers = HTTPCacheRules.storedHeaders(merged)
        entry.storedAt = times.response
        entry.initialAge = .seconds(
            HTTPCacheRules.initialAge(headers: update, requestTime: times.request, responseTime: times.response))
        let control = CacheControl(entry.headers)
        if control.noStore && !control.mustUnderstand { return nil }
        entry.expiresAt = expiry(of: entry, control: control)
        return entry
    }

    /// When a stored entry stops being fresh. The call's TTL replaces what the headers say; else, when HTTP cache
    /// headers are honoured, their freshness lifetime (RFC 9111 §4.2.1) counted from the response's generation; a
    /// response without one gets `defaultTTL` (if its status may be cached by heuristics). `no-cache` makes it
    /// stale at once whatever the TTL.
    func expiry(of entry: CacheEntry, control: CacheControl) -> Date {
        if control.noCache && honorsHTTP { return entry.storedAt }
        if let ttl { return entry.storedAt.addingTimeInterval(ttl.seconds) }
        guard honorsHTTP else { return entry.storedAt.addingTimeInterval(defaultTTL.seconds) }
        let lifetime =
            HTTPCacheRules.freshnessLifetime(
                status: entry.status, control: control, headers: entry.headers, responseTime: entry.storedAt)
            ?? ((200..<300).contains(entry.status) ? defaultTTL.seconds : 0)
        return entry.storedAt.addingTimeInterval(lifetime - entry.initialAge.seconds)
    }

    /// An entry with its variant: the fields its `Vary` and the call's `varying(_:)` name, and `Authorization` for a
    /// URL with user-info (`URLUserInfo`: two users of one URL never share a response), with the request's values.
    private func filed(_ entry: CacheEntry, _ requestHeaders: HTTPHeaders) -> CacheEntry {
        var entry = entry
        var names = Set(Vary(entry.headers).names)
        for name in varying { names.insert(name.lowercased()) }
        if carriesUserInfo { names.insert("authorization") }
        entry.variant = CacheVariant(names: names.sorted(), request: requestHeaders)
        return entry
    }
}

extension CacheDecision.Change {
    /// Storing the entry under the key, or removing the key when there is none.
    init(_ entry: CacheEntry?, key: CacheKey) {
        self = entry.map { .store($0, key) } ?? .remove(key)
    }
}

extension CacheDecision.Answer {
    /// The response that answers: the stored one with its `Age` at `now` (RFC 9111 §4), as the part a `Range` asked
    /// for or as a 304 without a body when `notModified`; and its source, the cache.
    func response(at now: Date) -> (response: TransportResponse, source: ResultSource) {
        var entry = entry
        var headers = entry.headers
        if notModified {
            for name in ["Content-Length", "Content-Range"] { headers.remove(name: name) }
            entry.status = 304
            entry.body = Data()
        } else if let range {
            headers.remove(name: "Content-Range")
            headers.add(
                name: "Content-Range", value: "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(entry.body.count)")
            headers.remove(name: "Content-Length")
            headers.add(name: "Content-Length", value: String(range.count))
            entry.status = 206
            entry.body = entry.body.subdata(in: range)
        }
        let age = entry.age(at: now)
        headers.remove(name: "Age")
        headers.add(name: "Age", value: String(Int(min(age.seconds, 2_147_483_648))))
        let response = TransportResponse(
            status: entry.status, headers: headers, body: .data(entry.body), url: entry.url,
            metrics: TransportMetrics(transport: "cache", bytesReceived: Int64(entry.body.count)))
        return (response, .cache(storedAt: entry.storedAt, age: age))
    }
}
