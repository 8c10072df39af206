import Synchronization

/// The wire group's copy-on-write box (as `CopyOnWrite`), which also keeps what the group resolves to: the
/// URL a call sends is made once for every send and attempt of the same description, not once per attempt.
///
/// Not a generic box: a generic class holding an atomic looks its metadata up at run time whenever a box is
/// freed, and every call frees several.
struct WireStorage: @unchecked Sendable, Hashable {
    // `@unchecked`: `value` is written only through its modify accessor, and only when this storage holds
    // the one reference to the box; `resolution` is written once, by whichever value sharing the box claims it
    // (`resolvedState`), and read only once it is published.
    private final class Box {
        // No run-time exclusivity check, for the reason `CopyOnWrite` gives.
        @exclusivity(unchecked) var value: ServerAPI.Wire
        /// What `resolved(_:)` made from `value`; written only while `resolvedState` is `claimed`.
        @exclusivity(unchecked) var resolution: ResolvedWire?
        /// `empty`, `claimed` (one value is writing `resolution`) or `published`. An atomic rather than a lock:
        /// every send of a description reads it, and a lock there was one acquisition per call.
        let resolvedState = Atomic<UInt8>(Box.empty)

        static let empty: UInt8 = 0
        static let claimed: UInt8 = 1
        static let published: UInt8 = 2

        init(_ value: ServerAPI.Wire) { self.value = value }
    }

    private var box: Box

    init(_ value: ServerAPI.Wire) {
        box = Box(value)
    }

    /// The group; writing it copies the box first when another value shares it, and drops the resolution.
    var value: ServerAPI.Wire {
        get { box.value }
        _modify {
            if isKnownUniquelyReferenced(&box) {
                // The one reference: nobody else can be reading or publishing the resolution.
                if box.resolvedState.load(ordering: .relaxed) != Box.empty {
                    box.resolution = nil
                    box.resolvedState.store(Box.empty, ordering: .relaxed)
                }
            } else {
                box = Box(box.value)
            }
            yield &box.value
        }
    }

    /// What the group resolves to: made by `make` the first time, kept until the group is written. Two values
    /// that share the box may both run `make`; it is a pure function of the group, so either result is the one,
    /// and the first to claim the box keeps it.
    func resolved(_ make: (ServerAPI.Wire) throws(ServerAPIError) -> ResolvedWire) throws(ServerAPIError)
        -> ResolvedWire
    {
        if box.resolvedState.load(ordering: .acquiring) == Box.published, let made = box.resolution { return made }
        let made = try make(box.value)
        if box.resolvedState.compareExchange(expected: Box.empty, desired: Box.claimed, ordering: .acquiring)
            .exchanged
        {
            box.resolution = made
            box.resolvedState.store(Box.published, ordering: .releasing)
        }
        return made
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.box === rhs.box || lhs.value == rhs.value
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}
