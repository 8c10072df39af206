import Foundation

// Where request controls meet the manager: `run` calls `controlled` instead of `execute`,
// registers through `register`, and reports failures through `decorate`.
extension ServerAPIManager {
    /// Runs a call through its controls — success interceptor, coalescing, minimum interval —
    /// and then `execute`. Calls that use none of them go straight to `execute`.
    func controlled<T: Sendable>(
        _ api: ServerAPI, base: TransportRequest, progress: (@Sendable (TransferProgress) -> Void)?,
        startedAt: Date, finish: @escaping Finish<T>
    ) async throws -> T {
        let finish = finishing(api, finish)
        let coalesce = shouldCoalesce(api)
        guard coalesce || api.throttle != nil else {
            return try await execute(api, base: base, progress: progress, startedAt: startedAt, finish: finish)
        }
        let key = ControlKey(api: api, request: base)
        // Joining an identical call in flight sends nothing, so no minimum interval applies to it.
        if coalesce, let ticket = controls.flights.enter(key, progress: progress, opening: false) {
            let shared = try await awaitFlight(ticket, api: api, base: base, startedAt: startedAt)
            return try finish(shared.response, shared.source, shared.metrics)
        }
        var generation: UInt64?
        if let policy = api.throttle {
            switch try admit(api, key: key, policy: policy, url: base.url) {
            case .send(let admitted): generation = admitted
            case .replay(let previous): return try finish(previous.response, previous.source, previous.metrics)
            }
        }
        let keep: (@Sendable (SharedResponse) -> Void)? =
            generation.flatMap { generation in
                guard api.throttle?.onThrottle == .returnPrevious else { return nil }
                return { [controls] in controls.throttles.record(key, generation: generation, $0) }
            }
        if coalesce {
            // A call cancelled already must not open a flight that others could join.
            if base.isCancelled { throw ServerAPIError.cancelled() }
            let ticket = controls.flights.enter(key, progress: progress, opening: true)
            guard let ticket else { throw ServerAPIError(.invalidRequest, "the call could not be coalesced") }
            let shared = try await awaitFlight(ticket, api: api, base: base, startedAt: startedAt)
            let value = try finish(shared.response, shared.source, shared.metrics)
            keep?(shared)
            return value
        }
        guard let keep else {
            return try await execute(api, base: base, progress: progress, startedAt: startedAt, finish: finish)
        }
        let finishAndKeep: Finish<T> = { response, source, metrics in
            let value = try finish(response, source, metrics)
            keep(SharedResponse(response: response, source: source, metrics: metrics))
            return value
        }
        return try await execute(api, base: base, progress: progress, startedAt: startedAt, finish: finishAndKeep)
    }

    /// Registers a call in the in-flight registry; a replacing call cancels the calls it replaces in the
    /// same step, so that no earlier call can slip past it.
    func registerCall(_ info: InFlightRequest, for api: ServerAPI, token: CancellationToken) -> UInt64 {
        api.replacesInFlight ? register(info, token: token) : registry.add(info, token: token)
    }

    /// Registers a replacing call, cancelling the calls it replaces in the same step.
    private func register(_ info: InFlightRequest, token: CancellationToken) -> UInt64 {
        if let tag = info.tag {
            return registry.add(info, replacing: { $0.tag == tag }, token: token)
        }
        let endpoint = Self.endpoint(of: info.url)
        return registry.add(
            info, replacing: { $0.method == info.method && endpoint != nil && Self.endpoint(of: $0.url) == endpoint },
            token: token)
    }

    /// A URL without its query and fragment: what "the same endpoint" compares.
    static func endpoint(of url: URL?) -> String? {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.query = nil
        components.fragment = nil
        return components.url.map { CacheKey.normalize($0) }
    }

    /// The error a call ends with: wrapped, with its id, URL and metrics, and with the business rules applied.
    func decorate(_ error: any Error, for api: ServerAPI, url: URL, queuedAt: Date) -> ServerAPIError {
        var error = ServerAPIError.wrap(error).with(requestID: api.id, url: url)
        if error.metrics == nil {
            let now = Date()
            let duration = Duration.seconds(max(0, now.timeIntervalSince(queuedAt)))
            error.metrics = RequestMetrics(startedAt: queuedAt, duration: duration)
            error.metrics?.endedAt = now
        }
        guard error.kind == .business else { return error }
        return api.businessRules.resolved(over: configuration.businessRules).apply(to: error)
    }

    /// Puts the manager's measurements on a failure, completing what the failure path left out.
    func attachMetrics(_ metrics: RequestMetrics, to error: ServerAPIError) -> ServerAPIError {
        var metrics = metrics
        let now = Date()
        if metrics.endedAt == nil { metrics.endedAt = now }
        if metrics.duration == .zero { metrics.duration = .seconds(max(0, now.timeIntervalSince(metrics.queuedAt))) }
        // A transport that threw returned no metrics; its name is still worth knowing.
        if metrics.transport == nil, metrics.attemptStartedAt != nil {
            metrics.transport = TransportMetrics(transport: transport.name)
        }
        var error = error
        error.metrics = metrics
        return error
    }

    /// `finish` with the time the response was in hand stamped on the metrics, followed by the
    /// success interceptor of the call's business rules, if there is one.
    private func finishing<T>(_ api: ServerAPI, _ finish: @escaping Finish<T>) -> Finish<T> {
        let interceptor = api.businessRules.interceptor(over: configuration.businessRules)
        return { response, source, metrics in
            var metrics = metrics
            if metrics.endedAt == nil { metrics.endedAt = Date() }
            // A cached answer has no transport attempt: what describes it is the cache's own figures.
            if metrics.transport == nil { metrics.transport = response.metrics }
            let value = try finish(response, source, metrics)
            if let interceptor { try BusinessRules.intercept(response, for: api, with: interceptor) }
            return value
        }
    }
}
