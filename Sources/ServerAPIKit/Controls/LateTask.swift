import Synchronization

/// A task that may be cancelled before it exists: the cancellation is applied when it is set.
final class LateTask<Success: Sendable>: Sendable {
    private struct State {
        var task: Task<Success, any Error>?
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Sets the task, cancelling it at once when `cancel()` came first.
    func set(_ task: Task<Success, any Error>) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Cancels the task, now or as soon as it is set.
    func cancel() {
        let task = state.withLock { state -> Task<Success, any Error>? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }
}
