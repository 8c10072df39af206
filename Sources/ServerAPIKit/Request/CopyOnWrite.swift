/// Keeps a large stored property of a value type in one shared, copy-on-write box, so that the value
/// holding it stays small when it is copied.
///
/// The pipeline's `async` functions keep the values they hold across a suspension in the call's async
/// frames, which stay allocated for as long as the call is in flight; every inline copy of a large value
/// (a `ServerAPI`, a `TransportRequest`, a `ServerAPIError`) would make such a frame larger. Boxed, a copy is
/// one reference. Reading is one load; writing copies the box only when it is
/// shared (`isKnownUniquelyReferenced`), so a chain of modifiers on a fresh value writes in place.
///
/// The property stays public through a computed property over a private stored one:
///
/// ```swift
/// public var policy: Policy {
///     get { _policy.value }
///     _modify { yield &_policy.value }
/// }
/// private var _policy: CopyOnWrite<Policy>
/// ```
/// Equality and hashing are the wrapped value's, so a type that synthesizes `Hashable` from its stored
/// properties compares and hashes as it did before its property was boxed.
struct CopyOnWrite<Value: Sendable>: @unchecked Sendable {
    // `@unchecked`: the box is written only through `value`'s modify accessor, and only when this value
    // holds the one reference to it; a shared box is never written.
    private final class Box {
        // No run-time exclusivity check (one per read of any boxed property, on every call): the box is written
        // only while this value holds the one reference to it, inside an access to this value, which the
        // compiler and the run time already check; a shared box is only ever read.
        @exclusivity(unchecked) var value: Value
        init(_ value: Value) { self.value = value }
    }

    private var box: Box

    init(_ value: Value) {
        box = Box(value)
    }

    /// The boxed value; writing it copies the box first when another value shares it.
    var value: Value {
        get { box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }
}

extension CopyOnWrite: Equatable where Value: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.box === rhs.box || lhs.value == rhs.value
    }
}

extension CopyOnWrite: Hashable where Value: Hashable {
    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}
