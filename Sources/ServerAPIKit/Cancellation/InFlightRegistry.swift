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

/// The requests in flight, in the order they started, each with the token that cancels it.
///
/// The bookkeeping is `InFlightTable`, a value whose events return the tokens to fire; this class
/// runs it under a lock and fires the tokens after unlocking, so a cancellation handler that calls
/// back into the manager cannot deadlock.
final class InFlightRegistry: Sendable {
    private let table = Locked(InFlightTable())

    /// Registers a request and returns the key to remove it with.
    func add(_ info: InFlightRequest, token: CancellationToken) -> UInt64 {
        table.withLock { $0.add(info, token: token) }
    }

    /// Registers a request after cancelling, in the same step, every request in flight that
    /// `replaces` matches, so that of many calls racing to replace each other exactly the last
    /// one registered survives.
    /// - Returns: The key to remove the request with.
    func add(
        _ info: InFlightRequest, replacing replaces: (InFlightRequest) -> Bool, token: CancellationToken
    ) -> UInt64 {
        let (key, victims) = table.withLock { table in
            let victims = table.remove { replaces($0) }
            return (table.add(info, token: token), victims)
        }
        for victim in victims { victim.token.cancel() }
        return key
    }

    /// Removes a finished request.
    func remove(_ key: UInt64) {
        table.withLock { $0.remove(key) }
    }

    /// The requests in flight, oldest first.
    var all: [InFlightRequest] { table.withLock { $0.all } }

    /// Cancels the requests that match, and returns them.
    func cancel(where matches: (InFlightRequest) -> Bool) -> [InFlightRequest] {
        let victims = table.withLock { $0.remove(where: matches) }
        for victim in victims { victim.token.cancel() }
        return victims.map(\.info)
    }

    /// Cancels the oldest (`first`) or newest request still in flight.
    func cancelOne(first: Bool) -> InFlightRequest? {
        let victim = table.withLock { $0.removeOne(first: first) }
        victim?.token.cancel()
        return victim?.info
    }
}
