/// Waits for a count kept under a `Locked` to reach a target: what every "wait until N things have
/// happened" of the package shares (the manager's coalescing joins, `TestClock`'s sleepers, the
/// tests' event counter). The owner keeps one of these in its locked state, calls `reached(_:)` each
/// time the count grows, and waits with `Locked.wait(until:reaches:waiters:)`.
package struct CountWaiters: Sendable {
    private var nextID: UInt64 = 0
    private var waiting: [UInt64: (target: Int, continuation: CheckedContinuation<Void, Never>)] = [:]

    package init() {}

    /// Takes out the waits whose target `count` reaches: resume them once the lock is released.
    package mutating func reached(_ count: Int) -> [CheckedContinuation<Void, Never>] {
        guard !waiting.isEmpty else { return [] }
        let ready = waiting.filter { $0.value.target <= count }
        for id in ready.keys { waiting[id] = nil }
        return ready.values.map(\.continuation)
    }

    fileprivate mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    fileprivate mutating func add(_ id: UInt64, target: Int, _ continuation: CheckedContinuation<Void, Never>) {
        waiting[id] = (target, continuation)
    }

    fileprivate mutating func remove(_ id: UInt64) -> CheckedContinuation<Void, Never>? {
        waiting.removeValue(forKey: id)?.continuation
    }
}

extension Locked {
    /// Returns once the count at `count` reaches `target` (at once if it already has), or as soon as
    /// the waiting task is cancelled, so that a test's time limit ends a wait for something that
    /// never comes; check the count afterwards where that matters.
    /// - Parameters:
    ///   - count: Where the locked value keeps the count.
    ///   - target: The count to wait for.
    ///   - waiters: Where the locked value keeps its `CountWaiters`.
    package func wait(
        until count: any KeyPath<Value, Int> & Sendable, reaches target: Int,
        waiters: any WritableKeyPath<Value, CountWaiters> & Sendable
    ) async {
        let id = withLock { $0[keyPath: waiters].makeID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked under the lock, after a cancellation handler that ran first found nothing to resume.
                let ready = withLock { value -> Bool in
                    if value[keyPath: count] >= target || Task.isCancelled { return true }
                    value[keyPath: waiters].add(id, target: target, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            withLock { $0[keyPath: waiters].remove(id) }?.resume()
        }
    }
}
