/// The bookkeeping of the requests in flight, as a value: each event changes the table and returns
/// the entries to cancel. It does no locking and cancels nothing itself, so that its selection (id,
/// tag, first, last, all) can be tested on its own with any member; `InFlightRegistry` runs it over
/// `Call`s under a lock and cancels them after unlocking.
struct InFlightTable<Member> {
    /// A request in flight and what cancels it (its `Call`).
    struct Entry {
        var info: InFlightRequest
        var member: Member
    }

    private var nextKey: UInt64 = 0
    private var entries: [UInt64: Entry] = [:]
    /// Keys in start order; removed keys are skipped and dropped by compaction.
    private var order: [UInt64] = []

    /// The number of requests in flight.
    var count: Int { entries.count }

    /// Adds a request; returns the key to remove it with.
    mutating func add(_ info: InFlightRequest, member: Member) -> UInt64 {
        nextKey += 1
        entries[nextKey] = Entry(info: info, member: member)
        order.append(nextKey)
        return nextKey
    }

    /// Removes a request that ended (nothing to cancel); a key removed already is ignored.
    mutating func remove(_ key: UInt64) {
        entries[key] = nil
        compact()
    }

    /// Removes the requests that match, oldest first, and returns them to be cancelled.
    mutating func remove(where matches: (InFlightRequest) -> Bool) -> [Entry] {
        var victims: [Entry] = []
        for key in order {
            guard let entry = entries[key], matches(entry.info) else { continue }
            victims.append(entry)
            entries[key] = nil
        }
        compact()
        return victims
    }

    /// Removes the oldest (`first`) or newest request and returns it to be cancelled.
    mutating func removeOne(first: Bool) -> Entry? {
        let key = first ? order.first { entries[$0] != nil } : order.last { entries[$0] != nil }
        guard let key, let entry = entries.removeValue(forKey: key) else { return nil }
        compact()
        return entry
    }

    /// The requests in flight, oldest first.
    var all: [InFlightRequest] { order.compactMap { entries[$0]?.info } }

    /// Keeps the order list from growing with keys already removed.
    private mutating func compact() {
        if entries.isEmpty {
            order.removeAll(keepingCapacity: true)
        } else if order.count > 64 && order.count > 4 * entries.count {
            order.removeAll { entries[$0] == nil }
        }
    }
}

extension InFlightTable: Sendable where Member: Sendable {}
extension InFlightTable.Entry: Sendable where Member: Sendable {}
