#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// How a call travels, whole or streamed, in the order of this file: `run` accepts it (its `Call`, listed in the
// registry) and applies the controls (coalescing, the minimum interval); `execute` answers from the cache as
// `CacheDecision` says (the cache's steps carry it out) or runs the attempts, each an exchange with the
// transport (`perform` for a whole response, `stream` for the head with a streamed body) inside the resilience
// policies (ServerAPIManager+Resilience), a failed one retried by the plugins and the call's policy; after the
// exchange, a whole response is delivered (formatted or decoded, intercepted, stored) and a streamed one is handed
// over, completing when its body ends. The finisher (`CallFinishing`) says which. A WebSocket's handshake, last, is
// an exchange of its own.
//
// Memory per call in flight: an async function's frame holds every local of every path it could take, and stays
// allocated until the function returns, so for a call in flight every step's frame is held at once. Hence:
// - the synchronous steps (resolving, registering, delivering, decorating an error, completing, the cache key)
//   are `@inline(never)`: inlined, their locals would join the async caller's frame;
// - the steps only some calls take (the cache's lookups and offline fallback, coalescing and throttling, a failed
//   attempt's retry decision and wait, a refused status's excerpt, the resilience policies) are async functions
//   of their own, never inlined, whose frames exist only while they run;
// - the large values (`ServerAPI`'s groups, `TransportRequest`, metrics) are copy-on-write, so a copy held in a
//   frame is one reference.
// (The Architecture article, "Memory per call in flight", has the measurements.)

// MARK: - Accepting a call

extension ServerAPIManager {
    /// Runs a call in its caller's task as a `Call` listed in the in-flight registry (and in the
    /// `RequestScope` it runs in), so that it can be cancelled by id, tag, first, last, all or its scope as
    /// well as by the caller's task: `send`, `send(_:decoding:)` and `stream` all start here.
    ///
    /// No task is made for the call: cancelling the `Call` runs the handler of whatever the call waits on (the
    /// transport, a retry wait, a shared flight, a streamed body). A whole call leaves the registry when it
    /// returns; a streamed one when its body ends.
    func run<F: CallFinishing>(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)?, finishing finisher: F
    ) async throws -> F.Value {
        let call = try accept(api, progress: progress, streams: finisher.streams)
        return try await ending(call, endsLater: finisher.streams) { try await controlled(call, finisher) }
    }

    /// Lists a call and runs its path, then ends it with the outcome (`end`). A call that ends later, with an
    /// event of its own (a streamed body's end, a WebSocket's close), is ended here only when its path fails.
    func ending<T>(_ call: Call, endsLater: Bool, _ path: () async throws -> T) async throws -> T {
        let value: T
        do {
            try registerCall(call)
            value = try await path()
        } catch {
            throw endFailed(call, error)
        }
        if !endsLater { endSucceeded(call) }
        return value
    }

    /// Where every call ends, and where its error gets the call's id, URL and metrics: the registries that list it
    /// are left, the end is stamped on its metrics, the business rules resolve a business error, and the plugins'
    /// `didComplete` sees it, once, whatever raced to end it (the call's state machine hands its end out once).
    /// - Parameters:
    ///   - outcome: The value, or the error the call failed with.
    ///   - metrics: The metrics to end with, when they are not the call's own (a streamed body's, a WebSocket's).
    /// - Returns: The value.
    /// - Throws: The error, stamped.
    @inline(never)
    func end<T>(_ call: Call, _ outcome: Result<T, any Error>, metrics: RequestMetrics? = nil) throws(ServerAPIError)
        -> T
    {
        switch outcome {
        case .success(let value):
            endSucceeded(call, metrics: metrics)
            return value
        case .failure(let error):
            throw endFailed(call, error, metrics: metrics)
        }
    }

    /// `end` for a call that succeeded. Not generic over the value, which `ending` then holds in no `Result`: each
    /// such copy of the caller's value was a slot of its own in the async frame.
    @inline(never)
    func endSucceeded(_ call: Call, metrics: RequestMetrics? = nil) {
        // The final metrics are made only for a plugin to see: a caller's value carries its own.
        if call.end(failed: false), call.reportsEnd, !plugins.isEmpty {
            let ended = endMetrics(metrics ?? call.metrics, call: call)
            for plugin in plugins { plugin.didComplete(call.api, metrics: ended, error: nil) }
        }
    }

    /// `end` for a call that failed. - Returns: The error to throw, stamped.
    @inline(never)
    func endFailed(_ call: Call, _ error: any Error, metrics: RequestMetrics? = nil) -> ServerAPIError {
        var failure = call.stamp(error)
        // A shared flight's error carries the flight's metrics: what the call that joined it reports.
        let ended = failure.metrics ?? endMetrics(metrics ?? call.metrics, call: call)
        failure.metrics = ended
        if failure.kind == .cancelled, call.state == .cancelled(.shutdown) {
            failure.message = "the call was cancelled: the manager shut down, and its grace period ended first"
        }
        if failure.kind == .business {
            failure = call.api.businessRules.resolved(over: configuration.businessRules).apply(to: failure)
        }
        if call.end(failed: true), call.reportsEnd {
            for plugin in plugins { plugin.didComplete(call.api, metrics: ended, error: failure) }
        }
        return failure
    }

    /// Makes a call's `Call` and lists it in the registry. A streamed call uses neither the
    /// cache nor the business rules' interceptor, and cannot have a download destination.
    @inline(never)
    func accept(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)?, streams: Bool
    ) throws -> Call {
        var request = try api.transportRequest()
        if streams, request.download != nil {
            throw ServerAPIError(
                .invalidRequest, "a streamed call cannot have a download destination: write its chunks yourself",
                requestID: api.id, url: request.url)
        }
        // A whole body held in memory is bounded by the manager's limit unless the call set its own.
        if !streams, request.maxResponseSize == nil, request.download == nil,
            configuration.maxResponseSize != ResponseSizeRule.defaultMemoryLimit
        {
            request.maxResponseSize = configuration.maxResponseSize ?? .max
        }
        request.progress = progress
        let call = Call(
            api: api, request: request, cacheKey: streams ? nil : cacheKey(for: api, base: request),
            interceptor: streams ? nil : api.businessRules.interceptor(over: configuration.businessRules),
            registry: registry)
        return call
    }

    /// Runs a call through its controls — coalescing, minimum interval — and then `execute`.
    /// Calls that use neither go straight to `execute`. A streamed call's body is read once, by its one
    /// caller: it is never shared, recorded or replayed.
    private func controlled<F: CallFinishing>(_ call: Call, _ finisher: F) async throws -> F.Value {
        let coalesce = !finisher.streams && shouldCoalesce(call.api)
        guard coalesce || call.api.throttle != nil else { return try await execute(call, finisher) }
        return try await controlledByPolicies(call, finisher, coalesce: coalesce)
    }

    /// `controlled` for a call that is coalesced or throttled: a function of its own, never inlined, so that
    /// its locals are not in every call's async frame.
    @inline(never)
    private func controlledByPolicies<F: CallFinishing>(
        _ call: Call, _ finisher: F, coalesce: Bool
    ) async throws -> F.Value {
        let streams = finisher.streams
        let api = call.api
        let key = ControlKey(api: api, request: call.request)
        // Joining an identical call in flight sends nothing, so no minimum interval applies to it.
        if coalesce, let ticket = controls.flights.enter(key, progress: call.request.progress, opening: false) {
            // A call cancelled already leaves at once: the flight's wait sees it.
            _ = call.coalescedJoin()
            let shared = try await awaitFlight(ticket, call: call)
            return try deliverJoined(shared, call, finisher)
        }
        var record: ThrottleRecord?
        if let policy = api.throttle {
            switch try admit(api, key: key, policy: policy, url: call.url) {
            case .send(let generation):
                if policy.onThrottle == .returnPrevious, !streams {
                    record = { [controls] in controls.throttles.record(key, generation: generation, $0) }
                }
            case .replay(let previous):
                guard !streams else {
                    throw ServerAPIError(
                        .throttled, "the same call was sent too recently, and a streamed call cannot replay its result")
                }
                return try deliverJoined(previous, call, finisher)
            }
        }
        guard coalesce else { return try await execute(call, finisher, record: record) }
        // A call cancelled already must not open a flight that others could join.
        if call.isCancelled { throw ServerAPIError.cancelled() }
        guard let ticket = controls.flights.enter(key, progress: call.request.progress, opening: true) else {
            throw ServerAPIError(.invalidRequest, "the call could not be coalesced")
        }
        let shared = try await awaitFlight(ticket, call: call)
        return try deliverJoined(shared, call, finisher, record: record)
    }

    /// Delivers a response this call did not send for (a shared flight's, a throttled call's previous one), whose
    /// metrics become the call's: what its caller and its end report.
    @inline(never)
    private func deliverJoined<F: CallFinishing>(
        _ shared: SharedResponse, _ call: Call, _ finisher: F, record: ThrottleRecord? = nil
    ) throws -> F.Value {
        call.stampJoined(shared.metrics)
        return try deliver(
            shared.response, source: shared.source, metrics: shared.metrics, call, finisher, record: record)
    }

    /// Turns a response into the caller's value, in order: the call's end is stamped on the metrics,
    /// the finisher formats, the business rules' success interceptor may turn it into a failure, and a
    /// throttled call records it to replay. A shared flight's call only formats.
    @inline(never)
    func deliver<F: CallFinishing>(
        _ response: TransportResponse, source: ResultSource, metrics: consuming RequestMetrics, _ call: Call,
        _ finisher: F, record: ThrottleRecord? = nil, now: ContinuousClock.Instant? = nil
    ) throws -> F.Value {
        guard call.deliversToCaller else {
            return try finisher.finish(response, source: source, metrics: metrics, api: call.api)
        }
        // `metrics` is consumed: the caller's copy is stamped in place, not copied again.
        if metrics.endedAt == nil { metrics.endedAt = call.date(at: now ?? .now) }
        // A cached answer has no transport attempt: what describes it is the cache's own figures.
        if !metrics.hasTransport { metrics.takeTransport(of: response) }
        if metrics.status == nil { metrics.status = response.status }
        let value = try finisher.finish(response, source: source, metrics: metrics, api: call.api)
        if let interceptor = call.interceptor {
            try BusinessRules.intercept(response, for: call.api, with: interceptor)
        }
        record?(SharedResponse(response: response, source: source, metrics: metrics))
        return value
    }

    /// Registers a call in the in-flight registry, and in the `RequestScope` it runs in, if any; a
    /// replacing call cancels the calls it replaces in the same step, so that no earlier call can slip past it.
    /// A shared flight's transport call is listed by no registry (its callers are), and a registry entry (a batch,
    /// a wait between connections) by the manager's only.
    /// - Throws: `shuttingDown` once `shutdown(gracePeriod:)` was called: the call is not listed.
    @inline(never)
    func registerCall(_ call: Call) throws(ServerAPIError) {
        guard call.deliversToCaller else { return }
        let info = call.info
        guard call.reportsEnd else {
            guard registry.add(call) else { throw Self.shuttingDown }
            return
        }
        if let run = RequestScope.current, call.listed(by: run) { run.add(call) }
        let listed: Bool
        if !call.api.replacesInFlight {
            listed = registry.add(call)
        } else if let tag = info.tag {
            listed = registry.add(call, replacing: { $0.tag == tag })
        } else {
            let endpoint = Self.endpoint(of: info.url)
            listed = registry.add(
                call,
                replacing: { $0.method == info.method && endpoint != nil && Self.endpoint(of: $0.url) == endpoint })
        }
        guard listed else { throw Self.shuttingDown }
    }

    /// What a call that the closed registry refused fails with.
    static var shuttingDown: ServerAPIError {
        ServerAPIError(.shuttingDown, "the manager is shutting down: it takes no new calls")
    }

    /// A URL without its query and fragment: what "the same endpoint" compares.
    static func endpoint(of url: URL?) -> String? {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.query = nil
        components.fragment = nil
        return components.url.map { CacheKey.normalize($0) }
    }

    /// The metrics of a call that ends now: its end and duration stamped, and the transport named when
    /// an attempt reached it but returned no figures.
    @inline(never)
    func endMetrics(_ metrics: RequestMetrics, call: Call) -> RequestMetrics {
        var metrics = metrics
        let now = ContinuousClock.now
        if metrics.endedAt == nil { metrics.endedAt = call.date(at: now) }
        if metrics.duration == .zero { metrics.duration = now - call.started }
        if metrics.transport == nil, metrics.attemptStartedAt != nil {
            metrics.transport = TransportMetrics(transport: transport.name)
        }
        return metrics
    }
}

// MARK: - Coalescing

// Coalescing (single flight): identical GET and HEAD calls in flight share one transport call.
extension ServerAPIManager {
    /// Whether a call may share a transport call with identical ones.
    func shouldCoalesce(_ api: ServerAPI) -> Bool {
        // The mode first: most calls do not coalesce, and need not have their method compared.
        let enabled =
            switch api.coalescing {
            case .enabled: true
            case .disabled: false
            case .managerDefault: configuration.coalescesIdenticalRequests
            }
        return enabled && (api.method == .get || api.method == .head) && api.download == nil
    }

    /// Starts the flight if this caller opened it, then waits for the shared response.
    /// - Throws: The shared call's error (with this caller's id), or `cancelled` when this caller was.
    func awaitFlight(
        _ ticket: SingleFlight<ControlKey, SharedResponse>.Ticket, call: Call
    ) async throws(ServerAPIError) -> SharedResponse {
        let flights = controls.flights
        if ticket.isLeader {
            // The shared call runs in the flight's own task, which ends when its last waiter leaves: not
            // when the leader alone is cancelled. Its callers each deliver the response for themselves.
            let shared = call.sharedFlight { flights.progress(ticket.flight, $0) }
            flights.start(ticket) { await self.sharedCall(shared) }
        }
        switch await flights.wait(ticket, call: call) {
        case .success(let shared):
            return shared
        case .failure(let error):
            var error = ServerAPIError.wrap(error)
            error.requestID = call.id
            throw error
        }
    }

    /// The one transport call of a flight, made for its leader's description.
    private func sharedCall(_ call: Call) async -> SingleFlight<ControlKey, SharedResponse>.Outcome {
        do {
            return .success(
                try await ending(call, endsLater: false) {
                    try await execute(call, SharedFinishing(formatter: formatter))
                })
        } catch {
            return .failure(ServerAPIError.wrap(error))
        }
    }
}

// MARK: - Minimum interval

// Minimum interval: the same call is not sent again within its interval.
extension ServerAPIManager {
    /// What a throttled call does instead of being sent.
    enum ThrottleOutcome {
        /// Send it; its result is recorded under this generation.
        case send(UInt64)
        /// Answer with the previous result.
        case replay(SharedResponse)
    }

    /// Admits a call under its minimum interval, measured on the manager's clock.
    /// - Throws: `throttled` when the call came too soon and may not (or cannot) reuse the previous result.
    func admit(_ api: ServerAPI, key: ControlKey, policy: ThrottlePolicy, url: URL) throws(ServerAPIError)
        -> ThrottleOutcome
    {
        switch controls.throttles.admit(key, interval: policy.interval, now: ClockInstant(configuration.clock)) {
        case .send(let generation):
            return .send(generation)
        case .throttled(let elapsed, let previous):
            if policy.onThrottle == .returnPrevious, let previous { return .replay(previous) }
            let reason = policy.onThrottle == .returnPrevious ? " and it has no result to reuse yet" : ""
            throw ServerAPIError(
                .throttled,
                "the same call was sent \(Self.seconds(elapsed)) ago\(reason); it may be sent once every "
                    + Self.seconds(policy.interval),
                requestID: api.id, url: url)
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        String(cFormat: "%.3g s", duration.seconds)
    }
}

// MARK: - Executing: the cache or the attempts

extension ServerAPIManager {
    /// Answers a call from the cache where its mode says so, else runs its attempts (conditional when
    /// a stored entry can be revalidated), falling back to the cache when the mode allows it offline.
    /// A streamed call goes straight to its attempts. The cache's steps are functions of their own (see the
    /// frame rules at the top of this file).
    func execute<F: CallFinishing>(
        _ call: Call, _ finisher: F, record: ThrottleRecord? = nil
    ) async throws -> F.Value {
        if finisher.streams { return try await attempts(call, conditional: nil, finisher, record: nil) }
        // Without a cache there is nothing to look up, revalidate or fall back to.
        guard hasCache || call.api.cacheMode == .cacheOnly else {
            return try await attempts(call, conditional: nil, finisher, record: record)
        }
        return try await executeWithCache(call, finisher, record: record)
    }

    /// `execute` for a call that may use the cache: what the cache holds is looked up, and `CacheDecision.before`
    /// says whether it answers, the call misses, or the call loads (conditionally, with a stored response that
    /// answers instead if the server fails).
    @inline(never)
    private func executeWithCache<F: CallFinishing>(
        _ call: Call, _ finisher: F, record: ThrottleRecord?
    ) async throws -> F.Value {
        let decision = CacheDecision(call.api, configuration)
        let lookup = await lookup(for: call, decision)
        switch decision.before(call.request, lookup, at: configuration.now()) {
        case .answer(let answer):
            if answer.revalidatesInBackground { revalidateInBackground(call.api) }
            call.stampDuration()
            return try deliverFromCache(answer, call, finisher)
        case .miss(let miss):
            throw ServerAPIError(
                .cacheMiss, "\(miss): a cache-only call cannot be answered", requestID: call.api.id, url: call.url)
        case .fetch(let fetch):
            do {
                return try await attempts(
                    call, conditional: fetch.conditional, finisher, record: record,
                    refusesServerErrors: fetch.refusesServerErrors)
            } catch let error as ServerAPIError {
                guard let answer = fetch.answer(after: error) else { throw error }
                call.stampDuration()
                return try deliverFromCache(answer, call, finisher)
            }
        }
    }

    /// The attempts of a whole or streamed call: `retrying`, each attempt an `attempt`. A conditional call accepts
    /// 304 and carries the stored entry's validators; with `refusesServerErrors`, a 5xx is an `httpStatus` error
    /// whatever the call accepts, so that a stored response can answer instead.
    private func attempts<F: CallFinishing>(
        _ call: Call, conditional: CacheDecision.Conditional?, _ finisher: F, record: ThrottleRecord?,
        refusesServerErrors: Bool = false
    ) async throws -> F.Value {
        // Most calls send their description as it is: read from the call, not copied into this frame.
        guard conditional != nil || refusesServerErrors else {
            return try await retrying(call, api: call.api, base: call.request) { request, lastResponse in
                try await attempt(
                    request, call, api: call.api, conditional: nil, finisher, record: record,
                    lastResponse: &lastResponse)
            }
        }
        var api = call.api
        if conditional != nil { api.acceptableStatus = api.acceptableStatus.acceptingNotModified }
        if refusesServerErrors { api.acceptableStatus = api.acceptableStatus.refusingServerErrors }
        let described = api
        return try await retrying(call, api: described, base: conditional?.request ?? call.request) {
            request, lastResponse in
            try await attempt(
                request, call, api: described, conditional: conditional, finisher, record: record,
                lastResponse: &lastResponse)
        }
    }

    /// The retry loop every call runs (whole, streamed, or a WebSocket's handshake) until the call succeeds, fails
    /// for good, or is cancelled: each attempt runs the plugins' `prepare`, then `afterPlugins`, the request's
    /// check and the plugins' `willSend`, and then `attempt`; a failure asks the retry policy and the plugins
    /// whether to try again, and waits on the manager's clock (`retryOrEnd`). A cancellation, or a failure not
    /// retried, completes the call (`didComplete`) and is thrown.
    /// - Parameters:
    ///   - afterPlugins: What the core adds to each attempt's request after the plugins (a handshake's key).
    ///   - attempt: One attempt; it sets the response it got, so that a failure can honour its `Retry-After`.
    func retrying<Value>(
        _ call: Call, api: ServerAPI, base: TransportRequest,
        afterPlugins: (inout TransportRequest) -> Void = { _ in },
        _ attempt: (TransportRequest, inout TransportResponse?) async throws -> Value
    ) async throws -> Value {
        var number = 0
        var pluginRetries = 0
        depositRetryBudget(call, api: api, url: base.url)
        while true {
            number += 1
            call.stampAttempt(number)
            if !call.attemptStarted(number) { throw ServerAPIError.cancelled() }
            var request = attemptRequest(base, number: number, of: call)
            var lastResponse: TransportResponse?
            do {
                if !plugins.isEmpty { try await prepareByPlugins(&request, api: api) }
                afterPlugins(&request)
                // Checked again only when a default header or a plugin changed what `prepare` checks.
                if !request.isPrepared { try request.prepare() }
                for plugin in plugins { plugin.willSend(request, for: api) }
                call.stampAttemptStart()
                return try await attempt(request, &lastResponse)
            } catch {
                try await retryOrEnd(
                    after: error, call, api: api, request: request, lastResponse: lastResponse, attempt: number,
                    pluginRetries: &pluginRetries)
            }
        }
    }

    /// One attempt, from the exchange to the caller's value. The one difference between a whole and a
    /// streamed call is here: the transport's `perform` or `stream`, and after the exchange the delivery (with
    /// what the cache does, `cacheAfter`) or the hand-over of the head and body. Not inlined into the loop, whose
    /// frame would then hold both.
    @inline(never)
    private func attempt<F: CallFinishing>(
        _ request: TransportRequest, _ call: Call, api: ServerAPI, conditional: CacheDecision.Conditional?,
        _ finisher: F, record: ThrottleRecord?, lastResponse: inout TransportResponse?
    ) async throws -> F.Value {
        if let completion = finisher.streamCompletion {
            let head = try await exchange(request, call, api: api, lastResponse: &lastResponse, streams: true)
            if hasCache { await apply(CacheDecision.invalidations(after: head, to: request)) }
            call.stampDuration()
            return try handOver(head, call, finisher, completion: completion)
        }
        let requestTime = hasCache ? configuration.now() : Date.distantPast
        let processed: TransportResponse
        do {
            processed = try await exchange(request, call, api: api, lastResponse: &lastResponse, streams: false)
        } catch let error as ServerAPIError where error.kind == .httpStatus && hasCache {
            if let response = lastResponse { await cacheRefused(response, to: request, call, requestTime: requestTime) }
            throw error
        }
        guard hasCache else {
            let now = call.stampDuration()
            return try deliver(
                processed, source: .network, metrics: call.metrics, call, finisher, record: record, now: now)
        }
        return try await deliverCaching(
            processed, to: request, call, conditional: conditional, finisher, record: record, requestTime: requestTime)
    }

    /// Delivers a whole response as `CacheDecision.after` says: what it changes at once is changed (`cacheAfter`),
    /// the response it serves is delivered (a 304's stored response, from the cache), and what it stores is stored
    /// once the caller's value is made.
    @inline(never)
    private func deliverCaching<F: CallFinishing>(
        _ response: TransportResponse, to request: TransportRequest, _ call: Call,
        conditional: CacheDecision.Conditional?, _ finisher: F, record: ThrottleRecord?, requestTime: Date
    ) async throws -> F.Value {
        let after = await cacheAfter(
            response, to: request, call, conditional: conditional, accepted: true, requestTime: requestTime)
        call.stampDuration()
        if case .cache = after.source { call.stampStatus(after.response.status) }
        let value = try deliver(
            after.response, source: after.source, metrics: call.metrics, call, finisher, record: record)
        if let change = after.change { await apply([change]) }
        return value
    }

    /// What the cache does with a response whose status the call refused (`CacheDecision.after`): stored when HTTP
    /// allows (a 404 with `max-age`), and an unsafe request's redirect invalidates.
    @inline(never)
    private func cacheRefused(
        _ response: TransportResponse, to request: TransportRequest, _ call: Call, requestTime: Date
    ) async {
        _ = await cacheAfter(response, to: request, call, conditional: nil, accepted: false, requestTime: requestTime)
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
        // What the retry policy and the plugins see: the attempt's error with its URL, or the cancel that caused it.
        let failure = call.stamp(
            request.isCancelled && ServerAPIError.wrap(error).kind != .cancelled ? ServerAPIError.cancelled() : error,
            url: request.url)
        if failure.kind == .cancelled { throw failure }
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
            throw failure
        }
        if !call.waitingToRetry(number) { throw ServerAPIError.cancelled() }
        guard delay > .zero else { return }
        do {
            try await wait(delay, call: call)
        } catch {
            throw ServerAPIError(.cancelled, "the request was cancelled while waiting to retry")
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
            throw failedExchange(error, request: request, call, api: api)
        }
        lastResponse = response
        received(response, request: request, call, api: api)
        guard api.acceptableStatus.accepts(response.status) else {
            throw await statusError(response, request: request)
        }
        guard !plugins.isEmpty else { return response }
        return try await processByPlugins(response, api: api)
    }

    /// A failed exchange's error, stamped, after the plugins' `didReceive` saw it.
    @inline(never)
    func failedExchange(_ error: any Error, request: TransportRequest, _ call: Call, api: ServerAPI)
        -> ServerAPIError
    {
        let failure = call.stamp(error, url: request.url)
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
    private func statusError(_ response: TransportResponse, request: TransportRequest) async
        -> ServerAPIError
    {
        let body: Data?
        if case .stream(let stream) = response.body {
            body = await Self.excerpt(of: stream, for: request)
        } else {
            body = response.data
        }
        return ServerAPIError.httpStatus(response.status, body: body, url: response.url)
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
}

// MARK: - The cache's steps

// What to do is `CacheDecision`'s to say (a pure value); these look up, serve, store and remove
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

// MARK: - Retrying an attempt

// Whether and when a failed attempt is sent again: the plugins first, then the call's retry policy.
extension ServerAPIManager {
    func retryDelay(
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
}

// MARK: - A WebSocket's handshake

extension ServerAPIManager {
    /// Opens a WebSocket described by a call: `ws://` and `wss://` URLs, or `http(s)://` ones upgraded.
    ///
    /// ```swift
    /// let socket = try await manager.webSocket(
    ///     ServerAPI(url: URL(string: "wss://chat.example/room")!).webSocketProtocols("chat.v2").tag("chat"))
    /// try await socket.send(.text("hello"))
    /// for try await message in socket.messages { print(message) }
    /// ```
    /// The handshake is a call like any other: the manager's default headers and cookies, the plugins'
    /// `prepare` and `willSend` (an auth header, a signature), its attempts retried as the call's `retry` and the
    /// plugins' `shouldRetry` say (each with a fresh key), the origin's circuit breaker and concurrency limit, and
    /// the call's `timeout`, which bounds each handshake attempt only. A refused upgrade (401, 404, …) throws `httpStatus` with an excerpt of the body; an answer
    /// that is not an upgrade to this WebSocket (no `Upgrade: websocket` or `Connection: Upgrade`, a
    /// `Sec-WebSocket-Accept` that does not match the key the core sent, an extension or subprotocol not offered)
    /// throws `network` before any message is read (RFC 6455 §4.1). The
    /// connection stays in `inFlight` while it is open, so `cancel(id:)`, `cancel(tag:)`, first, last and all
    /// close it and end its `messages` with `cancelled`; plugins' `didComplete` runs when it ends.
    ///
    /// With `reconnection`, a connection that drops is made again, with backoff, and `messages` goes on across
    /// connections (see `WebSocket.Reconnection`); each connection is a call of its own for the plugins.
    /// - Parameters:
    ///   - api: The call that describes the handshake.
    ///   - configuration: The connection's limits and keep-alive.
    ///   - reconnection: How to reconnect after a drop; `nil` (the default) never reconnects.
    /// - Returns: The open connection.
    /// - Throws: `ServerAPIError`: `unsupported` when the transport has no WebSockets, `httpStatus`,
    ///   `timedOut`, `cancelled`, `cannotConnect`, `tls`, …
    public func webSocket(
        _ api: ServerAPI, configuration: WebSocket.Configuration = .init(), reconnection: WebSocket.Reconnection? = nil
    ) async throws -> WebSocket {
        let api = WebSocketHandshakeRule.httpForm(of: api)
        let link = try await openWebSocket(api, configuration: configuration)
        let reconnector = reconnection.map { policy in
            WebSocket.Reconnector(
                policy: policy,
                open: { [self] in try await openWebSocket(api, configuration: configuration) },
                wait: { [self] delay in try await waitRegistered(delay, for: api) })
        }
        return WebSocket(
            link: link, configuration: configuration, clock: self.configuration.clock, reconnector: reconnector)
    }

    /// Makes one connection: the handshake as a call, which stays in flight until the connection ends. Its
    /// attempts are a call's (`retrying`): the retry policy and the plugins' `shouldRetry`, the retry budget, the
    /// origin's circuit breaker and concurrency limit; each attempt sends a fresh key.
    /// - Parameter api: The call, its URL already in its `http(s)` form.
    func openWebSocket(_ api: ServerAPI, configuration: WebSocket.Configuration) async throws -> WebSocket.Link {
        // Accepted and listed as a streamed call is, and ended when the connection ends.
        let call = try accept(api, progress: nil, streams: true)
        return try await ending(call, endsLater: true) {
            try await connect(call, configuration: configuration)
        }
    }

    /// A WebSocket call's path: the handshake's attempts, then the connection, which ends the call when it ends.
    private func connect(_ call: Call, configuration: WebSocket.Configuration) async throws -> WebSocket.Link {
        let api = call.api
        if let compression = configuration.compression { try WebSocketDeflateNegotiation.validate(compression) }
        // permessage-deflate is offered when the transport carries the frames' RSV1: the core compresses.
        let compression = transport.carriesWebSocketExtensions ? configuration.compression : nil
        var base = call.request
        // A transport that frames bytes itself holds a frame to the message limit as it arrives.
        base.maxResponseSize = Int64(configuration.maxMessageSize)
        // The key is the core's, after the plugins, so that the answer can be checked against it whatever the
        // transport (WebSocketHandshakeRule.check).
        let offer: (inout TransportRequest) -> Void = { request in
            request.headers["Sec-WebSocket-Key"] = WebSocketHandshakeRule.newKey()
            if let compression {
                request.headers.add(
                    name: "Sec-WebSocket-Extensions", value: WebSocketDeflateNegotiation.offer(compression))
            }
        }
        let agreed = try await retrying(call, api: api, base: base, afterPlugins: offer) {
            (request, lastResponse: inout TransportResponse?) async throws -> Handshake in
            try await attemptHandshake(
                request, call, api: api, compression: compression, lastResponse: &lastResponse)
        }
        // The connection's end, on another thread, works on this copy: the call's own metrics stay with this task.
        let headMetrics = call.metrics
        call.headReceived()
        call.webSocketOpened()
        var compressor: WebSocketCompressingSender?
        if let deflate = agreed.deflate, let compression {
            compressor = WebSocketCompressingSender(WebSocketDeflateSender(client: deflate, compression: compression))
        }
        return WebSocket.Link(
            connection: agreed.connection, response: agreed.response, subprotocol: agreed.subprotocol, call: call,
            deflate: agreed.deflate, compressor: compressor
        ) { [self] error in
            _ = try? end(call, error.map { .failure($0) } ?? .success(()), metrics: headMetrics)
        }
    }

    /// What a handshake that succeeded agreed: the server's answer, the connection, the subprotocol, the compression.
    struct Handshake: Sendable {
        let response: TransportResponse
        let connection: any WebSocketConnection
        let subprotocol: String?
        let deflate: WebSocketDeflateParameters?
        /// The URL the handshake went to.
        let url: URL
    }

    /// One attempt at a handshake: the transport's upgrade through the origin's breaker and limit, bounded by the
    /// call's `timeout` (which bounds the handshake only), then checked as RFC 6455 §4.1 and RFC 7692 say.
    /// - Throws: `timedOut`, `httpStatus` for a refused upgrade, `network` for an answer that is not this upgrade.
    @inline(never)
    private func attemptHandshake(
        _ request: TransportRequest, _ call: Call, api: ServerAPI, compression: WebSocket.Compression?,
        lastResponse: inout TransportResponse?
    ) async throws -> Handshake {
        let transport = self.transport
        let timedOut = Locked(false)
        let timeout = request.timeout
        // The exchange runs in a task of its own, which the timer cancels: a timed-out attempt ends, not the call,
        // so that the retry policy can try again.
        let exchange = Task { [self] in
            try await guarded(request, call, api: api, status: { $0.response.status }) {
                do {
                    return try await transport.webSocket(request)
                } catch let error as ServerAPIError where error.kind == .cancelled && timedOut.withLock({ $0 }) {
                    throw ServerAPIError(.timedOut, "the WebSocket handshake took longer than \(timeout)")
                }
            }
        }
        let clock = configuration.clock
        let timer = Task {
            do { try await clock.sleep(for: timeout) } catch { return }
            timedOut.withLock { $0 = true }
            exchange.cancel()
        }
        let upgrade: WebSocketUpgrade
        do {
            defer { timer.cancel() }
            upgrade = try await withTaskCancellationHandler {
                try await exchange.value
            } onCancel: {
                exchange.cancel()
            }
        } catch {
            throw failedExchange(error, request: request, call, api: api)
        }
        lastResponse = upgrade.response
        received(upgrade.response, request: request, call, api: api)
        do {
            let subprotocol = try WebSocketHandshakeRule.check(
                upgrade.response, key: upgrade.handshakeVerified ? nil : request.headers["Sec-WebSocket-Key"],
                offered: WebSocketHandshakeRule.offeredProtocols(request.headers),
                offeredExtensions: WebSocketHandshakeRule.offeredExtensions(request.headers))
            var deflate: WebSocketDeflateParameters?
            if let compression {
                do {
                    deflate = try WebSocketDeflateNegotiation.agreed(upgrade.response.headers, offered: compression)
                } catch {
                    throw ServerAPIError(
                        .network, "the WebSocket handshake's answer \(error) (RFC 7692 §7.1)",
                        url: upgrade.response.url, underlying: error)
                }
            }
            guard let connection = upgrade.connection else {
                throw ServerAPIError(.network, "the transport returned no connection")
            }
            return Handshake(
                response: upgrade.response, connection: connection, subprotocol: subprotocol, deflate: deflate,
                url: request.url)
        } catch {
            upgrade.connection?.close()
            throw error
        }
    }
}
