import Foundation

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
/// Cancelling collects the victims under the lock and fires their tokens after unlocking, so a
/// cancellation handler that calls back into the manager cannot deadlock.
final class InFlightRegistry: Sendable {
    private struct Entry {
        var info: InFlightRequest
        var token: CancellationToken
    }

    private struct State {
        var nextToken: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
        // Start order; tokens removed lazily (kept small by compaction).
        var order: [UInt64] = []
        var orderStart = 0
    }

    private let state = Locked(State())

    /// Registers a request and returns the token to remove it with.
    func add(_ info: InFlightRequest, token cancellation: CancellationToken) -> UInt64 {
        state.withLock { state in
            state.nextToken += 1
            let token = state.nextToken
            state.entries[token] = Entry(info: info, token: cancellation)
            state.order.append(token)
            return token
        }
    }

    /// Registers a request after cancelling, in the same step, every request in flight that
    /// `replaces` matches, so that of many calls racing to replace each other exactly the last
    /// one registered survives.
    /// - Returns: The token to remove the request with.
    func add(
        _ info: InFlightRequest, replacing replaces: (InFlightRequest) -> Bool, token cancellation: CancellationToken
    ) -> UInt64 {
        let (token, victims) = state.withLock { state -> (UInt64, [Entry]) in
            var victims: [Entry] = []
            for token in state.order[state.orderStart...] {
                guard let entry = state.entries[token], replaces(entry.info) else { continue }
                victims.append(entry)
                state.entries[token] = nil
            }
            state.nextToken += 1
            state.entries[state.nextToken] = Entry(info: info, token: cancellation)
            state.order.append(state.nextToken)
            return (state.nextToken, victims)
        }
        for victim in victims { victim.token.cancel() }
        return token
    }

    /// Removes a finished request.
    func remove(_ token: UInt64) {
        state.withLock { state in
            state.entries[token] = nil
            if state.entries.isEmpty {
                state.order.removeAll(keepingCapacity: true)
                state.orderStart = 0
            } else if state.order.count > 64 && state.order.count > 4 * state.entries.count {
                state.order = state.order[state.orderStart...].filter { state.entries[$0] != nil }
                state.orderStart = 0
            }
        }
    }

    /// The requests in flight, oldest first.
    var all: [InFlightRequest] {
        state.withLock { state in
            state.order[state.orderStart...].compactMap { state.entries[$0]?.info }
        }
    }

    /// Cancels the requests that match, and returns them.
    func cancel(where matches: (InFlightRequest) -> Bool) -> [InFlightRequest] {
        let victims: [Entry] = state.withLock { state in
            var victims: [Entry] = []
            for token in state.order[state.orderStart...] {
                guard let entry = state.entries[token], matches(entry.info) else { continue }
                victims.append(entry)
                state.entries[token] = nil
            }
            return victims
        }
        for victim in victims { victim.token.cancel() }
        return victims.map(\.info)
    }

    /// Cancels the oldest (`first`) or newest request still in flight.
    func cancelOne(first: Bool) -> InFlightRequest? {
        let victim: Entry? = state.withLock { state in
            let live = state.order[state.orderStart...]
            let token = first ? live.first { state.entries[$0] != nil } : live.last { state.entries[$0] != nil }
            guard let token else { return nil }
            defer { state.entries[token] = nil }
            return state.entries[token]
        }
        victim?.token.cancel()
        return victim?.info
    }
}
