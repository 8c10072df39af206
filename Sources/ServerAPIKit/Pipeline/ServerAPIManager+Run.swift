#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// How a call travels, in order, whole or streamed: `run` accepts it (its `Call`, listed in the registry) and
// applies the controls (coalescing, minimum interval); `execute` (ServerAPIManager+Execute) answers from the cache
// or runs the attempts, each an exchange with the transport (`perform` for a whole response, `stream` for the head
// with a streamed body); after the exchange, a whole response is delivered (formatted or decoded, intercepted,
// stored) and a streamed one is handed over (ServerAPIManager+Stream), completing when its body ends. The finisher
// (`CallFinishing`) says which.
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
        do {
            // A whole call has ended by now (its attempt, the cache or a shared flight ended it); a streamed one
            // ends with its body.
            return try await controlled(call, finisher)
        } catch {
            // Some failures end a call before any attempt did (a cache-only miss, a throttled stream).
            call.end(failed: true)
            throw decorate(error, call: call)
        }
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
        try registerCall(call, for: api)
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

    /// Delivers a response this call did not send for (a shared flight's, a throttled call's previous one), and
    /// ends the call: no attempt of its own completed it.
    @inline(never)
    private func deliverJoined<F: CallFinishing>(
        _ shared: SharedResponse, _ call: Call, _ finisher: F, record: ThrottleRecord? = nil
    ) throws -> F.Value {
        let value = try deliver(
            shared.response, source: shared.source, metrics: shared.metrics, call, finisher, record: record)
        call.end(failed: false)
        return value
    }

    /// Turns a response into the caller's value, in order: the call's end is stamped on the metrics,
    /// the finisher formats, the business rules' success interceptor may turn it into a failure, and a
    /// throttled call records it to replay. A shared flight's call only formats.
    @inline(never)
    func deliver<F: CallFinishing>(
        _ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, _ call: Call,
        _ finisher: F, record: ThrottleRecord? = nil
    ) throws -> F.Value {
        guard call.deliversToCaller else {
            return try finisher.finish(response, source: source, metrics: metrics, api: call.api)
        }
        var metrics = metrics
        if metrics.endedAt == nil { metrics.endedAt = call.date(at: .now) }
        // A cached answer has no transport attempt: what describes it is the cache's own figures.
        if metrics.transport == nil { metrics.transport = response.metrics }
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
    /// - Throws: `shuttingDown` once `shutdown(gracePeriod:)` was called: the call is not listed, and has ended.
    @inline(never)
    func registerCall(_ call: Call, for api: ServerAPI) throws(ServerAPIError) {
        if let run = RequestScope.current, call.listed(by: run) { run.add(call) }
        let info = call.info
        let listed: Bool
        if !api.replacesInFlight {
            listed = registry.add(call)
        } else if let tag = info.tag {
            listed = registry.add(call, replacing: { $0.tag == tag })
        } else {
            let endpoint = Self.endpoint(of: info.url)
            listed = registry.add(
                call,
                replacing: { $0.method == info.method && endpoint != nil && Self.endpoint(of: $0.url) == endpoint })
        }
        guard listed else { throw refuseAfterShutdown(call) }
    }

    /// Ends a call that the closed registry refused, and says why.
    @inline(never)
    func refuseAfterShutdown(_ call: Call) -> ServerAPIError {
        call.end(failed: true)
        return ServerAPIError(
            .shuttingDown, "the manager is shutting down: it takes no new calls", requestID: call.id,
            url: call.info.url)
    }

    /// A URL without its query and fragment: what "the same endpoint" compares.
    static func endpoint(of url: URL?) -> String? {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.query = nil
        components.fragment = nil
        return components.url.map { CacheKey.normalize($0) }
    }

    /// The error a call ends with: with its id, URL and metrics, and with the business rules applied.
    @inline(never)
    func decorate(_ error: any Error, call: Call) -> ServerAPIError {
        var error = call.stamp(error)
        if error.metrics == nil { error.metrics = endMetrics(call.initialMetrics(), call: call) }
        if error.kind == .cancelled, call.state == .cancelled(.shutdown) {
            error.message = "the call was cancelled: the manager shut down, and its grace period ended first"
        }
        guard error.kind == .business else { return error }
        return call.api.businessRules.resolved(over: configuration.businessRules).apply(to: error)
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
