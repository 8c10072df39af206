#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The cache's steps: what to do is `CacheDecision`'s to say (a pure value); these look up, serve, store and remove
// as it says.
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
        guard hasCache, api.usesCache else { return nil }
        return CacheKey(request: base)
    }

    /// What the cache holds for a call, for `CacheDecision.before`: looked up only when the call's mode reads the
    /// cache. A call that asks for part of a response (`Range`) is answered from it only as that part, never as
    /// the whole.
    @inline(never)
    func lookup(for call: Call, _ decision: CacheDecision) async -> CacheDecision.Lookup {
        guard hasCache else { return .noCache }
        guard let key = call.cacheKey else { return .notCacheable }
        guard decision.mode.readsCache else { return .found(CacheDecision.Stored()) }
        return .found(await stored(key, headers: decision.variantHeaders(of: call.request), decision))
    }

    /// What the cache holds under `key` for a request with the given `headers` (see `CacheDecision.Stored`).
    func stored(_ key: CacheKey, headers: HTTPHeaders, _ decision: CacheDecision) async -> CacheDecision.Stored {
        guard let cache, let primary = await entry(key, in: cache, decision) else { return CacheDecision.Stored() }
        if primary.variant.matches(headers, stored: primary.headers) {
            return CacheDecision.Stored(fitting: primary, latest: primary)
        }
        guard let group = primary.variantGroup else { return CacheDecision.Stored(latest: primary) }
        let variantKey = key.variant(group: group, CacheVariant(names: primary.variant.names, request: headers))
        guard let entry = await entry(variantKey, in: cache, decision), entry.variantGroup == group,
            entry.variant.matches(headers, stored: entry.headers)
        else { return CacheDecision.Stored(latest: primary) }
        return CacheDecision.Stored(fitting: entry, latest: primary)
    }

    /// The entry under `key`, unless the decision says it outlived `maxStaleAge`: that one is removed.
    private func entry(_ key: CacheKey, in cache: any CachePolicy, _ decision: CacheDecision) async -> CacheEntry? {
        guard let entry = try? await cache.lookup(key) else { return nil }
        guard decision.outlived(entry, at: configuration.now()) else { return entry }
        try? await cache.remove(key)
        return nil
    }

    /// The cached result of a call that may be shown before the network answers (`returnCacheThenLoad`):
    /// `CacheDecision.firstResult`; `nil` when there is none.
    func cachedResult(for api: ServerAPI) async throws -> ServerResult? {
        let base = try api.transportRequest()
        guard hasCache, let key = cacheKey(for: api, base: base) else { return nil }
        let call = Call(
            api: api, request: base, cacheKey: key,
            interceptor: api.businessRules.interceptor(over: configuration.businessRules), registry: nil)
        let decision = CacheDecision(api, configuration)
        let found = await stored(key, headers: decision.variantHeaders(of: base), decision)
        guard let answer = decision.firstResult(found.fitting, request: base, at: configuration.now()) else {
            return nil
        }
        return try deliverFromCache(answer, call, ResultFinishing(formatter: formatter))
    }

    /// Answers a call with a stored response as the decision made it, a status the call does not accept failing
    /// as the network's would.
    @inline(never)
    func deliverFromCache<F: CallFinishing>(
        _ answer: CacheDecision.Answer, _ call: Call, _ finisher: F
    ) throws -> F.Value {
        let (response, source) = answer.response(at: configuration.now())
        call.stampStatus(response.status)
        guard call.api.acceptableStatus.accepts(response.status) else {
            throw ServerAPIError.httpStatus(response.status, body: response.data, url: response.url)
        }
        return try deliver(response, source: source, metrics: call.metrics, call, finisher)
    }

    /// What the cache does with a whole response (or a refused status's), by `CacheDecision.after`: the stored `GET`
    /// a `HEAD` describes is found, and the changes to make at once are made. The rest (what to serve, what to store
    /// once the caller's value is made) is returned.
    @inline(never)
    func cacheAfter(
        _ response: TransportResponse, to request: TransportRequest, _ call: Call,
        conditional: CacheDecision.Conditional?, accepted: Bool, requestTime: Date
    ) async -> CacheDecision.After {
        let decision = CacheDecision(call.api, configuration)
        var storedGET: CacheEntry?
        if let get = decision.storedGET(describedBy: response, to: request, key: call.cacheKey, accepted: accepted) {
            storedGET = await stored(get.key, headers: get.variantHeaders, decision).fitting
        }
        let after = decision.after(
            response, to: request, key: call.cacheKey, accepted: accepted, conditional: conditional,
            storedGET: storedGET, requestTime: requestTime, responseTime: configuration.now())
        await apply(after.changes)
        return after
    }

    /// Makes changes to the cache, in order. An entry that varies is stored under its variant's key too, in the
    /// URL's group of variants (kept while the fields it varies on stay the same). A cache that cannot store or
    /// remove (disk full, read-only) must not fail a call that succeeded.
    func apply(_ changes: [CacheDecision.Change]) async {
        guard let cache else { return }
        for change in changes {
            switch change {
            case .remove(let key):
                try? await cache.remove(key)
            case .store(var entry, let key) where entry.variant.fields.isEmpty:
                entry.variantGroup = nil
                try? await cache.store(entry, for: key)
            case .store(var entry, let key):
                if let current = try? await cache.lookup(key), let group = current.variantGroup,
                    current.variant.names == entry.variant.names
                {
                    entry.variantGroup = group
                } else {
                    entry.variantGroup = UUID().uuidString
                }
                try? await cache.store(entry, for: key.variant(group: entry.variantGroup ?? "", entry.variant))
                try? await cache.store(entry, for: key)
            }
        }
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
    package func backgroundRevalidationsFinished() async {
        while let task = controls.revalidations.withLock({ $0.values.first }) {
            await task.value
            _ = controls.revalidations.withLock { tasks in
                tasks.first(where: { $0.value == task }).map { tasks.removeValue(forKey: $0.key) }
            }
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
