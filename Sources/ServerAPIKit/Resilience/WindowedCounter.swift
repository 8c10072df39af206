/// Two counts over a sliding window of time (requests and retries, calls and failures, calls and
/// hedges), kept in a fixed ring of buckets so that memory does not grow with traffic.
///
/// Time is a `Duration` since an epoch of the caller's choosing, read from an injected clock. The
/// window is `slots` buckets of `window / slots` each: an event counts from the moment it is added
/// until the start of the bucket `slots` widths after its own, so it leaves the window between
/// `window - width` and `window` after it happened.
struct WindowedCounter: Sendable, Hashable {
    private struct Slot: Sendable, Hashable {
        var index: Int64 = .min
        var first = 0
        var second = 0
    }

    /// The length of the window.
    let window: Duration
    private let width: Duration
    private var slots: [Slot]

    /// Creates a counter of events in a sliding time window, kept in `slots` buckets.
    /// - Parameters:
    ///   - window: The length of the window; at least a nanosecond.
    ///   - slots: How many buckets the window is cut into; more means sharper edges.
    init(window: Duration, slots: Int = 10) {
        let count = max(1, slots)
        let window = max(window, .nanoseconds(1))
        self.window = window
        self.width = max(window / count, .nanoseconds(1))
        self.slots = Array(repeating: Slot(), count: count)
    }

    private func index(at now: Duration) -> Int64 {
        Int64((now / width).rounded(.down))
    }

    /// Adds to the counts at `now`.
    mutating func add(first: Int = 0, second: Int = 0, at now: Duration) {
        let index = index(at: now)
        let position = Int(((index % Int64(slots.count)) + Int64(slots.count)) % Int64(slots.count))
        if slots[position].index != index { slots[position] = Slot(index: index) }
        slots[position].first += first
        slots[position].second += second
    }

    /// The two counts of the events still in the window at `now`.
    func sums(at now: Duration) -> (first: Int, second: Int) {
        let current = index(at: now)
        let oldest = current - Int64(slots.count) + 1
        var first = 0
        var second = 0
        for slot in slots where slot.index >= oldest && slot.index <= current {
            first += slot.first
            second += slot.second
        }
        return (first, second)
    }

    /// Forgets every event.
    mutating func reset() {
        slots = Array(repeating: Slot(), count: slots.count)
    }
}
