
/// The cancel actions of the calls running in a `RequestScope`.
///
/// A call reserves its place before it starts and attaches its cancel action once it exists, so
/// a cancellation that lands in between is not lost: the attach then cancels at once.
final class CancellationBag: Sendable {
    private enum Entry {
        case reserved
        case attached(@Sendable () -> Void)
        /// Cancelled before its action was attached.
        case cancelled
    }

    private struct State {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
    }

    private let state = Locked(State())

    /// The number of calls in the bag.
    var count: Int { state.withLock { $0.entries.count } }

    /// Reserves a place for a call about to start.
    func reserve() -> UInt64 {
        state.withLock { state in
            state.next += 1
            state.entries[state.next] = .reserved
            return state.next
        }
    }

    /// Attaches a call's cancel action; calls it at once when the bag was cancelled since `reserve`.
    func attach(_ token: UInt64, cancel: @escaping @Sendable () -> Void) {
        let cancelNow = state.withLock { state -> Bool in
            switch state.entries[token] {
            case .reserved?:
                state.entries[token] = .attached(cancel)
                return false
            case .cancelled?:
                state.entries[token] = nil
                return true
            case .attached?, nil:
                // Already finished (removed) before the action could be attached.
                return false
            }
        }
        if cancelNow { cancel() }
    }

    /// Removes a finished call.
    func remove(_ token: UInt64) {
        state.withLock { _ = $0.entries.removeValue(forKey: token) }
    }

    /// Cancels every call in the bag.
    func cancelAll() {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            var actions: [@Sendable () -> Void] = []
            for (token, entry) in state.entries {
                switch entry {
                case .attached(let cancel):
                    actions.append(cancel)
                    state.entries[token] = nil
                case .reserved:
                    state.entries[token] = .cancelled
                case .cancelled:
                    break
                }
            }
            return actions
        }
        for cancel in actions { cancel() }
    }
}
