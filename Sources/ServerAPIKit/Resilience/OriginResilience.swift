/// A manager's resilience state: one `OriginResilience` per origin it has called with a policy, and
/// the epoch the policies' times are measured from on the manager's clock.
///
/// Origins are kept for the manager's life: an app calls a bounded set of upstreams.
final class ResilienceRegistry: Sendable {
    private struct State {
        var origins: [ServerOrigin: OriginResilience] = [:]
        var epoch: ClockInstant?
    }

    private let state = Locked(State())

    /// The state of `origin`, made on first use.
    func origin(_ origin: ServerOrigin) -> OriginResilience {
        state.withLock { state in
            if let entry = state.origins[origin] { return entry }
            let entry = OriginResilience(origin)
            state.origins[origin] = entry
            return entry
        }
    }

    /// The time on `clock` since this registry first read it: what the policies' state machines run on.
    func now(_ clock: any Clock<Duration>) -> Duration {
        let reading = ClockInstant(clock)
        let epoch = state.withLock { state in
            if let epoch = state.epoch { return epoch }
            state.epoch = reading
            return reading
        }
        return epoch.duration(to: reading) ?? .zero
    }
}

/// One origin's policy state machines behind one lock, and the attempts waiting for a concurrency
/// slot. Each policy's state is kept per policy value, so a call that overrides a policy does not
/// disturb the state of the others.
///
/// Locking: every state machine changes under `state`; continuations are resumed after unlocking.
final class OriginResilience: Sendable {
    private struct Gate {
        var limiter: ConcurrencyLimiter
        /// Queued attempts that are suspended, by id.
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        /// Queued attempts whose wait ended before they suspended.
        var outcomes: [UInt64: Result<Void, ServerAPIError>] = [:]
    }

    private struct State {
        var budgets: [RetryBudget: RetryBudgetState] = [:]
        var breakers: [CircuitBreakerPolicy: CircuitBreaker] = [:]
        var hedges: [HedgingPolicy: HedgeBudget] = [:]
        var latencies = LatencySamples()
        var gates: [ConcurrencyLimitPolicy: Gate] = [:]
        var nextWaiter: UInt64 = 0
    }

    let origin: ServerOrigin
    private let state = Locked(State())

    init(_ origin: ServerOrigin) { self.origin = origin }

    // MARK: Retry budget

    /// A call started.
    func depositCall(_ budget: RetryBudget, at now: Duration) {
        state.withLock { $0.budgets[budget, default: RetryBudgetState(budget)].deposit(at: now) }
    }

    /// Asks for a retry. - Returns: Whether the budget allows it.
    func withdrawRetry(_ budget: RetryBudget, at now: Duration) -> Bool {
        state.withLock { $0.budgets[budget, default: RetryBudgetState(budget)].withdraw(at: now) }
    }

    // MARK: Circuit breaker

    /// Asks to send an attempt. - Returns: The admission, the state change it made, and the state it was admitted in.
    func admit(_ policy: CircuitBreakerPolicy, at now: Duration) -> (
        CircuitBreaker.Admission, CircuitBreaker.Transition?, CircuitState
    ) {
        state.withLock { state in
            var breaker = state.breakers[policy] ?? CircuitBreaker(policy)
            let (admission, transition) = breaker.admit(at: now)
            let current = breaker.state(at: now)
            state.breakers[policy] = breaker
            return (admission, transition, current)
        }
    }

    /// Reports an admitted attempt's outcome. - Returns: The state change it made.
    func record(_ policy: CircuitBreakerPolicy, _ outcome: CircuitBreaker.Outcome, probe: Bool, at now: Duration)
        -> CircuitBreaker.Transition?
    {
        state.withLock { $0.breakers[policy, default: CircuitBreaker(policy)].record(outcome, probe: probe, at: now) }
    }

    /// The breaker's state at `now`.
    func circuitState(_ policy: CircuitBreakerPolicy, at now: Duration) -> CircuitState {
        state.withLock { $0.breakers[policy]?.state(at: now) ?? .closed }
    }

    // MARK: Hedging

    /// A hedgeable call started. - Returns: The delay before its hedge.
    func startHedgeable(_ policy: HedgingPolicy, at now: Duration) -> Duration {
        state.withLock { state in
            state.hedges[policy, default: HedgeBudget(policy)].deposit(at: now)
            return policy.hedgeDelay(state.latencies)
        }
    }

    /// Asks to send a hedge. - Returns: Whether the hedge share allows it.
    func withdrawHedge(_ policy: HedgingPolicy, at now: Duration) -> Bool {
        state.withLock { $0.hedges[policy, default: HedgeBudget(policy)].withdraw(at: now) }
    }

    /// Records the latency of a successful attempt, for percentile hedge delays.
    func recordLatency(_ latency: Duration) {
        state.withLock { $0.latencies.add(latency) }
    }

    // MARK: Concurrency limit

    /// Takes a slot, waiting in the queue (on `clock`, for at most the policy's queue timeout) when
    /// the limit is reached.
    /// - Returns: Whether the attempt waited, and the limit when it asked.
    /// - Throws: `concurrencyLimited` when the queue is full or the wait runs out; `cancelled` when
    ///   the request is cancelled while waiting. A throw means no slot is held.
    func acquire(_ policy: ConcurrencyLimitPolicy, clock: any Clock<Duration>, request: TransportRequest)
        async throws(ServerAPIError) -> (waited: Bool, limit: Int)
    {
        let (id, answer, limit) = state.withLock { state in
            state.nextWaiter += 1
            let id = state.nextWaiter
            var gate = state.gates[policy] ?? Gate(limiter: ConcurrencyLimiter(policy))
            let answer = gate.limiter.acquire(id)
            let limit = gate.limiter.limit
            state.gates[policy] = gate
            return (id, answer, limit)
        }
        switch answer {
        case .granted:
            return (false, limit)
        case .rejected(let limit):
            throw ServerAPIError.concurrencyLimitedError(
                ConcurrencyLimitDetails(origin: origin, reason: .queueFull, limit: limit))
        case .queued:
            break
        }
        let timeout = policy.queueTimeout
        // A timer only for an attempt that queues: the limit is reached, so the wait is the rare path.
        let timer = Task { [self] in
            do { try await clock.sleep(for: timeout) } catch { return }
            leave(
                policy, id,
                with: ServerAPIError.concurrencyLimitedError(
                    ConcurrencyLimitDetails(origin: origin, reason: .queueTimeout, limit: limit)))
        }
        defer { timer.cancel() }
        do {
            try await request.withCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let ready = state.withLock { state -> Result<Void, ServerAPIError>? in
                        if let outcome = state.gates[policy]?.outcomes.removeValue(forKey: id) { return outcome }
                        state.gates[policy]?.waiters[id] = continuation
                        return nil
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            } onCancel: { [self] in
                leave(policy, id, with: ServerAPIError.cancelled("the request was cancelled while waiting for a slot"))
            }
        } catch {
            throw ServerAPIError.wrap(error)
        }
        return (true, limit)
    }

    /// Takes a slot only when one is free and nobody waits (for a hedge). - Returns: Whether it got one.
    func tryAcquire(_ policy: ConcurrencyLimitPolicy) -> Bool {
        state.withLock { state in
            var gate = state.gates[policy] ?? Gate(limiter: ConcurrencyLimiter(policy))
            let acquired = gate.limiter.tryAcquire()
            state.gates[policy] = gate
            return acquired
        }
    }

    /// Gives a slot back, with what the attempt observed (nothing for a cancelled one), and lets the
    /// attempts it makes room for go.
    func release(_ policy: ConcurrencyLimitPolicy, _ sample: ConcurrencyLimiter.Sample?) {
        let resumed = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard var gate = state.gates[policy] else { return [] }
            var resumed: [CheckedContinuation<Void, any Error>] = []
            for id in gate.limiter.release(sample) {
                if let waiter = gate.waiters.removeValue(forKey: id) {
                    resumed.append(waiter)
                } else {
                    gate.outcomes[id] = .success(())
                }
            }
            state.gates[policy] = gate
            return resumed
        }
        for continuation in resumed { continuation.resume() }
    }

    /// The policy's limit now.
    func limit(_ policy: ConcurrencyLimitPolicy) -> Int {
        state.withLock { $0.gates[policy]?.limiter.limit ?? ConcurrencyLimiter(policy).limit }
    }

    /// Ends a queued attempt's wait with `error`, unless it was granted a slot first.
    private func leave(_ policy: ConcurrencyLimitPolicy, _ id: UInt64, with error: ServerAPIError) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard var gate = state.gates[policy], gate.limiter.leave(id) else { return nil }
            let waiter = gate.waiters.removeValue(forKey: id)
            if waiter == nil { gate.outcomes[id] = .failure(error) }
            state.gates[policy] = gate
            return waiter
        }
        waiter?.resume(throwing: error)
    }
}
