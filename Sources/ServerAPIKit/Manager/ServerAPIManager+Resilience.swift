#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The resilience policies in the pipeline: the retry budget around `attempts`' retry decisions, and the
// circuit breaker, the concurrency limit and hedging around each attempt's exchange with the transport.
extension ServerAPIManager {
    /// The origin and policies of a call, or `nil` when no policy applies to it: resolved once per call (again only
    /// when a plugin sends an attempt to another origin), and kept on the call.
    func resilience(of call: Call, api: ServerAPI, url: URL) -> (origin: ServerOrigin, policies: ResiliencePolicies)? {
        if !mayApplyResilience(to: api) { return nil }
        let origin = ServerOrigin(url)
        if let kept = call.resilience, kept.origin == origin { return kept.policies.map { (origin, $0) } }
        var policies: ResiliencePolicies? = api.resilience.resolve(configuration.resilience.policies(for: origin))
        if let resolved = policies, resolved.retryBudget == nil, resolved.circuitBreaker == nil,
            resolved.hedging == nil, resolved.concurrencyLimit == nil
        {
            policies = nil
        }
        call.keepResilience(origin: origin, policies: policies)
        return policies.map { (origin, $0) }
    }

    /// Whether a policy may apply to a call: the manager configures one, or the call sets its own. Asked first on
    /// every call's path, where most calls have none: even `resilience(of:api:url:)`'s `nil` is a large value to return.
    func mayApplyResilience(to api: ServerAPI) -> Bool {
        configuresResilience || api.resilience.setsAPolicy
    }

    /// Counts a call against its origin's retry budget, once, before its first attempt.
    func depositRetryBudget(_ call: Call, api: ServerAPI, url: URL) {
        guard mayApplyResilience(to: api), let (origin, policies) = resilience(of: call, api: api, url: url),
            let budget = policies.retryBudget
        else { return }
        resilienceRegistry.origin(origin).depositCall(budget, at: resilienceRegistry.now(configuration.clock))
    }

    /// Asks the origin's retry budget for a retry the retry policy or a plugin wants.
    /// - Returns: Whether the retry may go; a refusal is recorded in the call's metrics.
    func withdrawRetryBudget(api: ServerAPI, url: URL, call: Call) -> Bool {
        guard let (origin, policies) = resilience(of: call, api: api, url: url), let budget = policies.retryBudget
        else { return true }
        let allowed = resilienceRegistry.origin(origin).withdrawRetry(
            budget, at: resilienceRegistry.now(configuration.clock))
        if !allowed {
            call.stampResilience {
                $0.origin = origin
                $0.retryRefusedByBudget = true
            }
        }
        return allowed
    }

    /// Sends one attempt through its origin's circuit breaker, concurrency limit and hedging.
    /// - Parameters:
    ///   - streams: Whether the exchange hands a streamed body over; only one that delivers a whole
    ///     response may be raced by a hedge.
    /// - Throws: `circuitOpen`, `concurrencyLimited`, or what the transport throws.
    func guardedSend(
        _ request: TransportRequest, _ call: Call, api: ServerAPI, streams: Bool
    ) async throws -> TransportResponse {
        guard guardsSend(call, api: api, url: request.url) else { return try await transfer(request, streams: streams) }
        return try await guardedSendByPolicies(request, call, api: api, streams: streams)
    }

    /// Whether a breaker, a limit or hedging applies to a call's exchange. A synchronous function of its own, never
    /// inlined: resolving the policies, inlined, put every copy of them in `guardedSend`'s async frame.
    @inline(never)
    private func guardsSend(_ call: Call, api: ServerAPI, url: URL) -> Bool {
        guard mayApplyResilience(to: api), let (_, policies) = resilience(of: call, api: api, url: url) else {
            return false
        }
        return policies.circuitBreaker != nil || policies.concurrencyLimit != nil || policies.hedging != nil
    }

    /// `guardedSend` for an exchange that a breaker, a limit or hedging applies to: a function of its own, so that
    /// the policies and the closure that captures them are not in every attempt's async frame (the frame rules at
    /// the top of ServerAPIManager+Pipeline.swift).
    @inline(never)
    private func guardedSendByPolicies(
        _ request: TransportRequest, _ call: Call, api: ServerAPI, streams: Bool
    ) async throws -> TransportResponse {
        // Resolved by `guardsSend` and kept on the call: this finds them there.
        guard let (origin, policies) = resilience(of: call, api: api, url: request.url) else {
            return try await transfer(request, streams: streams)
        }
        return try await guarded(request, call, origin: origin, policies: policies, status: \.status) { entry in
            guard !streams, let hedging = policies.hedging, Self.canHedge(api, request) else {
                return try await transfer(request, streams: streams)
            }
            return try await hedged(request, call, policy: hedging, limit: policies.concurrencyLimit, entry: entry)
        }
    }

    /// Runs one exchange of any kind (a request's response, a WebSocket's handshake) through its origin's circuit
    /// breaker and concurrency limit, which see its outcome: `status` tells a response's status.
    /// - Throws: `circuitOpen`, `concurrencyLimited`, or what `exchange` throws.
    func guarded<Answer>(
        _ request: TransportRequest, _ call: Call, api: ServerAPI, status: (Answer) -> Int,
        _ exchange: () async throws -> Answer
    ) async throws -> Answer {
        guard let (origin, policies) = resilience(of: call, api: api, url: request.url),
            policies.circuitBreaker != nil || policies.concurrencyLimit != nil
        else { return try await exchange() }
        return try await guarded(request, call, origin: origin, policies: policies, status: status) { _ in
            try await exchange()
        }
    }

    /// `guarded` for an exchange that a breaker, a limit or hedging applies to: a function of its own, by the frame
    /// rules at the top of ServerAPIManager+Pipeline.swift.
    @inline(never)
    private func guarded<Answer>(
        _ request: TransportRequest, _ call: Call, origin: ServerOrigin, policies: ResiliencePolicies,
        status: (Answer) -> Int, _ exchange: (OriginResilience) async throws -> Answer
    ) async throws -> Answer {
        let registry = resilienceRegistry
        let clock = configuration.clock
        let entry = registry.origin(origin)
        call.stampResilience { $0.origin = origin }

        var probe = false
        if let breaker = policies.circuitBreaker {
            let now = registry.now(clock)
            let (admission, transition, state) = entry.admit(breaker, at: now)
            announce(transition, origin: origin, now: now)
            call.stampResilience { $0.circuitState = state }
            switch admission {
            case .allowed(let isProbe):
                probe = isProbe
            case .rejected(let state, let probeAt):
                throw ServerAPIError.circuitOpenError(
                    CircuitOpenDetails(origin: origin, state: state, probeAfter: max(probeAt - now, .zero)))
            }
        }
        if let limit = policies.concurrencyLimit {
            let asked = registry.now(clock)
            do {
                let (waited, current) = try await entry.acquire(limit, clock: clock, request: request)
                let slotWait = waited ? registry.now(clock) - asked : .zero
                call.stampResilience {
                    $0.concurrencyLimit = current
                    if waited {
                        $0.waitedForSlot = true
                        $0.slotWait += slotWait
                    }
                }
            } catch {
                if let breaker = policies.circuitBreaker {
                    announce(
                        entry.record(breaker, .neutral, probe: probe, at: registry.now(clock)), origin: origin,
                        now: registry.now(clock))
                }
                throw error
            }
        }

        let started = registry.now(clock)
        let result: Result<Answer, ServerAPIError>
        do {
            result = .success(try await exchange(entry))
        } catch {
            result = .failure(ServerAPIError.wrap(error))
        }
        let ended = registry.now(clock)
        let latency = ended - started
        let classification = policies.circuitBreaker?.failures ?? .default

        let outcome: CircuitBreaker.Outcome
        var sample: ConcurrencyLimiter.Sample?
        switch result {
        case .success(let answer):
            let code = status(answer)
            outcome = classification.isFailure(status: code) ? .failure : .success
            sample = .init(latency: latency, overloaded: code == 429 || code == 503)
            if outcome == .success { entry.recordLatency(latency) }
        case .failure(let error):
            let cancelled = error.kind == .cancelled || request.isCancelled
            outcome = !cancelled && classification.isFailure(error) ? .failure : .neutral
            sample = cancelled ? nil : .init(latency: latency, overloaded: error.kind == .timedOut)
        }
        if let limit = policies.concurrencyLimit { entry.release(limit, sample) }
        if let breaker = policies.circuitBreaker {
            announce(entry.record(breaker, outcome, probe: probe, at: ended), origin: origin, now: ended)
        }
        return try result.get()
    }

    /// Whether a call may be sent twice at once: an idempotent method, a body that can be read again,
    /// no download destination.
    static func canHedge(_ api: ServerAPI, _ request: TransportRequest) -> Bool {
        api.method.isIdempotent && request.body.streamedBody == nil && request.download == nil
    }

    /// Tells the plugins of a circuit-breaker state change.
    private func announce(_ transition: CircuitBreaker.Transition?, origin: ServerOrigin, now: Duration) {
        guard let transition else { return }
        let change = CircuitStateChange(
            origin: origin, from: transition.from, to: transition.to,
            probeAfter: transition.probeAt.map { max($0 - now, .zero) })
        for plugin in plugins { plugin.circuitStateDidChange(change) }
    }

    private enum LegEvent: Sendable {
        case finished(Int, Result<TransportResponse, ServerAPIError>)
        case delayElapsed
        case timerStopped
    }

    /// Sends an attempt and, if no answer came within the hedge delay and the origin's hedge share
    /// allows it, the same request again; the first complete answer wins and the other is cancelled.
    private func hedged(
        _ request: TransportRequest, _ call: Call, policy: HedgingPolicy, limit: ConcurrencyLimitPolicy?,
        entry: OriginResilience
    ) async throws -> TransportResponse {
        let registry = resilienceRegistry
        let clock = configuration.clock
        let delay = entry.startHedgeable(policy, at: registry.now(clock))
        // Each leg runs in a child task, so the loser is cancelled alone (`cancelAll` once the winner is in);
        // cancelling the call stops both, through their requests.
        let primary = Self.leg(of: request, progress: request.progress)
        let hedge = Self.leg(of: request, progress: nil)
        var race = HedgeRace()

        return try await withThrowingTaskGroup(of: LegEvent.self) { group in
            group.addTask { [self] in await leg(0, primary) }
            group.addTask {
                do {
                    try await clock.sleep(for: delay)
                    return .delayElapsed
                } catch {
                    return .timerStopped
                }
            }
            while let event = try await group.next() {
                let action: HedgeRace.Action
                switch event {
                case .timerStopped:
                    continue
                case .delayElapsed:
                    let slot = limit.map { entry.tryAcquire($0) } ?? true
                    let allowed = slot && entry.withdrawHedge(policy, at: registry.now(clock))
                    if slot && !allowed, let limit { entry.release(limit, nil) }
                    action = request.isCancelled ? race.cancelled() : race.delayElapsed(hedgeAllowed: allowed)
                    if action == .sendHedge {
                        call.stampResilience { $0.hedged = true }
                        group.addTask { [self] in
                            let started = registry.now(clock)
                            let event = await leg(1, hedge)
                            if let limit {
                                var sample: ConcurrencyLimiter.Sample?
                                if case .finished(_, .success(let response)) = event {
                                    sample = .init(
                                        latency: registry.now(clock) - started,
                                        overloaded: response.status == 429 || response.status == 503)
                                }
                                entry.release(limit, sample)
                            }
                            return event
                        }
                    }
                case .finished(let attempt, let result):
                    if case .success = result {
                        action = race.finished(attempt: attempt, succeeded: true)
                    } else {
                        action = race.finished(attempt: attempt, succeeded: false)
                    }
                    switch action {
                    case .deliver(let winner, _):
                        group.cancelAll()
                        call.stampResilience { $0.hedgeWon = winner == 1 }
                        return try result.get()
                    case .fail:
                        group.cancelAll()
                        return try result.get()
                    default:
                        break
                    }
                }
                if case .cancel = action {
                    group.cancelAll()
                    throw ServerAPIError.cancelled()
                }
            }
            throw ServerAPIError.cancelled()
        }
    }

    private static func leg(
        of request: TransportRequest, progress: (@Sendable (TransferProgress) -> Void)?
    ) -> TransportRequest {
        var leg = request
        leg.progress = progress
        return leg
    }

    /// One leg of a hedged exchange.
    private func leg(_ index: Int, _ request: TransportRequest) async -> LegEvent {
        do {
            return .finished(index, .success(try await transfer(request, streams: false)))
        } catch {
            return .finished(index, .failure(ServerAPIError.wrap(error)))
        }
    }
}

// What `mayApplyResilience(to:)` asks of a call's overrides, on every call's path.
extension ResilienceOverrides {
    /// Whether the call sets a policy of its own.
    var setsAPolicy: Bool {
        retryBudget.isCustom || circuitBreaker.isCustom || hedging.isCustom || concurrencyLimit.isCustom
    }
}

extension PolicyOverride {
    /// Whether this is a policy of the call's own.
    var isCustom: Bool {
        if case .custom = self { return true }
        return false
    }
}

extension ServerAPIPlugin {
    /// Does nothing: plugins that watch circuit breakers implement it.
    public func circuitStateDidChange(_ change: CircuitStateChange) {}
}
