/// One operation running in a `RequestScope` (a `perform`, a completion-handler `send`): the calls it
/// made that are still running. Calls find it in `RequestScope.current` and join it when they register.
final class ScopeRun: Sendable {
    private struct State: ~Copyable {
        var cancelled = false
        var next: UInt64 = 0
        var calls: [UInt64: Call] = [:]
    }

    private let state = Locked(State())

    /// Adds a call; a run cancelled already cancels it at once, as a cancelled task would.
    /// - Returns: The key the call leaves with.
    func insert(_ call: Call) -> UInt64 {
        let (key, cancelled) = state.withLock { state in
            state.next += 1
            state.calls[state.next] = call
            return (state.next, state.cancelled)
        }
        if cancelled { call.cancel(.scope) }
        return key
    }

    /// Removes a call that ended.
    func remove(_ key: UInt64) {
        state.withLock { _ = $0.calls.removeValue(forKey: key) }
    }

    /// Cancels the run's calls, and those it starts from now on (after releasing the lock: a call's
    /// cancellation may call back in).
    func cancel() {
        let calls = state.withLock { state in
            state.cancelled = true
            defer { state.calls = [:] }
            return Array(state.calls.values)
        }
        for call in calls { call.cancel(.scope) }
    }
}
