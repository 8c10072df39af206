#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ServerAPIManager {
    /// The cache key of a call, or `nil` when the call does not use the cache (no cache, mode
    /// `never`, or a method that is not cacheable).
    ///
    /// The key is the method, the URL, the body's digest and the credentials' digest. The fields that select
    /// one of several responses of a URL (the response's `Vary`, and the call's `varying(_:)` fields, read from
    /// the call and the manager's default headers, and `Authorization` for a URL with user-info) are the entry's
    /// `variant`: a stored response answers only a request with the same values, and an unsafe request to the URL
    /// removes every variant at once.
    @inline(never)
    func cacheKey(for api: ServerAPI, base: TransportRequest) -> CacheKey? {
        guard cache != nil, api.usesCache else { return nil }
        return CacheKey(request: base)
    }

    /// The request headers a stored variant is matched against: the call's, with the manager's default headers
    /// it does not set (plugins' headers come later and are not part of the match).
    func variantHeaders(of request: TransportRequest) -> HTTPHeaders {
        guard !configuration.defaultHeaders.isEmpty else { return request.headers }
        var headers = request.headers
        for field in configuration.defaultHeaders where !headers.contains(field.name) {
            headers.add(name: field.name, value: field.value)
        }
        return headers
    }

    /// What the cache holds for a call, fresh or not: the stored response its variant selects (`fitting`), and the
    /// URL's latest stored response of whichever variant (`latest`), whose entity tag a call that no variant fits
    /// may offer (`offerable(_:)`). Both come from the one lookup a call makes.
    struct StoredResponses: Sendable {
        var fitting: CacheEntry?
        var latest: CacheEntry?
    }

    /// What the cache holds for a call (see `StoredResponses`). A call that asks for part of a response (`Range`)
    /// is answered from the fitting one only as that part (`deliverFromCache(_:_:_:range:)`), never as the whole.
    @inline(never)
    func storedResponses(for call: Call) async -> StoredResponses {
        guard let key = call.cacheKey else { return StoredResponses() }
        return await storedResponses(key: key, headers: variantHeaders(of: call.request))
    }

    /// What the cache holds under `key` for a request with the given `headers` (see `StoredResponses`).
    func storedResponses(key: CacheKey, headers: HTTPHeaders) async -> StoredResponses {
        guard let cache, let primary = await stored(key, in: cache) else { return StoredResponses() }
        if primary.variant.matches(headers, stored: primary.headers) {
            return StoredResponses(fitting: primary, latest: primary)
        }
        guard let group = primary.variantGroup else { return StoredResponses(latest: primary) }
        let variantKey = key.variant(group: group, CacheVariant(names: primary.variant.names, request: headers))
        guard let entry = await stored(variantKey, in: cache), entry.variantGroup == group,
            entry.variant.matches(headers, stored: entry.headers)
        else { return StoredResponses(latest: primary) }
        return StoredResponses(fitting: entry, latest: primary)
    }

    /// The entry under `key`, unless it went stale longer ago than `maxStaleAge`: that one is removed. The store
    /// only finds; how old is too old is the manager's to say.
    private func stored(_ key: CacheKey, in cache: any CachePolicy) async -> CacheEntry? {
        guard let entry = try? await cache.lookup(key) else { return nil }
        guard let limit = configuration.maxStaleAge, let expiresAt = entry.expiresAt,
            configuration.now() >= expiresAt.addingTimeInterval(limit.seconds)
        else { return entry }
        try? await cache.remove(key)
        return nil
    }

    /// The URL's latest stored response, when a call that no stored variant fits may offer its entity tag (RFC 9111
    /// §4.3.1 lets a cache send the validators of the responses it stores for the URL): a 304 says the server's
    /// response to this call is that one, which is then stored as this call's variant too (§4.3.4). `nil` when it
    /// has no `ETag`, or varies on `*`, `Authorization` or `Cookie`: another party's response is never offered.
    static func offerable(_ latest: CacheEntry?) -> CacheEntry? {
        guard let latest, latest.status == 200, latest.headers.contains("ETag"), !Vary(latest.headers).isStar,
            !latest.variant.names.contains(where: { $0 == "authorization" || $0 == "cookie" })
        else { return nil }
        return latest
    }

    /// The cached result of a call that may be shown before the network answers (`returnCacheThenLoad`):
    /// one that is fresh or may be served stale; `nil` when there is none.
    func cachedResult(for api: ServerAPI) async throws -> ServerResult? {
        let base = try api.transportRequest()
        guard cache != nil, let key = cacheKey(for: api, base: base) else { return nil }
        let call = Call(
            api: api, request: base, cacheKey: key,
            interceptor: api.businessRules.interceptor(over: configuration.businessRules), registry: nil)
        guard let entry = await storedResponses(for: call).fitting, use(of: entry, for: call).mayAnswerOffline else {
            return nil
        }
        return try deliverFromCache(entry, call, ResultFinishing(formatter: formatter))
    }

    /// How a stored entry may answer a call, by the rules of `CacheUse`, with the call's TTL and the manager's
    /// setting for HTTP cache headers.
    func use(of entry: CacheEntry, for call: Call) -> CacheUse {
        CacheUse(
            entry: entry, request: call.request.headers, honorsHTTP: configuration.honorsHTTPCacheHeaders,
            now: configuration.now())
    }

    /// Answers a call with a stored entry: its `Age` set to the entry's current age (RFC 9111 §4), a status the
    /// call does not accept failing as the network's would.
    /// - Parameters:
    ///   - range: The part of the stored body a `Range` request asked for: answered as a 206 with its
    ///     `Content-Range`.
    ///   - notModified: The call's own preconditions hold for the entry: answered as a 304 without a body.
    @inline(never)
    func deliverFromCache<F: CallFinishing>(
        _ entry: CacheEntry, _ call: Call, _ finisher: F, range: Range<Int>? = nil, notModified: Bool = false
    ) throws -> F.Value {
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
        call.stampStatus(entry.status)
        let now = configuration.now()
        let age = entry.age(at: now)
        headers.remove(name: "Age")
        headers.add(name: "Age", value: String(Int(min(age.seconds, 2_147_483_648))))
        let response = TransportResponse(
            status: entry.status, headers: headers, body: .data(entry.body), url: entry.url,
            metrics: TransportMetrics(transport: "cache", bytesReceived: Int64(entry.body.count)))
        guard call.api.acceptableStatus.accepts(entry.status) else {
            throw ServerAPIError.httpStatus(entry.status, body: entry.body, url: entry.url)
        }
        return try deliver(
            response, source: .cache(storedAt: entry.storedAt, age: age), metrics: call.metrics, call, finisher)
    }

    /// Stores a response of a cacheable call when RFC 9111 §3 allows it (never a partial one, never one that
    /// said `no-store`, any status with explicit freshness), with its variant; a cache that cannot store does
    /// not fail the call.
    /// - Parameters:
    ///   - response: The response, whole.
    ///   - request: The request that got it (its fields select the variant).
    ///   - requestTime: When the request was sent (for the response's age).
    func store(
        _ response: TransportResponse, request: TransportRequest, api: ServerAPI, requestTime: Date,
        in cache: any CachePolicy, key: CacheKey
    ) async {
        guard case .data(let body) = response.body, api.isCacheableMethod, api.cacheMode.writesCache,
            configuration.honorsHTTPCacheHeaders || (200..<300).contains(response.status)
        else { return }
        let control = CacheControl(response.headers)
        let requestControl = CacheControl(request.headers, isRequest: true)
        guard
            HTTPCacheRules.mayStore(
                status: response.status, response: control, headers: response.headers, request: requestControl,
                requestHeaders: request.headers)
        else {
            return
        }
        let now = configuration.now()
        let headers = HTTPCacheRules.storedHeaders(response.headers)
        let initialAge = HTTPCacheRules.initialAge(headers: headers, requestTime: requestTime, responseTime: now)
        var entry = CacheEntry(
            status: response.status, headers: headers, body: body, url: response.url, storedAt: now,
            expiresAt: nil, initialAge: .seconds(initialAge))
        entry.expiresAt = expiry(of: entry, control: control, api: api)
        await store(entry, requestHeaders: variantHeaders(of: request), api: api, in: cache, key: key)
    }

    /// Stores an entry under the URL's key and, when it varies, under its variant's key too, in the URL's
    /// group of variants (kept while the fields it varies on stay the same).
    func store(
        _ entry: CacheEntry, requestHeaders: HTTPHeaders, api: ServerAPI, in cache: any CachePolicy, key: CacheKey
    ) async {
        var entry = entry
        var names = Set(Vary(entry.headers).names)
        for name in api.varyingHeaders { names.insert(name.lowercased()) }
        // A URL's user-info is sent as `Authorization` (`URLUserInfo`): two users of one URL never share a response.
        if api.carriesUserInfo { names.insert("authorization") }
        entry.variant = CacheVariant(names: names.sorted(), request: requestHeaders)
        guard !names.isEmpty else {
            entry.variantGroup = nil
            try? await cache.store(entry, for: key)
            return
        }
        if let current = try? await cache.lookup(key), let group = current.variantGroup,
            current.variant.names == entry.variant.names
        {
            entry.variantGroup = group
        } else {
            entry.variantGroup = UUID().uuidString
        }
        // A cache that cannot store (disk full, read-only) must not fail a call that succeeded.
        try? await cache.store(entry, for: key.variant(group: entry.variantGroup ?? "", entry.variant))
        try? await cache.store(entry, for: key)
    }

    /// After an unsafe request's non-error response: removes what the cache holds for its URL and for the
    /// `Location` and `Content-Location` of the same origin (RFC 9111 §4.4), whatever the call's cache mode.
    @inline(never)
    func invalidate(after response: TransportResponse, to request: TransportRequest) async {
        guard let cache else { return }
        let urls = HTTPCacheRules.invalidatedURLs(
            method: request.method, status: response.status, url: request.url, headers: response.headers)
        for url in urls {
            var target = request
            target.url = url
            target.body = .empty
            for method in [HTTPMethod.get, .head] {
                target.method = method
                try? await cache.remove(CacheKey(request: target))
            }
            if !HTTPCacheRules.isSafe(request.method) {
                target.method = request.method
                try? await cache.remove(CacheKey(request: target))
            }
        }
    }

    /// After an unsafe request's response: the invalidation of RFC 9111 §4.4, then, for a `POST` whose success
    /// names its own URL as `Content-Location` and has explicit freshness, that response stored as the URL's
    /// `GET` (RFC 9110 §9.3.3), when the call's mode writes the cache.
    @inline(never)
    func afterUnsafe(
        _ response: TransportResponse, to request: TransportRequest, api: ServerAPI, requestTime: Date
    ) async {
        await invalidate(after: response, to: request)
        guard let cache, request.method == .post, api.cacheMode.writesCache, (200..<300).contains(response.status),
            let location = response.headers["Content-Location"],
            URL(string: location, relativeTo: request.url)?.absoluteURL == request.url,
            HTTPCacheRules.hasExplicitFreshness(CacheControl(response.headers), response.headers)
        else { return }
        var get = request
        get.method = .get
        get.body = .empty
        var asGet = api
        asGet.method = .get
        await store(
            response, request: get, api: asGet, requestTime: requestTime, in: cache, key: CacheKey(request: get))
    }

    /// When a stored entry stops being fresh. The call's TTL replaces what the headers say; else, when HTTP
    /// cache headers are honoured, their freshness lifetime (RFC 9111 §4.2.1) counted from the response's
    /// generation; a response without one gets the manager's `defaultCacheTTL` (if its status may be cached by
    /// heuristics). `no-cache` makes it stale at once whatever the TTL.
    func expiry(of entry: CacheEntry, control: CacheControl, api: ServerAPI) -> Date {
        if control.noCache && configuration.honorsHTTPCacheHeaders { return entry.storedAt }
        if let ttl = api.cacheTTL { return entry.storedAt.addingTimeInterval(ttl.seconds) }
        guard configuration.honorsHTTPCacheHeaders else {
            return entry.storedAt.addingTimeInterval(configuration.defaultCacheTTL.seconds)
        }
        let lifetime =
            HTTPCacheRules.freshnessLifetime(
                status: entry.status, control: control, headers: entry.headers, responseTime: entry.storedAt)
            ?? ((200..<300).contains(entry.status) ? configuration.defaultCacheTTL.seconds : 0)
        return entry.storedAt.addingTimeInterval(lifetime - entry.initialAge.seconds)
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

extension CacheKey {
    /// The key of a URL's stored variant: the URL's key, the group, and the variant's fields.
    func variant(group: String, _ variant: CacheVariant) -> CacheKey {
        var text = rawValue + " variant=" + group
        for field in variant.fields {
            text += " " + field.name + "=" + (field.value.map { SHA256.hex($0.utf8) } ?? "-")
        }
        return CacheKey(rawValue: text)
    }
}

// MARK: - Revalidation

extension ServerAPIManager {
    /// A conditional request made from a stored entry's validators (`ETag`, `Last-Modified`),
    /// so that the server can answer 304 Not Modified instead of the whole body.
    struct Revalidation: Sendable {
        /// The stored entry.
        let entry: CacheEntry
        /// The call, accepting 304 as well.
        let api: ServerAPI
        /// The request, with `If-None-Match` / `If-Modified-Since`.
        let base: TransportRequest

        /// The stored response, its headers updated with those of the 304 (RFC 9111 §4.3.4).
        func refreshedResponse(_ response: TransportResponse) -> TransportResponse {
            TransportResponse(
                status: entry.status, headers: HTTPCacheRules.merge(entry.headers, response.headers),
                body: .data(entry.body), url: entry.url, metrics: response.metrics)
        }
    }

    /// The conditional request that revalidates a stored entry (RFC 9111 §4.3.1), or `nil` when the call sets
    /// its own validators or the entry has neither an `ETag` nor a `Last-Modified`.
    func revalidation(of entry: CacheEntry, for api: ServerAPI, base: TransportRequest) -> Revalidation? {
        guard !base.headers.contains("If-None-Match"), !base.headers.contains("If-Modified-Since") else { return nil }
        let etag = entry.headers["ETag"]
        let lastModified = entry.headers["Last-Modified"]
        guard etag != nil || lastModified != nil else { return nil }
        var request = base
        if let etag { request.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified { request.headers.add(name: "If-Modified-Since", value: lastModified) }
        var conditional = api
        switch api.acceptableStatus {
        case .any: break
        case .successful: conditional.acceptableStatus = .codes(Set(200..<300).union([304]))
        case .codes(let codes): conditional.acceptableStatus = .codes(codes.union([304]))
        }
        return Revalidation(entry: entry, api: conditional, base: request)
    }

    /// After a 304: stores the entry again as just received, with the 304's fields merged in, its age and
    /// freshness computed anew from them.
    /// - Parameters:
    ///   - notModified: The 304's fields and when it arrived.
    func refresh(
        _ revalidation: Revalidation, with notModified: (headers: HTTPHeaders, receivedAt: Date), api: ServerAPI,
        requestTime: Date, in cache: any CachePolicy, key: CacheKey
    ) async {
        let (update, receivedAt) = notModified
        var entry = revalidation.entry
        entry.headers = HTTPCacheRules.storedHeaders(HTTPCacheRules.merge(entry.headers, update))
        entry.storedAt = receivedAt
        entry.initialAge = .seconds(
            HTTPCacheRules.initialAge(headers: update, requestTime: requestTime, responseTime: receivedAt))
        let control = CacheControl(entry.headers)
        if control.noStore && !control.mustUnderstand {
            try? await cache.remove(key)
            return
        }
        entry.expiresAt = expiry(of: entry, control: control, api: api)
        await store(entry, requestHeaders: variantHeaders(of: revalidation.base), api: api, in: cache, key: key)
    }

    /// After a `200` to a `HEAD` (RFC 9111 §4.3.5): the stored `GET` response of the same URL and variant, when the
    /// HEAD describes it (`HTTPCacheRules.headDescribes`), gets the HEAD's fields and a freshness computed anew from
    /// them, as after a 304; when it does not, the stored response is made stale, so that its next use
    /// revalidates.
    /// - Returns: The updated stored fields, which the HEAD's caller gets (those the HEAD did not carry included);
    ///   `nil` when nothing was updated.
    func updateStoredGET(
        after response: TransportResponse, to request: TransportRequest, api: ServerAPI, requestTime: Date,
        in cache: any CachePolicy
    ) async -> HTTPHeaders? {
        var get = request
        get.method = .get
        get.body = .empty
        let key = CacheKey(request: get)
        let requestHeaders = variantHeaders(of: request)
        guard var entry = await storedResponses(key: key, headers: requestHeaders).fitting, entry.status == 200 else {
            return nil
        }
        var asGet = api
        asGet.method = .get
        guard HTTPCacheRules.headDescribes(stored: entry.headers, bodyLength: entry.body.count, head: response.headers)
        else {
            entry.expiresAt = entry.storedAt.addingTimeInterval(-entry.initialAge.seconds)
            await store(entry, requestHeaders: requestHeaders, api: asGet, in: cache, key: key)
            return nil
        }
        let now = configuration.now()
        entry.headers = HTTPCacheRules.storedHeaders(HTTPCacheRules.merge(entry.headers, response.headers))
        entry.storedAt = now
        entry.initialAge = .seconds(
            HTTPCacheRules.initialAge(headers: response.headers, requestTime: requestTime, responseTime: now))
        let control = CacheControl(entry.headers)
        if control.noStore && !control.mustUnderstand {
            try? await cache.remove(key)
            return nil
        }
        entry.expiresAt = expiry(of: entry, control: control, api: asGet)
        await store(entry, requestHeaders: requestHeaders, api: asGet, in: cache, key: key)
        return entry.headers
    }

    /// Revalidates a stored response in the background, for a call it answered stale within
    /// `stale-while-revalidate` (RFC 5861): a call of its own (new id, same tag, so `cancel(tag:)` reaches it)
    /// that loads conditionally and stores what it gets; its result and failure go nowhere.
    func revalidateInBackground(_ api: ServerAPI) {
        var background = api
        background.id = .next()
        background.cacheMode = .loadElseReturnCache
        let id = background.id
        let revalidations = controls.revalidations
        let task = Task {
            _ = try? await self.send(background)
            _ = revalidations.withLock { $0.removeValue(forKey: id) }
        }
        revalidations.withLock { tasks in
            // A task that already ended has removed nothing yet: it is added, then removed by no one.
            if !task.isCancelled { tasks[id] = task }
        }
    }

    /// Waits until the background revalidations started so far have ended (for tests and orderly shutdown).
    public func backgroundRevalidationsFinished() async {
        while let task = controls.revalidations.withLock({ $0.values.first }) {
            await task.value
            _ = controls.revalidations.withLock { tasks in
                tasks.first(where: { $0.value == task }).map { tasks.removeValue(forKey: $0.key) }
            }
        }
    }
}
