#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ServerAPIManager {
    /// The cache key of a call, or `nil` when the call does not use the cache (no cache, mode
    /// `never`, or a method that is not cacheable).
    ///
    /// Varying headers are read from the call and from the manager's default headers, so that
    /// an `Authorization` set either way keeps two users' entries apart. Headers added later by
    /// plugins are not part of the key: set such headers on the call, or as default headers.
    /// A URL's user-info, which the request carries as `Authorization` (see `URLUserInfo`), always
    /// varies: two users of one URL never share an entry.
    @inline(never)
    func cacheKey(for api: ServerAPI, base: TransportRequest) -> CacheKey? {
        guard cache != nil, api.usesCache else { return nil }
        var varying = api.varyingHeaders
        if api.carriesUserInfo, !varying.contains(where: { $0.lowercased() == "authorization" }) {
            varying.append("Authorization")
        }
        guard !varying.isEmpty, !configuration.defaultHeaders.isEmpty else {
            return CacheKey(request: base, varying: varying)
        }
        var request = base
        for field in configuration.defaultHeaders where !request.headers.contains(field.name) {
            request.headers.add(name: field.name, value: field.value)
        }
        return CacheKey(request: request, varying: varying)
    }

    /// The cached result of a call, fresh or not, formatted; `nil` when there is none.
    func cachedResult(for api: ServerAPI) async throws -> ServerResult? {
        let base = try api.transportRequest()
        guard let cache, let key = cacheKey(for: api, base: base), let entry = try? await cache.lookup(key) else {
            return nil
        }
        let call = CallContext(
            api: api, request: base, cacheKey: key,
            interceptor: api.businessRules.interceptor(over: configuration.businessRules))
        return try deliverFromCache(entry, call, ResultFinishing(formatter: formatter))
    }

    /// Answers a call with a stored entry.
    @inline(never)
    func deliverFromCache<F: CallFinishing>(
        _ entry: CacheEntry, _ call: CallContext, _ finisher: F
    ) throws -> F.Value {
        call.stampStatus(entry.status)
        let response = TransportResponse(
            status: entry.status, headers: entry.headers, body: .data(entry.body), url: entry.url,
            metrics: TransportMetrics(transport: "cache", bytesReceived: Int64(entry.body.count)))
        let age = Duration.seconds(max(0, call.date(at: .now).timeIntervalSince(entry.storedAt)))
        let value = try deliver(
            response, source: .cache(storedAt: entry.storedAt, age: age), metrics: call.metrics, call, finisher)
        completeSucceeded(call)
        return value
    }

    /// Stores a successful response of a cacheable call; a cache that cannot store does not fail the call.
    func store(_ response: TransportResponse, api: ServerAPI, in cache: any CachePolicy, key: CacheKey) async {
        guard case .data(let body) = response.body, (200..<300).contains(response.status),
            api.isCacheableMethod
        else { return }
        if configuration.honorsHTTPCacheHeaders,
            CacheControl(response.headers).noStore || CacheControl(api.headers).noStore
        {
            return
        }
        let now = Date()
        let entry = CacheEntry(
            status: response.status, headers: response.headers, body: body, url: response.url, storedAt: now,
            expiresAt: expiry(of: response.headers, api: api, receivedAt: now))
        // A cache that cannot store (disk full, read-only) must not fail a call that succeeded.
        try? await cache.store(entry, for: key)
    }

    /// Whether a failure means "the network did not answer usefully", so the cache may stand in.
    static func isOfflineFailure(_ error: ServerAPIError) -> Bool {
        switch error.kind {
        case .timedOut, .cannotConnect, .network, .tls: true
        case .httpStatus: (error.status ?? 0) >= 500
        default: false
        }
    }
}
