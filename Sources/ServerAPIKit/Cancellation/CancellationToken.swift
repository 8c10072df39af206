import Synchronization

/// What cancels one call: fired by the in-flight registry (`cancel(id:)`, `cancel(tag:)`, first,
/// last, all), a `RequestScope`, a completion handler's `RequestHandle` or the caller's task, and
/// observed by whatever the call is waiting on — the transport above all.
///
/// The manager makes one token per call and puts it on the `TransportRequest` it hands the
/// transport (`TransportRequest.cancellation`), so a call runs in its caller's own task and is
/// still cancelled from anywhere without a task of its own. A transport observes it with
/// `TransportRequest.withCancellationHandler(operation:onCancel:)`, which also covers the
/// caller's task being cancelled.
///
/// Cancelling is final and happens once: handlers run once, after the token's lock is released,
/// on the thread that cancelled. A handler added after the token was cancelled runs at once.
public final class CancellationToken: Sendable {
    private typealias Handler = @Sendable () -> Void

    private struct State {
        var nextKey: UInt64 = 0
        /// The one observer a call has at a time (the transport, a retry wait): no allocation.
        var first: (key: UInt64, handler: Handler)?
        /// Further observers at the same time, rare.
        var others: [(key: UInt64, handler: Handler)] = []
    }

    private let cancelled = Atomic<Bool>(false)
    private let state = Locked(State())

    /// Creates a token that is not cancelled.
    public init() {}

    /// Whether the token was cancelled.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Cancels the token: every handler observing it runs once, now, on this thread. Calling it
    /// again does nothing.
    public func cancel() {
        let handlers = state.withLock { state -> [Handler] in
            // Set under the lock that `observe` takes: a handler is either seen here or sees the flag there.
            guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return [] }
            var handlers = state.others.map(\.handler)
            if let first = state.first { handlers.insert(first.handler, at: 0) }
            state.first = nil
            state.others = []
            return handlers
        }
        for handler in handlers { handler() }
    }

    /// Runs `operation`, calling `onCancel` once if the token is cancelled (or already was, or the
    /// current task is cancelled) before `operation` returns.
    ///
    /// Cancelling the current task cancels the token, so the token stands for both.
    /// - Parameters:
    ///   - isolation: The actor `operation` runs on: the caller's, by default.
    ///   - operation: The work, such as waiting for a transfer.
    ///   - onCancel: What stops the work; it may run on any thread, before or while `operation` runs.
    /// - Returns: What `operation` returns.
    public func withCancellationHandler<T, E: Error>(
        isolation: isolated (any Actor)? = #isolation,
        operation: () async throws(E) -> T,
        onCancel: @escaping @Sendable () -> Void
    ) async throws(E) -> T {
        let key = observe(onCancel)
        defer { if let key { stopObserving(key) } }
        // A typed-throws body cannot go through withTaskCancellationHandler's untyped one directly.
        let result: Result<T, E> = await withTaskCancellationHandler {
            do throws(E) { return .success(try await operation()) } catch { return .failure(error) }
        } onCancel: {
            self.cancel()
        }
        return try result.get()
    }

    /// Runs work that honours only task cancellation in a task of its own, which the token cancels
    /// (as does cancelling the current task): a transport's or a plugin's wait that knows nothing of tokens.
    /// - Parameter operation: The work.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws; usually `CancellationError` or `cancelled` once cancelled.
    public func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await operation() }
        return try await withCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Adds a handler for the token's whole life; it runs at once when the token is already cancelled.
    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        _ = observe(handler)
    }

    /// Adds a handler; runs it at once (and returns `nil`) when the token is already cancelled.
    private func observe(_ handler: @escaping Handler) -> UInt64? {
        let key = state.withLock { state -> UInt64? in
            guard !cancelled.load(ordering: .acquiring) else { return nil }
            state.nextKey += 1
            if state.first == nil {
                state.first = (state.nextKey, handler)
            } else {
                state.others.append((state.nextKey, handler))
            }
            return state.nextKey
        }
        if key == nil { handler() }
        return key
    }

    private func stopObserving(_ key: UInt64) {
        state.withLock { state in
            if state.first?.key == key {
                state.first = nil
            } else {
                state.others.removeAll { $0.key == key }
            }
        }
    }
}
