#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ServerAPIManager {
    /// Answers a call from the cache where its mode says so, else runs its attempts (conditional when
    /// a stored entry can be revalidated), falling back to the cache when the mode allows it offline.
    /// A streamed call goes straight to its attempts. The cache's steps are functions of their own (see the
    /// frame rules in ServerAPIManager+Run.swift).
    func execute<F: CallFinishing>(
        _ call: Call, _ finisher: F, record: ThrottleRecord? = nil
    ) async throws -> F.Value {
        if finisher.streams { return try await attempts(call, revalidation: nil, finisher, record: nil) }
        // Without a cache there is nothing to look up, revalidate or fall back to.
        guard cache != nil || call.api.cacheMode == .cacheOnly else {
            return try await attempts(call, revalidation: nil, finisher, record: record)
        }
        return try await executeWithCache(call, finisher, record: record)
    }

    /// `execute` for a call that may use the cache: the stored response that fits it answers when its mode and
    /// `CacheUse` allow; otherwise the call loads, conditionally when the stored response has validators, and a
    /// failure may still be answered from storage (RFC 9111 §4.2.4 when cut off, `stale-if-error`, the offline
    /// fallback). The layering of the modes over HTTP is the Caching article's.
    @inline(never)
    private func executeWithCache<F: CallFinishing>(
        _ call: Call, _ finisher: F, record: ThrottleRecord?
    ) async throws -> F.Value {
        let api = call.api
        var stored = api.cacheMode.readsCache ? await storedEntry(for: call) : nil
        var usage = stored.map { use(of: $0, for: call) }
        if let stored, let usage, let value = try answerFromCache(stored, usage, call, finisher) { return value }
        // A request for part of a response is the server's to answer, unless a stored whole answered it above.
        if call.request.headers.contains("Range") { (stored, usage) = (nil, nil) }
        if api.cacheMode == .cacheOnly
            || (configuration.honorsHTTPCacheHeaders
                && CacheControl(call.request.headers, isRequest: true).onlyIfCached)
        {
            throw cacheMiss(call, stored: stored != nil)
        }
        let requestTime = configuration.now()
        var revalidation: Revalidation?
        if let stored, configuration.honorsHTTPCacheHeaders,
            api.cacheMode == .returnCacheElseLoad || api.cacheMode == .loadElseReturnCache
        {
            revalidation = self.revalidation(of: stored, for: api, base: call.request)
        }
        // A stored response that may stand in for a failed call (cut off from the server, `stale-if-error`, the offline
        // fallback) stands in for a 5xx too, even one the call accepts: RFC 9111 §4.3.3 lets a cache treat a 5xx to a
        // revalidation as no answer, and RFC 5861 counts 500, 502, 503 and 504 as errors.
        let fallsBack =
            stored != nil
            && usage.map { api.cacheMode == .loadElseReturnCache ? $0.mayAnswerOffline : $0.answersOnError } == true
        do {
            let value = try await attempts(
                call, revalidation: revalidation, finisher, record: record, refusesServerErrors: fallsBack)
            if let revalidation, let cache, let key = call.cacheKey {
                await refresh(revalidation, api: api, requestTime: requestTime, in: cache, key: key)
            }
            return value
        } catch let error as ServerAPIError where Self.isOfflineFailure(error) {
            guard let stored, let usage,
                api.cacheMode == .loadElseReturnCache ? usage.mayAnswerOffline : usage.answersOnError
            else { throw error }
            call.stampDuration()
            return try deliverFromCache(stored, call, finisher)
        }
    }

    /// The stored answer of a call, when its mode reads the cache first and `CacheUse` allows (fresh; stale
    /// within `stale-while-revalidate`, revalidated in the background; for `cacheOnly`, whatever may be served
    /// offline); `nil` when the call goes to the network.
    @inline(never)
    private func answerFromCache<F: CallFinishing>(
        _ stored: CacheEntry, _ use: CacheUse, _ call: Call, _ finisher: F
    ) throws -> F.Value? {
        var range: Range<Int>?
        if let value = call.request.headers["Range"] {
            // Only a fresh stored whole answers a request for part of it, as that part; If-Range is the server's.
            guard stored.status == 200, !call.request.headers.contains("If-Range"),
                let part = HTTPCacheRules.byteRange(value, length: stored.body.count)
            else { return nil }
            range = part
        }
        switch call.api.cacheMode {
        case .returnCacheElseLoad:
            if use.answersFresh { break }
            guard range == nil, use.answersWhileRevalidating else { return nil }
            revalidateInBackground(call.api)
        case .cacheOnly:
            guard use.answersFresh || use.mayAnswerOffline else { return nil }
        default:
            return nil
        }
        call.stampDuration()
        // The call's own validators, when the stored response meets them, are answered here as the server would.
        let notModified =
            stored.status == 200 && range == nil
            && HTTPCacheRules.notModified(request: call.request.headers, stored: stored.headers) == true
        return try deliverFromCache(stored, call, finisher, range: range, notModified: notModified)
    }

    /// The `cacheMiss` error of a call that may only be answered from the cache.
    private func cacheMiss(_ call: Call, stored: Bool) -> ServerAPIError {
        let api = call.api
        let reason =
            cache == nil
            ? "no cache is configured"
            : call.cacheKey == nil
                ? "\(api.method) responses are not cacheable for this call"
                : stored ? "the stored response must be revalidated" : "the cache has no entry for this call"
        return ServerAPIError(
            .cacheMiss, "\(reason): a cache-only call cannot be answered", requestID: api.id, url: call.url)
    }

    /// The retry loop every call runs, whole or streamed, until the call succeeds, fails for good, or is
    /// cancelled: each attempt runs the plugins' `prepare` and `willSend` and then `attempt`; a failure asks
    /// the retry policy and the plugins whether to try again, and waits on the manager's clock
    /// (`retryOrEnd`). A cancellation, or a failure not retried, completes the call (`didComplete`) and is
    /// thrown. A conditional call (`revalidation`) accepts 304 and carries the stored entry's validators; with
    /// `refusesServerErrors`, a 5xx is an `httpStatus` error whatever the call accepts, so that a stored response
    /// can answer instead.
    private func attempts<F: CallFinishing>(
        _ call: Call, revalidation: Revalidation?, _ finisher: F, record: ThrottleRecord?,
        refusesServerErrors: Bool = false
    ) async throws -> F.Value {
        var api = revalidation?.api ?? call.api
        if refusesServerErrors { api.acceptableStatus = api.acceptableStatus.refusingServerErrors }
        let base = revalidation?.base ?? call.request
        var number = 0
        var pluginRetries = 0
        depositRetryBudget(api: api, url: base.url)
        while true {
            number += 1
            call.stampAttempt(number)
            if !call.attemptStarted(number) {
                throw complete(call, .cancelled())
            }
            var request = attemptRequest(base, number: number, of: call)
            // The response the attempt got, so that a failure can honour its `Retry-After`.
            var lastResponse: TransportResponse?
            do {
                if !plugins.isEmpty { try await prepareByPlugins(&request, api: api) }
                // Checked again only when a default header or a plugin changed what `prepare` checks.
                if !request.isPrepared { try request.prepare() }
                for plugin in plugins { plugin.willSend(request, for: api) }
                call.stampAttemptStart()
                return try await attempt(
                    request, call, api: api, revalidation: revalidation, finisher, record: record,
                    lastResponse: &lastResponse)
            } catch {
                try await retryOrEnd(
                    after: error, call, api: api, request: request, lastResponse: lastResponse, attempt: number,
                    pluginRetries: &pluginRetries)
            }
        }
    }

    /// One attempt, from the exchange to the caller's value. The one difference between a whole and a
    /// streamed call is here: the transport's `perform` or `stream`, and after the exchange the delivery (and
    /// the cache's store) or the hand-over of the head and body. Not inlined into the loop, whose frame would
    /// then hold both.
    @inline(never)
    private func attempt<F: CallFinishing>(
        _ request: TransportRequest, _ call: Call, api: ServerAPI, revalidation: Revalidation?, _ finisher: F,
        record: ThrottleRecord?, lastResponse: inout TransportResponse?
    ) async throws -> F.Value {
        if let completion = finisher.streamCompletion {
            let head = try await exchange(request, call, api: api, lastResponse: &lastResponse, streams: true)
            if cache != nil, !HTTPCacheRules.isSafe(request.method) { await invalidate(after: head, to: request) }
            call.stampDuration()
            return try handOver(head, call, finisher, completion: completion)
        }
        let requestTime = cache == nil ? Date.distantPast : configuration.now()
        var processed: TransportResponse
        do {
            processed = try await exchange(request, call, api: api, lastResponse: &lastResponse, streams: false)
        } catch let error as ServerAPIError where error.kind == .httpStatus && cache != nil {
            // A status the call does not accept is stored too when HTTP allows (a 404 with `max-age`), and an
            // unsafe request's redirect invalidates.
            if let response = lastResponse { await cacheRefused(response, request, call, api: api, requestTime) }
            throw error
        }
        if cache != nil, !HTTPCacheRules.isSafe(request.method) {
            await afterUnsafe(processed, to: request, api: api, requestTime: requestTime)
        }
        call.stampDuration()
        var source = ResultSource.network
        if let revalidation, processed.status == 304 {
            // Not modified: the stored entry answers, marked as from the cache and just received.
            let now = configuration.now()
            revalidation.notModified.set(processed.headers, receivedAt: now)
            processed = revalidation.refreshedResponse(processed)
            call.stampStatus(processed.status)
            source = .cache(storedAt: now, age: .zero)
        }
        if case .network = source, request.method == .head, processed.status == 200, let cache, call.cacheKey != nil,
            let updated = await updateStoredGET(
                after: processed, to: request, api: api, requestTime: requestTime, in: cache)
        {
            processed.headers = updated
        }
        let value = try deliver(processed, source: source, metrics: call.metrics, call, finisher, record: record)
        if case .network = source, let cache, let key = call.cacheKey {
            await store(processed, request: request, api: api, requestTime: requestTime, in: cache, key: key)
        }
        completeSucceeded(call)
        return value
    }

    /// What the cache does with a response whose status the call refused: stored when HTTP allows, and, for an
    /// unsafe request, the invalidation a 3xx asks for.
    @inline(never)
    private func cacheRefused(
        _ response: TransportResponse, _ request: TransportRequest, _ call: Call, api: ServerAPI,
        _ requestTime: Date
    ) async {
        if !HTTPCacheRules.isSafe(request.method) { await invalidate(after: response, to: request) }
        if let cache, let key = call.cacheKey {
            await store(response, request: request, api: api, requestTime: requestTime, in: cache, key: key)
        }
    }

    /// An attempt's request before the plugins: its number, its call (what the transport observes), the manager's
    /// default headers and the cookies (before the plugins, so that a signing plugin signs the Cookie header that
    /// is sent).
    @inline(never)
    func attemptRequest(_ base: TransportRequest, number: Int, of call: Call) -> TransportRequest {
        var request = base
        request.attempt = number
        request.call = call
        for field in configuration.defaultHeaders where !request.headers.contains(field.name) {
            request.headers.add(name: field.name, value: field.value)
        }
        if let storage = configuration.cookies { request.attachCookies(storage) }
        return request
    }

    /// The plugins' `prepare`, in order; when one throws, `request` is what the ones before it made.
    @inline(never)
    func prepareByPlugins(_ request: inout TransportRequest, api: ServerAPI) async throws {
        for plugin in plugins { request = try await plugin.prepare(request, for: api) }
    }

    /// After a failed attempt: returns once the next attempt may start (the retry policy, the plugins and the
    /// retry budget agreed, and its delay has passed), or throws the error that ends the call, completed.
    @inline(never)
    private func retryOrEnd(
        after error: any Error, _ call: Call, api: ServerAPI, request: TransportRequest,
        lastResponse: TransportResponse?, attempt number: Int, pluginRetries: inout Int
    ) async throws {
        var failure = ServerAPIError.wrap(error).with(requestID: api.id, url: request.url)
        if request.isCancelled && failure.kind != .cancelled {
            failure = ServerAPIError.cancelled().with(requestID: api.id, url: request.url)
        }
        if failure.kind == .cancelled { throw complete(call, failure) }
        // A streamed request body is read once: once sending began, the call cannot be sent again.
        let replayable = request.body.streamedBody?.hasStarted != true
        guard
            replayable,
            let delay = await retryDelay(
                after: failure, response: lastResponse, request: request, api: api, attempt: number,
                pluginRetries: &pluginRetries),
            withdrawRetryBudget(api: api, url: request.url, call: call)
        else {
            call.stampDuration()
            throw complete(call, failure)
        }
        if !call.waitingToRetry(number) {
            throw complete(call, .cancelled().with(requestID: api.id, url: request.url))
        }
        guard delay > .zero else { return }
        do {
            try await wait(delay, call: call)
        } catch {
            throw complete(
                call,
                ServerAPIError(
                    .cancelled, "the request was cancelled while waiting to retry", requestID: api.id,
                    url: request.url))
        }
    }

    /// One exchange with the transport: the transport's `perform` (a whole response) or `stream` (the head,
    /// with the body to read), the plugins' `didReceive`, the status check (a status the call does not
    /// accept becomes an `httpStatus` error with an excerpt of the body) and the plugins' `process`.
    func exchange(
        _ request: TransportRequest, _ call: Call, api: ServerAPI, lastResponse: inout TransportResponse?,
        streams: Bool
    ) async throws -> TransportResponse {
        let response: TransportResponse
        do {
            response = try await guardedSend(request, call, api: api, streams: streams)
        } catch {
            throw failedExchange(error, request: request, api: api)
        }
        lastResponse = response
        received(response, request: request, call, api: api)
        guard api.acceptableStatus.accepts(response.status) else {
            throw await statusError(response, request: request, api: api)
        }
        guard !plugins.isEmpty else { return response }
        return try await processByPlugins(response, api: api)
    }

    /// A failed exchange's error, stamped, after the plugins' `didReceive` saw it.
    @inline(never)
    func failedExchange(_ error: any Error, request: TransportRequest, api: ServerAPI) -> ServerAPIError {
        let failure = ServerAPIError.wrap(error).with(requestID: api.id, url: request.url)
        for plugin in plugins { plugin.didReceive(.failure(failure), for: request, api: api) }
        return failure
    }

    /// What a response does before its status is checked: its cookies are stored (a followed redirect's were
    /// stored at the redirect, `RedirectRule`), the call's metrics get its figures, the plugins' `didReceive`
    /// sees it.
    @inline(never)
    func received(_ response: TransportResponse, request: TransportRequest, _ call: Call, api: ServerAPI) {
        request.cookies?.storage.store(responseHeaders: response.headers, from: response.url)
        call.stampResponse(response)
        for plugin in plugins { plugin.didReceive(.success(response), for: request, api: api) }
    }

    /// The `httpStatus` error for a status the call does not accept, with an excerpt of the body (read from a
    /// streamed one: at most 4 KiB).
    @inline(never)
    private func statusError(_ response: TransportResponse, request: TransportRequest, api: ServerAPI) async
        -> ServerAPIError
    {
        let body: Data?
        if case .stream(let stream) = response.body {
            body = await Self.excerpt(of: stream, for: request)
        } else {
            body = response.data
        }
        var error = ServerAPIError.httpStatus(response.status, body: body, url: response.url)
        error.requestID = api.id
        return error
    }

    /// The plugins' `process`, in order. When one throws for a streamed response, its body is cancelled:
    /// nobody will read it.
    @inline(never)
    private func processByPlugins(_ response: TransportResponse, api: ServerAPI) async throws -> TransportResponse {
        var processed = response
        do {
            for plugin in plugins { processed = try await plugin.process(processed, for: api) }
        } catch {
            if case .stream(let body) = response.body { body.cancel() }
            throw error
        }
        return processed
    }

    /// Hands a request to the transport: `perform` for a whole response, `stream` for the head with the
    /// body to read. A transport that does not observe the call's cancellation runs in a task of its own
    /// (until the head, for a stream), which cancelling the call cancels, so that the registry can end it too.
    func transfer(_ request: TransportRequest, streams: Bool) async throws -> TransportResponse {
        let transport = self.transport
        guard !transport.observesCallCancellation, let call = request.call else {
            return streams ? try await transport.stream(request) : try await transport.perform(request)
        }
        return try await call.run {
            streams ? try await transport.stream(request) : try await transport.perform(request)
        }
    }

    /// Sleeps on the manager's clock; throws when the caller's task or the call is cancelled.
    private func wait(_ delay: Duration, call: Call) async throws {
        let clock = configuration.clock
        // The clock's sleep ends early only for task cancellation: a retry wait is rare enough to
        // afford a task that cancelling the call cancels.
        try await call.run { try await clock.sleep(for: delay) }
    }

    /// Ends a call that failed: it leaves the registry, the failure gets the call's final metrics, and the
    /// plugins' `didComplete` sees them (once).
    /// - Parameter metrics: The metrics to end with, when they are not the call's own (a streamed body's end).
    /// - Returns: The failure, stamped, to throw.
    @inline(never)
    func complete(_ call: Call, _ error: ServerAPIError, metrics: RequestMetrics? = nil) -> ServerAPIError {
        var failure = call.stamp(error)
        let ended = endMetrics(metrics ?? call.metrics, call: call)
        failure.metrics = ended
        // The call's state machine hands its end out once, whatever races to end it.
        if call.end(failed: true) {
            for plugin in plugins { plugin.didComplete(call.api, metrics: ended, error: failure) }
        }
        return failure
    }

    /// Ends a call that succeeded: it leaves the registry, and the plugins' `didComplete` sees its final
    /// metrics (once).
    /// - Parameter metrics: The metrics to end with, when they are not the call's own (a streamed body's end).
    @inline(never)
    func completeSucceeded(_ call: Call, metrics: RequestMetrics? = nil) {
        guard call.end(failed: false), !plugins.isEmpty else { return }
        let metrics = metrics ?? call.metrics
        for plugin in plugins { plugin.didComplete(call.api, metrics: metrics, error: nil) }
    }
}
