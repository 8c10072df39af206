
/// Cancels the task that runs a call, even when the cancellation arrives before the task exists.
///
/// The manager registers a call in the in-flight registry before it starts the call's task, so a
/// cancellation by id, tag, first, last or all can arrive first; it is then remembered and applied
/// the moment the task is handed over.
final class TaskCanceller: Sendable {
    private enum State {
        case waiting
        case running(@Sendable () -> Void)
        case cancelled
    }

    private let state = Locked(State.waiting)

    /// Whether a cancellation arrived before the task was handed over.
    var isCancelled: Bool {
        state.withLock { if case .cancelled = $0 { true } else { false } }
    }

    /// Hands over the task's cancel action; runs it at once when a cancellation already arrived.
    func set(_ cancel: @escaping @Sendable () -> Void) {
        let cancelNow: Bool = state.withLock { state in
            switch state {
            case .waiting:
                state = .running(cancel)
                return false
            case .cancelled:
                return true
            case .running:
                return false
            }
        }
        if cancelNow { cancel() }
    }

    /// Cancels the task, now or as soon as it is handed over.
    func cancel() {
        let action: (@Sendable () -> Void)? = state.withLock { state in
            switch state {
            case .waiting:
                state = .cancelled
                return nil
            case .running(let cancel):
                state = .cancelled
                return cancel
            case .cancelled:
                return nil
            }
        }
        // Called after unlocking: a cancellation handler may call back into the manager.
        action?()
    }
}
