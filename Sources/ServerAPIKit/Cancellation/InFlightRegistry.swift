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
    public init(
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
/// that ends removes itself (`Call.end`); one that the registry cancelled was removed already.
final class InFlightRegistry: Sendable {
    private struct Table {
        var calls: [UInt64: Call] = [:]
        /// Keys in start order; removed keys are skipped and dropped by compaction.
        var order: [UInt64] = []
        /// Set by a scope operation's cancel: calls added later are cancelled as they join.
        var cancelled: CallStateMachine.CancelReason?

        mutating func remove(where matches: (InFlightRequest) -> Bool) -> [Call] {
            var victims: [Call] = []
            for key in order {
                guard let call = calls[key], matches(call.info) else { continue }
                victims.append(call)
                calls[key] = nil
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
    }

    private let table = Locked(Table())

    /// Lists a call; a scope operation cancelled already cancels it at once, as a cancelled task would.
    func add(_ call: Call) {
        let cancelled = table.withLock { table in
            table.calls[call.key] = call
            table.order.append(call.key)
            return table.cancelled
        }
        // Removed again first, unless a cancel of the operation took it out in between.
        if let cancelled, table.withLock({ $0.calls.removeValue(forKey: call.key) }) != nil {
            call.cancel(cancelled, removedFrom: self)
        }
    }

    /// Lists a call after cancelling, in the same step, every call in flight that `replaces` matches, so that of
    /// many calls racing to replace each other exactly the last one listed survives.
    func add(_ call: Call, replacing replaces: (InFlightRequest) -> Bool) {
        let victims = table.withLock { table in
            let victims = table.remove(where: replaces)
            table.calls[call.key] = call
            table.order.append(call.key)
            return victims
        }
        for victim in victims { victim.cancel(.replaced, removedFrom: self) }
    }

    /// Removes a call that ended; a key removed already is ignored.
    func remove(_ key: UInt64) {
        table.withLock { table in
            table.calls[key] = nil
            table.compact()
        }
    }

    /// The calls in flight, oldest first.
    var all: [InFlightRequest] { table.withLock { table in table.order.compactMap { table.calls[$0]?.info } } }

    /// The number of calls listed.
    var count: Int { table.withLock { $0.calls.count } }

    /// Cancels the calls that match, oldest first, and returns them.
    func cancel(_ reason: CallStateMachine.CancelReason, where matches: (InFlightRequest) -> Bool) -> [InFlightRequest]
    {
        let victims = table.withLock { $0.remove(where: matches) }
        for victim in victims { victim.cancel(reason, removedFrom: self) }
        return victims.map(\.info)
    }

    /// Cancels every call listed, and (for a scope operation) each call listed from now on.
    func cancelAll(_ reason: CallStateMachine.CancelReason, andLater: Bool) {
        let victims = table.withLock { table in
            if andLater { table.cancelled = reason }
            return table.remove { _ in true }
        }
        for victim in victims { victim.cancel(reason, removedFrom: self) }
    }

    /// Cancels the oldest (`first`) or newest call still in flight.
    func cancelOne(first: Bool) -> InFlightRequest? {
        let victim = table.withLock { table -> Call? in
            let key = first ? table.order.first { table.calls[$0] != nil } : table.order.last { table.calls[$0] != nil }
            guard let key, let call = table.calls.removeValue(forKey: key) else { return nil }
            table.compact()
            return call
        }
        victim?.cancel(first ? .first : .last, removedFrom: self)
        return victim?.info
    }
}
