/// A least-recently-used map: a hash map from key to slot, and a doubly linked list threaded
/// through an array of slots by index, so that lookup, insertion, promotion and removal are O(1).
///
/// Not thread-safe by itself: `MemoryCache` keeps it inside a `Mutex`.
struct LRUStorage<Key: Hashable, Value> {
    private struct Node {
        var key: Key
        var value: Value
        var cost: Int
        var previous: Int
        var next: Int
    }

    private static var none: Int { -1 }

    private var slots: [Node?] = []
    private var freeSlots: [Int] = []
    private var index: [Key: Int] = [:]
    /// The most recently used slot.
    private var head = LRUStorage.none
    /// The least recently used slot: the next to evict.
    private var tail = LRUStorage.none

    /// The sum of the costs of the stored values.
    private(set) var totalCost = 0

    /// The number of stored values.
    var count: Int { index.count }

    /// The value of `key`, made the most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        promote(slot)
        return slots[slot]?.value
    }

    /// The value of `key`, without changing the order.
    func peek(_ key: Key) -> Value? {
        index[key].flatMap { slots[$0]?.value }
    }

    /// Stores a value as the most recently used, replacing any value of the same key.
    mutating func set(_ value: Value, for key: Key, cost: Int) {
        if let slot = index[key] {
            totalCost += cost - (slots[slot]?.cost ?? 0)
            slots[slot]?.value = value
            slots[slot]?.cost = cost
            promote(slot)
            return
        }
        let node = Node(key: key, value: value, cost: cost, previous: Self.none, next: head)
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[slot] = node
        } else {
            slot = slots.count
            slots.append(node)
        }
        if head != Self.none { slots[head]?.previous = slot }
        head = slot
        if tail == Self.none { tail = slot }
        index[key] = slot
        totalCost += cost
    }

    /// Removes the value of `key`.
    /// - Returns: The removed value, if there was one.
    @discardableResult
    mutating func removeValue(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        return remove(slot: slot)?.value
    }

    /// Removes the least recently used value.
    /// - Returns: Its key and value, or `nil` when empty.
    mutating func removeLeastRecentlyUsed() -> (key: Key, value: Value)? {
        guard tail != Self.none, let node = remove(slot: tail) else { return nil }
        return (node.key, node.value)
    }

    /// Removes every value.
    mutating func removeAll() {
        self = LRUStorage()
    }

    /// Removes every value for which `shouldRemove` is true.
    /// - Returns: How many were removed.
    @discardableResult
    mutating func removeAll(where shouldRemove: (Key, Value) -> Bool) -> Int {
        var doomed: [Int] = []
        var slot = head
        while slot != Self.none, let node = slots[slot] {
            if shouldRemove(node.key, node.value) { doomed.append(slot) }
            slot = node.next
        }
        for slot in doomed { remove(slot: slot) }
        return doomed.count
    }

    /// The keys from the most to the least recently used.
    var keysByRecency: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var slot = head
        while slot != Self.none, let node = slots[slot] {
            keys.append(node.key)
            slot = node.next
        }
        return keys
    }

    /// Whether the list, the map and the cost total agree (for tests).
    var isConsistent: Bool {
        var visited = 0
        var cost = 0
        var previous = Self.none
        var slot = head
        while slot != Self.none {
            guard let node = slots[slot], node.previous == previous, index[node.key] == slot else { return false }
            visited += 1
            cost += node.cost
            previous = slot
            slot = node.next
            if visited > slots.count { return false }
        }
        return previous == tail && visited == index.count && cost == totalCost
            && slots.count - freeSlots.count == visited
    }

    // MARK: The list

    private mutating func promote(_ slot: Int) {
        guard slot != head else { return }
        unlink(slot)
        slots[slot]?.previous = Self.none
        slots[slot]?.next = head
        if head != Self.none { slots[head]?.previous = slot }
        head = slot
        if tail == Self.none { tail = slot }
    }

    private mutating func unlink(_ slot: Int) {
        guard let node = slots[slot] else { return }
        if node.previous != Self.none { slots[node.previous]?.next = node.next } else { head = node.next }
        if node.next != Self.none { slots[node.next]?.previous = node.previous } else { tail = node.previous }
    }

    @discardableResult
    private mutating func remove(slot: Int) -> Node? {
        guard let node = slots[slot] else { return nil }
        unlink(slot)
        slots[slot] = nil
        freeSlots.append(slot)
        index[node.key] = nil
        totalCost -= node.cost
        return node
    }
}
