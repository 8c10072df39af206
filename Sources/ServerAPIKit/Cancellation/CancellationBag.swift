/// The cancellation tokens of the calls running in a `RequestScope`.
///
/// A token cancelled before its call attached a handler runs that handler the moment it is
/// attached, so a cancellation that lands between a call's start and its first wait is not lost.
final class CancellationBag: Sendable {
    private struct State {
        var next: UInt64 = 0
        var tokens: [UInt64: CancellationToken] = [:]
    }

    private let state = Locked(State())

    /// The number of calls in the bag.
    var count: Int { state.withLock { $0.tokens.count } }

    /// Adds a call's token; returns the key to remove it with.
    func insert(_ token: CancellationToken) -> UInt64 {
        state.withLock { state in
            state.next += 1
            state.tokens[state.next] = token
            return state.next
        }
    }

    /// Removes a finished call.
    func remove(_ key: UInt64) {
        state.withLock { _ = $0.tokens.removeValue(forKey: key) }
    }

    /// Cancels every call in the bag (after releasing the lock: a handler may call back in).
    func cancelAll() {
        let tokens = state.withLock { state in
            defer { state.tokens = [:] }
            return Array(state.tokens.values)
        }
        for token in tokens { token.cancel() }
    }
}
