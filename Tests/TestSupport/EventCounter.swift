import ServerAPIKit

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
        var nextID = 0
        var waiters: [Int: (target: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
        var cancelled: Set<Int> = []
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
            let count = state.count
            let ready = state.waiters.filter { $0.value.target <= count }
            for id in ready.keys { state.waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }

    /// Waits until at least `target` events happened (at once if they already did).
    /// - Parameter target: The number of events to wait for.
    public func wait(for target: Int = 1) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.count >= target || state.cancelled.remove(id) != nil { return true }
                    state.waiters[id] = (target, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter.continuation }
                state.cancelled.insert(id)
                return nil
            }
            waiter?.resume()
        }
    }
}
