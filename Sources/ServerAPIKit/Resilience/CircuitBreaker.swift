/// One origin's circuit breaker as a pure state machine: attempts ask to be admitted and report how
/// they ended; the answers say whether to send, and which state changes to announce. Time is passed
/// in, read from the manager's clock.
struct CircuitBreaker: Sendable, Hashable {
    /// Whether an attempt may go.
    enum Admission: Sendable, Hashable {
        /// Send it; `probe` when it is one of a half-open circuit's probes.
        case allowed(probe: Bool)
        /// Fail it at once: the circuit is open (or half-open with its probes out) until `probeAt`.
        case rejected(state: CircuitState, probeAt: Duration)
    }

    /// How an admitted attempt ended, for the breaker.
    enum Outcome: Sendable, Hashable {
        case success
        case failure
        /// Cancelled, or otherwise not a verdict on the origin: it frees a probe and counts for nothing.
        case neutral
    }

    /// A change of state, to announce to plugins and metrics.
    struct Transition: Sendable, Hashable {
        var from: CircuitState
        var to: CircuitState
        /// When an open circuit will let a probe through.
        var probeAt: Duration?
    }

    private enum State: Sendable, Hashable {
        case closed(consecutiveFailures: Int)
        case open(until: Duration)
        case halfOpen(probesOut: Int, succeeded: Int)
    }

    let policy: CircuitBreakerPolicy
    private var state: State = .closed(consecutiveFailures: 0)
    /// `first`: attempts, `second`: failures; only for a ratio trip.
    private var window: WindowedCounter?

    init(_ policy: CircuitBreakerPolicy) {
        self.policy = policy
        if case .failureRatio(_, _, let length) = policy.trip { window = WindowedCounter(window: length) }
    }

    /// The state at `now` (an open circuit whose time is up reads as half-open).
    func state(at now: Duration) -> CircuitState {
        switch state {
        case .closed: .closed
        case .open(let until): now >= until ? .halfOpen : .open
        case .halfOpen: .halfOpen
        }
    }

    /// Asks to send an attempt at `now`.
    mutating func admit(at now: Duration) -> (Admission, Transition?) {
        switch state {
        case .closed:
            return (.allowed(probe: false), nil)
        case .open(let until):
            guard now >= until else { return (.rejected(state: .open, probeAt: until), nil) }
            state = .halfOpen(probesOut: 1, succeeded: 0)
            return (.allowed(probe: true), Transition(from: .open, to: .halfOpen))
        case .halfOpen(let out, let succeeded):
            guard out + succeeded < policy.probes else { return (.rejected(state: .halfOpen, probeAt: now), nil) }
            state = .halfOpen(probesOut: out + 1, succeeded: succeeded)
            return (.allowed(probe: true), nil)
        }
    }

    /// Reports how an admitted attempt ended at `now`.
    /// - Parameter probe: What `admit` said: whether the attempt was a probe.
    mutating func record(_ outcome: Outcome, probe: Bool, at now: Duration) -> Transition? {
        switch state {
        case .closed(let consecutive):
            // An attempt admitted earlier (as a probe of a circuit that closed since) counts like any other.
            switch outcome {
            case .neutral:
                return nil
            case .success:
                window?.add(first: 1, at: now)
                state = .closed(consecutiveFailures: 0)
                return nil
            case .failure:
                window?.add(first: 1, second: 1, at: now)
                state = .closed(consecutiveFailures: consecutive + 1)
                return tripped(consecutive: consecutive + 1, at: now) ? open(from: .closed, at: now) : nil
            }
        case .open:
            // Attempts admitted before the circuit opened say nothing new.
            return nil
        case .halfOpen(let out, let succeeded):
            guard probe else { return nil }
            switch outcome {
            case .neutral:
                state = .halfOpen(probesOut: max(out - 1, 0), succeeded: succeeded)
                return nil
            case .failure:
                return open(from: .halfOpen, at: now)
            case .success:
                guard succeeded + 1 >= policy.probes else {
                    state = .halfOpen(probesOut: max(out - 1, 0), succeeded: succeeded + 1)
                    return nil
                }
                state = .closed(consecutiveFailures: 0)
                window?.reset()
                return Transition(from: .halfOpen, to: .closed)
            }
        }
    }

    private func tripped(consecutive: Int, at now: Duration) -> Bool {
        switch policy.trip {
        case .consecutiveFailures(let count):
            return consecutive >= count
        case .failureRatio(let ratio, let minimum, _):
            guard let window else { return false }
            let (calls, failures) = window.sums(at: now)
            return calls >= minimum && Double(failures) >= ratio * Double(calls)
        }
    }

    private mutating func open(from: CircuitState, at now: Duration) -> Transition {
        let until = now + policy.openDuration
        state = .open(until: until)
        window?.reset()
        return Transition(from: from, to: .open, probeAt: until)
    }
}
