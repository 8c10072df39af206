#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        /// The headers of the 304, once one arrived.
        let notModified = NotModifiedHeaders()

        /// The stored response, its headers updated with those of the 304 (RFC 9111 §4.3.4).
        func refreshedResponse(_ response: TransportResponse) -> TransportResponse {
            TransportResponse(
                status: entry.status, headers: HTTPCacheRules.merge(entry.headers, response.headers),
                body: .data(entry.body), url: entry.url, metrics: response.metrics)
        }
    }

    /// Holds the headers of a 304, and when it arrived, between the formatting of the result and
    /// the refresh of the entry.
    final class NotModifiedHeaders: Sendable {
        private let state = Locked<(headers: HTTPHeaders, receivedAt: Date)?>(nil)
        var value: (headers: HTTPHeaders, receivedAt: Date)? { state.withLock { $0 } }
        func set(_ headers: HTTPHeaders, receivedAt date: Date) { state.withLock { $0 = (headers, date) } }
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
    func refresh(
        _ revalidation: Revalidation, api: ServerAPI, requestTime: Date, in cache: any CachePolicy, key: CacheKey
    ) async {
        guard let (update, receivedAt) = revalidation.notModified.value else { return }
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
        guard var entry = await storedEntry(key: key, headers: requestHeaders), entry.status == 200 else { return nil }
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
