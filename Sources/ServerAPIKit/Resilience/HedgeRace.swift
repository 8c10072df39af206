/// One hedged exchange as a pure state machine: the first attempt, a timer, perhaps a second
/// attempt, and the first complete answer wins.
///
/// Events go in (the delay elapsed, an attempt finished, the call was cancelled) and the action to
/// take comes out; the manager does the I/O.
struct HedgeRace: Sendable, Hashable {
    /// What the manager does next.
    enum Action: Sendable, Hashable {
        /// Nothing: wait for the next event.
        case wait
        /// Send the hedge (attempt 1).
        case sendHedge
        /// Deliver this attempt's response and cancel every other attempt still out (and the timer).
        case deliver(attempt: Int, cancel: [Int])
        /// Fail with this attempt's error: every attempt failed; cancel the timer.
        case fail(attempt: Int)
        /// Cancel these attempts and end with `cancelled`.
        case cancel([Int])
    }

    private enum State: Sendable, Hashable {
        /// The first attempt is out; the timer runs while `timerArmed`.
        case primary(timerArmed: Bool)
        /// Both attempts were sent; `out` are still running.
        case hedged(out: Set<Int>)
        case done
    }

    private var state = State.primary(timerArmed: true)
    /// Whether a hedge was sent.
    private(set) var hedgeSent = false

    /// The hedge delay elapsed; `allowed` when the origin's hedge share lets a hedge go.
    mutating func delayElapsed(hedgeAllowed allowed: Bool) -> Action {
        guard case .primary(true) = state else { return .wait }
        guard allowed else {
            state = .primary(timerArmed: false)
            return .wait
        }
        state = .hedged(out: [0, 1])
        hedgeSent = true
        return .sendHedge
    }

    /// An attempt finished: with a complete answer (`succeeded`) or an error.
    mutating func finished(attempt: Int, succeeded: Bool) -> Action {
        switch state {
        case .done:
            return .wait
        case .primary:
            state = .done
            return succeeded ? .deliver(attempt: attempt, cancel: []) : .fail(attempt: attempt)
        case .hedged(var out):
            guard out.remove(attempt) != nil else { return .wait }
            if succeeded {
                state = .done
                return .deliver(attempt: attempt, cancel: out.sorted())
            }
            guard out.isEmpty else {
                state = .hedged(out: out)
                return .wait
            }
            state = .done
            return .fail(attempt: attempt)
        }
    }

    /// The call was cancelled.
    mutating func cancelled() -> Action {
        switch state {
        case .done:
            return .wait
        case .primary:
            state = .done
            return .cancel([0])
        case .hedged(let out):
            state = .done
            return .cancel(out.sorted())
        }
    }
}
