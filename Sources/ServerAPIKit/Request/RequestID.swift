import Synchronization

/// The identity of one call, unique within the process.
public struct RequestID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number behind the id.
    public var rawValue: UInt64

    /// Creates an id from a number (for tests and persistence; use `next()` for new calls).
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A new id, never returned before in this process.
    public static func next() -> RequestID {
        RequestID(rawValue: counter.add(1, ordering: .relaxed).newValue)
    }

    public static func < (lhs: RequestID, rhs: RequestID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// "#N", as logs print it.
    public var description: String { "#\(rawValue)" }

    private static let counter = Atomic<UInt64>(0)
}
