#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request the manager is running.
public struct InFlightRequest: Sendable, Hashable {
    /// What runs: one call, or a group of calls.
    public enum Kind: Sendable, Hashable {
        /// One call.
        case call
        /// A `BatchRequest`.
        case batch
        /// A `ChainRequest`.
        case chain
    }

    /// The call's (or group's) id.
    public var id: RequestID
    /// The call's (or group's) tag.
    public var tag: String?
    /// The method; `nil` for a group.
    public var method: HTTPMethod?
    /// The URL; `nil` for a group.
    public var url: URL?
    /// When the manager accepted it.
    public var startedAt: Date
    /// A call, a batch or a chain.
    public var kind: Kind

    /// Creates a description.
    init(
        id: RequestID, tag: String?, method: HTTPMethod?, url: URL?, startedAt: Date, kind: Kind = .call
    ) {
        self.id = id
        self.tag = tag
        self.method = method
        self.url = url
        self.startedAt = startedAt
        self.kind = kind
    }
}

/// The calls in flight, in the order they started: the manager's, and each `RequestScope` operation's.
///
/// A selection (id, tag, first, last, all) is removed from the table under the lock, and the calls are
/// cancelled after unlocking, so a cancellation handler that calls back into the manager cannot deadlock. A call
/// that ends removes itself (`Call.end`), a cancelled one too: until then its key stays among the `cancelling`,
/// so that the manager's shutdown can wait for every call to have ended, not only to have left the list.
///
/// The manager's registry can be closed (`close()`, by `ServerAPIManager.shutdown(gracePeriod:)`): it then lists no
/// new call (`add` refuses it), runs the drain handlers of the calls it lists (a WebSocket's close with 1001), and
/// `waitUntilEmpty()` says when the last call has ended.
final class InFlightRegistry: Sendable {
    private struct Table {
        var calls: [UInt64: Call] = [:]
        /// Keys in start order; removed keys are skipped and dropped by compaction.
        var order: [UInt64] = []
        /// Set by a scope operation's cancel: calls added later are cancelled as they join.
        var cancelled: CallStateMachine.CancelReason?
        /// Calls removed by a cancel that have not ended yet.
        var cancelling: Set<UInt64> = []
        /// What a call that never ends by itself (a WebSocket, a reconnection wait) does when the registry closes.
        var drains: [UInt64: @Sendable () -> Void] = [:]
        /// Closed by the manager's shutdown: no call is listed any more.
        var closed = false
        /// Who waits for the last call to end, by id.
        var emptyWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0

        var isEmpty: Bool { calls.isEmpty && cancelling.isEmpty }

        mutating func remove(where matches: (InFlightRequest) -> Bool) -> [Call] {
            var victims: [Call] = []
            for key in order {
                guard let call = calls[key], matches(call.info) else { continue }
                victims.append(call)
                calls[key] = nil
                cancelling.insert(key)
                drains[key] = nil
            }
            compact()
            return victims
        }

        /// Keeps the order list from growing with keys already removed.
        mutating func compact() {
            if calls.isEmpty {
                order.removeAll(keepingCapacity: true)
            } else if order.count > 64 && order.count > 4 * calls.count {
                order.removeAll { calls[$0] == nil }
            }
        }

        /// Removes a call that ended. - Returns: the waits to resume now.
        mutating func removeEnded(_ key: UInt64) -> [CheckedContinuation<Void, Never>] {
            calls[key] = nil
            // Most often empty: no hashing then.
            if !cancelling.isEmpty { cancelling.remove(key) }
            if !drains.isEmpty { drains[key] = nil }
            compact()
            return takeEmptyWaiters()
        }

        /// The waits to resume once nothing is listed or cancelling.
        mutating func takeEmptyWaiters() -> [CheckedContinuation<Void, Never>] {
            guard isEmpty, !emptyWaiters.isEmpty else { return [] }
            defer { emptyWaiters = [:] }
            return Array(emptyWaiters.values)
        }
    }

    private let table = Locked(Table())

    /// Lists a call; a scope operation cancelled already cancels it at once, as a cancelled task would.
    /// - Returns: `false` when the registry is closed: the call is not listed.
    @discardableResult
    func add(_ call: Call) -> Bool {
        let (listed, cancelled) = table.withLock { table -> (Bool, CallStateMachine.CancelReason?) in
            guard !table.closed else { return (false, nil) }
            table.calls[call.key] = call
            table.order.append(call.key)
            return (true, table.cancelled)
        }
        // Removed again first, unless a cancel of the operation took it out in between.
        if let cancelled, take(call.key) { call.cancel(cancelled) }
        return listed
    }

    /// Lists a call after cancelling, in the same step, every call in flight that `replaces` matches, so that of
    /// many calls racing to replace each other exactly the last one listed survives.
    /// - Returns: `false` when the registry is closed: the call is not listed and nothing is replaced.
    @discardableResult
    func add(_ call: Call, replacing replaces: (InFlightRequest) -> Bool) -> Bool {
        let victims = table.withLock { table -> [Call]? in
            guard !table.closed else { return nil }
            let victims = table.remove(where: replaces)
            table.calls[call.key] = call
            table.order.append(call.key)
            return victims
        }
        guard let victims else { return false }
        for victim in victims { victim.cancel(.replaced) }
        return true
    }

    /// Moves a listed call to the cancelling ones. - Returns: whether it was listed.
    private func take(_ key: UInt64) -> Bool {
        table.withLock { table in
            guard table.calls.removeValue(forKey: key) != nil else { return false }
            table.cancelling.insert(key)
            if !table.drains.isEmpty { table.drains[key] = nil }
            table.compact()
            return true
        }
    }

    /// Removes a call that ended; a key removed already is ignored.
    func remove(_ key: UInt64) {
        let waiters = table.withLock { $0.removeEnded(key) }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs `body` under the registry's lock, which is also the lock of the lifecycles of the calls it lists
    /// (`Call`): `body` must not take it again.
    func withLifecycleLock<R: Sendable>(_ body: () -> R) -> R {
        table.withLock { _ in body() }
    }

    /// Ends a listed call: `body` runs the call's end under the registry's lock, and when it hands out the
    /// listing of this registry, the call leaves it in the same acquisition.
    /// - Returns: What `body` returned, without this registry among the listings to leave.
    func end(_ key: UInt64, _ body: () -> CallStateMachine.Actions) -> CallStateMachine.Actions {
        let (actions, waiters) = table.withLock {
            table -> (CallStateMachine.Actions, [CheckedContinuation<Void, Never>]) in
            var actions = body()
            guard actions.leave.takeManager(self) else { return (actions, []) }
            return (actions, table.removeEnded(key))
        }
        for waiter in waiters { waiter.resume() }
        return actions
    }

    /// The calls in flight, oldest first.
    var all: [InFlightRequest] { table.withLock { table in table.order.compactMap { table.calls[$0]?.info } } }

    /// The number of calls listed.
    var count: Int { table.withLock { $0.calls.count } }

    /// Cancels the calls that match, oldest first, and returns them.
    func cancel(_ reason: CallStateMachine.CancelReason, where matches: (InFlightRequest) -> Bool) -> [InFlightRequest]
    {
        let victims = table.withLock { $0.remove(where: matches) }
        for victim in victims { victim.cancel(reason) }
        return victims.map(\.info)
    }

    /// Cancels every call listed, and (for a scope operation) each call listed from now on.
    func cancelAll(_ reason: CallStateMachine.CancelReason, andLater: Bool) {
        let victims = table.withLock { table in
            if andLater { table.cancelled = reason }
            return table.remove { _ in true }
        }
        for victim in victims { victim.cancel(reason) }
    }

    /// Cancels the oldest (`first`) or newest call still in flight.
    func cancelOne(first: Bool) -> InFlightRequest? {
        let victim = table.withLock { table -> Call? in
            let key = first ? table.order.first { table.calls[$0] != nil } : table.order.last { table.calls[$0] != nil }
            guard let key, let call = table.calls.removeValue(forKey: key) else { return nil }
            table.cancelling.insert(key)
            table.drains[key] = nil
            table.compact()
            return call
        }
        victim?.cancel(first ? .first : .last)
        return victim?.info
    }

    // MARK: Shutting down

    /// Whether `close()` was called.
    var isClosed: Bool { table.withLock { $0.closed } }

    /// Runs `handler` when the registry closes, while the call with `key` is listed; at once when it is closed
    /// already. A call that ends or is cancelled drops its handler.
    func onDrain(_ key: UInt64, _ handler: @escaping @Sendable () -> Void) {
        let runNow = table.withLock { table -> Bool in
            guard table.calls[key] != nil else { return false }
            if table.closed { return true }
            table.drains[key] = handler
            return false
        }
        if runNow { handler() }
    }

    /// Lists no call from now on and runs every drain handler (after unlocking).
    func close() {
        let drains = table.withLock { table in
            table.closed = true
            defer { table.drains = [:] }
            return Array(table.drains.values)
        }
        for drain in drains { drain() }
    }

    /// Returns once no call is listed or being cancelled (at once if none is), or as soon as the waiting task is
    /// cancelled.
    /// - Returns: Whether every call had ended.
    func waitUntilEmpty() async -> Bool {
        let id = table.withLock { table in
            table.nextWaiter += 1
            return table.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked under the lock, after a cancellation handler that ran first found nothing to resume.
                let ready = table.withLock { table -> Bool in
                    if table.isEmpty || Task.isCancelled { return true }
                    table.emptyWaiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            table.withLock { $0.emptyWaiters.removeValue(forKey: id) }?.resume()
        }
        return table.withLock { $0.isEmpty }
    }
}
