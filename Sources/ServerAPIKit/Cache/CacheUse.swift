#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a stored response may answer a request at a given date (RFC 9111 §4.2 and §4.2.4, RFC 5861): a pure
/// value, computed from the entry, the request's fields and the date.
///
/// - `answersFresh`: it answers without the server: fresh and acceptable to the request's `max-age` and
///   `min-fresh`, or stale within the request's `max-stale` (never when the response said `no-cache` or, once
///   stale, `must-revalidate`).
/// - `answersWhileRevalidating`: stale but within `stale-while-revalidate`: it answers, and the manager
///   revalidates it in the background.
/// - `answersOnError`: for when the server fails to answer or answers with a 5xx: fresh; or stale within
///   `stale-if-error`, or without it when nothing forbids serving stale (RFC 9111 §4.2.4, §4.3.3).
/// - `mayAnswerOffline`: what the seeds' modes that serve without the network (`cacheOnly`, the offline
///   fallback of `loadElseReturnCache`, the first result of `returnCacheThenLoad`) may use: fresh, or stale
///   when the server did not say `no-cache` or `must-revalidate`.
struct CacheUse {
    /// The response's age at the date, in seconds.
    let age: TimeInterval
    /// Its freshness lifetime, in seconds (`.infinity` for an entry that never expires).
    let lifetime: TimeInterval
    let response: CacheControl
    let request: CacheControl
    /// Whether the request's directives count (HTTP cache headers honoured).
    let honorsHTTP: Bool

    init(entry: CacheEntry, request headers: HTTPHeaders, honorsHTTP: Bool, now: Date) {
        age = entry.age(at: now).seconds
        lifetime =
            entry.expiresAt.map { $0.timeIntervalSince(entry.storedAt) + entry.initialAge.seconds } ?? .infinity
        response = CacheControl(entry.headers)
        // `Pragma` is not read: RFC 9111 §5.4 deprecates it and defines no cache behaviour for it (a call that wants
        // the origin's answer says `Cache-Control: no-cache`); it still goes on the wire, for HTTP/1.0 caches.
        request = CacheControl(headers, isRequest: true)
        self.honorsHTTP = honorsHTTP
    }

    /// Whether the response is fresh.
    var isFresh: Bool { age < lifetime }

    /// How long it has been stale, in seconds (0 while fresh).
    var staleness: TimeInterval { max(0, age - lifetime) }

    /// Whether the server forbade serving it stale.
    private var forbidsStale: Bool { response.noCache || response.mustRevalidate }

    /// Whether it answers the request without the server.
    var answersFresh: Bool {
        if response.noCache { return false }
        guard honorsHTTP else { return isFresh }
        // A request that may not be stored is not answered from storage either: it asked for the origin's answer.
        if request.noCache || request.noStore { return false }
        // A fresh `immutable` response will not change: a reload's `max-age=0` does not send for it (RFC 8246).
        if let maxAge = request.maxAge, age > TimeInterval(maxAge), !(response.immutable && isFresh) { return false }
        if let minFresh = request.minFresh, lifetime - age < TimeInterval(minFresh) { return false }
        if isFresh { return true }
        guard let maxStale = request.maxStale, !forbidsStale else { return false }
        return maxStale == Int.max || staleness <= TimeInterval(maxStale)
    }

    /// Whether it answers while the manager revalidates it in the background (`stale-while-revalidate`).
    var answersWhileRevalidating: Bool {
        guard honorsHTTP, !isFresh, !forbidsStale, !request.noCache, let window = response.staleWhileRevalidate
        else { return false }
        return staleness <= TimeInterval(window)
    }

    /// Whether it answers when the server does not (no connection, a connection dropped, a timeout) or answers
    /// with a 5xx, which RFC 9111 §4.3.3 lets a cache treat as no answer. Fresh, it does (unless `no-cache`).
    /// Stale: within `stale-if-error` when the response or the request gives one (RFC 5861: past the window the
    /// failure is the caller's); without one, when the cache is cut off from the server RFC 9111 §4.2.4 allows
    /// stale unless forbidden: not after `no-cache` or `must-revalidate`, not for a request that said `no-cache`
    /// or `no-store`, and within the request's `max-stale` when it gives one.
    var answersOnError: Bool {
        guard honorsHTTP, !forbidsStale || isFresh && !response.noCache else { return false }
        if isFresh { return true }
        let window = max(response.staleIfError ?? -1, request.staleIfError ?? -1)
        if window >= 0 { return staleness <= TimeInterval(window) }
        guard !forbidsStale, !request.noCache, !request.noStore else { return false }
        guard let maxStale = request.maxStale else { return true }
        return maxStale == Int.max || staleness <= TimeInterval(maxStale)
    }

    /// Whether the seeds' modes may serve it without the network: fresh, or stale when allowed.
    var mayAnswerOffline: Bool {
        if response.noCache { return false }
        return isFresh || !response.mustRevalidate
    }
}
