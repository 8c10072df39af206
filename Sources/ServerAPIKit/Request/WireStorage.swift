import Synchronization

/// The wire group's copy-on-write box (as `CopyOnWrite`), which also keeps what the group resolves to: the
/// URL a call sends is made once for every send and attempt of the same description, not once per attempt.
///
/// Not a generic box: a generic class holding a `Mutex` looks its metadata up at run time whenever a box is
/// freed, and every call frees several.
struct WireStorage: @unchecked Sendable, Hashable {
    // `@unchecked`: `value` is written only through its modify accessor, and only when this storage holds
    // the one reference to the box; `resolved` is written under its lock by any value sharing the box.
    private final class Box {
        // No run-time exclusivity check, for the reason `CopyOnWrite` gives.
        @exclusivity(unchecked) var value: ServerAPI.Wire
        /// What `resolved(_:)` made from `value`.
        private let resolution = Mutex<ResolvedWire?>(nil)
        init(_ value: ServerAPI.Wire) { self.value = value }

        /// The resolution, under its lock (annotated, as every lock of the package is: Locked.swift).
        var resolved: ResolvedWire? {
            get { resolution.withLockAnnotated(token: Unmanaged.passUnretained(self).toOpaque()) { $0 } }
            set { resolution.withLockAnnotated(token: Unmanaged.passUnretained(self).toOpaque()) { $0 = newValue } }
        }
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
                box.resolved = nil
            } else {
                box = Box(box.value)
            }
            yield &box.value
        }
    }

    /// What the group resolves to: made by `make` the first time, kept until the group is written. Two values
    /// that share the box may both run `make`; it is a pure function of the group, so either result is the one.
    func resolved(_ make: (ServerAPI.Wire) throws(ServerAPIError) -> ResolvedWire) throws(ServerAPIError)
        -> ResolvedWire
    {
        if let made = box.resolved { return made }
        let made = try make(box.value)
        box.resolved = made
        return made
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.box === rhs.box || lhs.value == rhs.value
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}
