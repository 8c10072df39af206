import Foundation

extension ServerAPIManager {
    /// Turns a response into what the caller asked for: a `ServerResult` or a decoded model.
    typealias Finish<T> = @Sendable (TransportResponse, ResultSource, RequestMetrics) throws -> T

    /// Runs a call in its caller's task, registered in the in-flight registry with a cancellation
    /// token, so that it can be cancelled by id, tag, first, last or all as well as by the caller's task.
    ///
    /// No task is made for the call: the registry fires the token, and whatever the call waits on
    /// (the transport, a retry wait, a shared flight) observes it.
    func run<T: Sendable>(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)?, finish: @escaping Finish<T>
    ) async throws -> T {
        var base = try api.transportRequest()
        let startedAt = Date()
        let token = CancellationToken()
        base.cancellation = token
        let info = InFlightRequest(id: api.id, tag: api.tag, method: api.method, url: base.url, startedAt: startedAt)
        let entry = registerCall(info, for: api, token: token)
        defer { registry.remove(entry) }
        do {
            return try await controlled(api, base: base, progress: progress, startedAt: startedAt, finish: finish)
        } catch {
            throw decorate(error, for: api, url: base.url, queuedAt: startedAt)
        }
    }

    func execute<T: Sendable>(
        _ api: ServerAPI, base: TransportRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        startedAt: Date, finish: Finish<T>
    ) async throws -> T {
        let clockStart = ContinuousClock.now
        var metrics = RequestMetrics(attempts: 0, startedAt: startedAt)
        let cacheKey = self.cacheKey(for: api, base: base)

        if let cache, let cacheKey, api.cacheMode == .returnCacheElseLoad || api.cacheMode == .cacheOnly {
            if let entry = try? await cache.lookup(cacheKey), api.cacheMode == .cacheOnly || entry.isFresh() {
                metrics.duration = ContinuousClock.now - clockStart
                return try finishFromCache(entry, api: api, metrics: metrics, finish: finish)
            }
            if api.cacheMode == .cacheOnly {
                throw ServerAPIError(.cacheMiss, "the cache has no entry for this call", requestID: api.id, url: base.url)
            }
        }
        if api.cacheMode == .cacheOnly {
            let reason =
                cache == nil ? "no cache is configured" : "\(api.method) responses are not cacheable for this call"
            throw ServerAPIError(
                .cacheMiss, "\(reason): a cache-only call cannot be answered", requestID: api.id, url: base.url)
        }

        do {
            if configuration.honorsHTTPCacheHeaders,
                let revalidation = await revalidation(for: api, base: base, key: cacheKey)
            {
                return try await attempts(
                    revalidating: revalidation, api, progress: progress, clockStart: clockStart, metrics: &metrics,
                    cacheKey: cacheKey, finish: finish)
            }
            return try await attempts(
                api, base: base, progress: progress, clockStart: clockStart, metrics: &metrics, cacheKey: cacheKey,
                finish: finish)
        } catch let error as ServerAPIError where api.cacheMode == .loadElseReturnCache && Self.isOfflineFailure(error) {
            guard let cache, let cacheKey, let entry = try? await cache.lookup(cacheKey) else { throw error }
            metrics.duration = ContinuousClock.now - clockStart
            return try finishFromCache(entry, api: api, metrics: metrics, finish: finish)
        }
    }

    // swift-format-ignore
    private func attempts<T: Sendable>(
        _ api: ServerAPI, base: TransportRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        clockStart: ContinuousClock.Instant, metrics: inout RequestMetrics, cacheKey: CacheKey?, finish: Finish<T>
    ) async throws -> T {
        var attempt = 0
        var pluginRetries = 0
        while true {
            attempt += 1
            metrics.attempts = attempt
            if base.isCancelled { throw complete(api, metrics, .cancelled().with(requestID: api.id, url: base.url)) }
            var request = base
            request.attempt = attempt
            request.progress = progress
            for field in configuration.defaultHeaders where !request.headers.contains(field.name) {
                request.headers.add(name: field.name, value: field.value)
            }
            var lastResponse: TransportResponse?
            do {
                for plugin in plugins { request = try await plugin.prepare(request, for: api) }
                for plugin in plugins { plugin.willSend(request, for: api) }
                let response: TransportResponse
                metrics.markAttemptStart()
                do {
                    response = try await perform(request)
                } catch {
                    let wrapped = ServerAPIError.wrap(error).with(requestID: api.id, url: request.url)
                    for plugin in plugins { plugin.didReceive(.failure(wrapped), for: request, api: api) }
                    throw wrapped
                }
                lastResponse = response
                metrics.transport = response.metrics
                for plugin in plugins { plugin.didReceive(.success(response), for: request, api: api) }
                guard api.acceptableStatus.accepts(response.status) else {
                    var error = ServerAPIError.httpStatus(response.status, body: response.data, url: response.url)
                    error.requestID = api.id
                    throw error
                }
                var processed = response
                for plugin in plugins { processed = try await plugin.process(processed, for: api) }
                metrics.duration = ContinuousClock.now - clockStart
                let value = try finish(processed, .network, metrics)
                if let cache, let cacheKey, api.cacheMode.writesCache { await store(processed, api: api, in: cache, key: cacheKey) }
                _ = complete(api, metrics, nil)
                return value
            } catch {
                var failure = ServerAPIError.wrap(error).with(requestID: api.id, url: request.url)
                if request.isCancelled && failure.kind != .cancelled { failure = .cancelled().with(requestID: api.id, url: request.url) }
                if failure.kind == .cancelled { throw complete(api, metrics, failure) }
                guard let delay = await retryDelay(after: failure, response: lastResponse, request: request, api: api, attempt: attempt, pluginRetries: &pluginRetries) else {
                    metrics.duration = ContinuousClock.now - clockStart
                    throw complete(api, metrics, failure)
                }
                if delay > .zero {
                    do {
                        try await wait(delay, cancellation: request.cancellation)
                    } catch {
                        throw complete(api, metrics, ServerAPIError(.cancelled, "the request was cancelled while waiting to retry", requestID: api.id, url: request.url))
                    }
                }
            }
        }
    }

    /// Hands a request to the transport. One that does not observe the call's token runs in a task of
    /// its own, which the token cancels, so that the registry can end it too.
    private func perform(_ request: TransportRequest) async throws -> TransportResponse {
        let transport = self.transport
        guard !transport.observesCancellationToken, let cancellation = request.cancellation else {
            return try await transport.perform(request)
        }
        let task = Task { try await transport.perform(request) }
        return try await cancellation.withCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    /// Sleeps on the manager's clock; throws when the caller's task or the call's token is cancelled.
    private func wait(_ delay: Duration, cancellation: CancellationToken?) async throws {
        let clock = configuration.clock
        guard let cancellation else { return try await clock.sleep(for: delay) }
        // The clock's sleep ends early only for task cancellation: a retry wait is rare enough to
        // afford a task that the token can cancel.
        let sleeper = Task { try await clock.sleep(for: delay) }
        try await cancellation.withCancellationHandler {
            try await sleeper.value
        } onCancel: {
            sleeper.cancel()
        }
    }

    /// The wait before the next attempt, or `nil` when the call must not be retried.
    private func retryDelay(
        after error: ServerAPIError, response: TransportResponse?, request: TransportRequest, api: ServerAPI,
        attempt: Int, pluginRetries: inout Int
    ) async -> Duration? {
        var decision = RetryDecision.useDefault
        for plugin in plugins {
            decision = await plugin.shouldRetry(after: error, request: request, api: api, attempt: attempt)
            if decision != .useDefault { break }
        }
        let policy = api.retryPolicy
        switch decision {
        case .doNotRetry:
            return nil
        case .retry, .retryAfter:
            guard pluginRetries < configuration.maxPluginRetries else { return nil }
            pluginRetries += 1
            if case .retryAfter(let delay) = decision { return delay }
            return policy.delay(forRetry: attempt)
        case .useDefault:
            guard attempt <= api.retryCount, api.isRetryable, policy.shouldRetry(error) else { return nil }
            if policy.honorsRetryAfter, let wait = RetryPolicy.retryAfter(response?.headers["Retry-After"]) {
                return wait <= policy.maxRetryAfter ? wait : nil
            }
            return policy.delay(forRetry: attempt)
        }
    }

    private func complete(_ api: ServerAPI, _ metrics: RequestMetrics, _ error: ServerAPIError?) -> ServerAPIError {
        let error = error.map { attachMetrics(metrics, to: $0) }
        for plugin in plugins { plugin.didComplete(api, metrics: error?.metrics ?? metrics, error: error) }
        return error ?? .cancelled()
    }

    // MARK: Cache

    /// The cached result of a call, fresh or not, formatted; `nil` when there is none.
    func cachedResult(for api: ServerAPI) async throws -> ServerResult? {
        let base = try api.transportRequest()
        guard let cache, let key = cacheKey(for: api, base: base), let entry = try? await cache.lookup(key) else {
            return nil
        }
        let formatter = self.formatter
        return try finishFromCache(entry, api: api, metrics: RequestMetrics()) { response, source, metrics in
            ServerResult(
                value: try formatter.format(response, for: api), status: response.status, headers: response.headers,
                url: response.url, requestID: api.id, source: source, metrics: metrics)
        }
    }

    private func finishFromCache<T>(
        _ entry: CacheEntry, api: ServerAPI, metrics: RequestMetrics, finish: Finish<T>
    ) throws -> T {
        let response = TransportResponse(
            status: entry.status, headers: entry.headers, body: .data(entry.body), url: entry.url,
            metrics: TransportMetrics(transport: "cache", bytesReceived: Int64(entry.body.count)))
        let age = Duration.seconds(max(0, Date().timeIntervalSince(entry.storedAt)))
        let value = try finish(response, .cache(storedAt: entry.storedAt, age: age), metrics)
        _ = complete(api, metrics, nil)
        return value
    }

    /// The attempts of a conditional call: a 304 is answered with the stored entry (marked as
    /// from the cache, age zero), which is then stored again as fresh.
    private func attempts<T: Sendable>(
        revalidating revalidation: Revalidation, _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)?,
        clockStart: ContinuousClock.Instant, metrics: inout RequestMetrics, cacheKey: CacheKey?, finish: Finish<T>
    ) async throws -> T {
        let value = try await attempts(
            revalidation.api, base: revalidation.base, progress: progress, clockStart: clockStart, metrics: &metrics,
            cacheKey: cacheKey
        ) { response, source, metrics in
            guard response.status == 304 else { return try finish(response, source, metrics) }
            let now = Date()
            revalidation.notModified.set(response.headers, receivedAt: now)
            return try finish(revalidation.refreshedResponse(response), .cache(storedAt: now, age: .zero), metrics)
        }
        if let cache, let cacheKey { await refresh(revalidation, api: api, in: cache, key: cacheKey) }
        return value
    }

    private func store(_ response: TransportResponse, api: ServerAPI, in cache: any CachePolicy, key: CacheKey) async {
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
