@_spi(Backend) import ServerAPIKit

/// Counts events that callbacks on any thread report, and lets a test wait until a number of them
/// happened, without sleeping.
///
/// One-shot signals are the common case: `fire()` in the callback, `await wait()` in the test.
///
/// ```swift
/// let arrived = EventCounter()
/// let task = Task { try await transport.perform(request(progress: { _ in arrived.fire() })) }
/// await arrived.wait()
/// task.cancel()
/// ```
/// - Important: A wait ends early when its task is cancelled (a test's time limit), so a test whose
///   event never comes fails instead of hanging. Check `count` after the wait where that matters.
public final class EventCounter: Sendable {
    private struct State {
        var count = 0
        var waiters = CountWaiters()
    }

    private let state = Locked(State())

    /// Creates a counter at zero.
    public init() {}

    /// How many events happened so far.
    public var count: Int { state.withLock { $0.count } }

    /// Records one event and resumes every wait whose target it reaches. Safe from any thread.
    public func fire() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            return state.waiters.reached(state.count)
        }
        for waiter in ready { waiter.resume() }
    }

    /// Waits until at least `target` events happened (at once if they already did).
    /// - Parameter target: The number of events to wait for.
    public func wait(for target: Int = 1) async {
        await state.wait(until: \.count, reaches: target, waiters: \.waiters)
    }
}
