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

/// The calls in flight, in the order they started.
///
/// The bookkeeping is `InFlightTable`, a value whose events return the calls to cancel; this class
/// runs it under a lock and cancels the calls after unlocking, so a cancellation handler that calls
/// back into the manager cannot deadlock.
final class InFlightRegistry: Sendable {
    private let table = Locked(InFlightTable<Call>())

    /// Registers a call.
    func add(_ call: Call) {
        call.registered(as: table.withLock { $0.add(call.info, member: call) })
    }

    /// Registers a call after cancelling, in the same step, every call in flight that `replaces`
    /// matches, so that of many calls racing to replace each other exactly the last one registered survives.
    func add(_ call: Call, replacing replaces: (InFlightRequest) -> Bool) {
        let (key, victims) = table.withLock { table in
            let victims = table.remove { replaces($0) }
            return (table.add(call.info, member: call), victims)
        }
        call.registered(as: key)
        for victim in victims { victim.member.cancel(.replaced) }
    }

    /// Removes a finished call.
    func remove(_ key: UInt64) {
        table.withLock { $0.remove(key) }
    }

    /// The calls in flight, oldest first.
    var all: [InFlightRequest] { table.withLock { $0.all } }

    /// Cancels the calls that match, and returns them.
    func cancel(_ reason: CallStateMachine.CancelReason, where matches: (InFlightRequest) -> Bool) -> [InFlightRequest]
    {
        let victims = table.withLock { $0.remove(where: matches) }
        for victim in victims { victim.member.cancel(reason) }
        return victims.map(\.info)
    }

    /// Cancels the oldest (`first`) or newest call still in flight.
    func cancelOne(first: Bool) -> InFlightRequest? {
        let victim = table.withLock { $0.removeOne(first: first) }
        victim?.member.cancel(first ? .first : .last)
        return victim?.info
    }
}
