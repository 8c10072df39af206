@_spi(Backend) import ServerAPIKit

/// A list that callbacks on any thread append to and a test reads: the one locked collector of the
/// test targets (logs of strings, requests a stub saw, outcomes of calls).
///
/// ```swift
/// let seen = Recorder<String>()
/// mock.stub(handler: { request in seen.append(request.url.path); return .json("{}") })
/// #expect(seen.all == ["/a", "/b"])
/// ```
public final class Recorder<Element: Sendable>: Sendable {
    private let elements = Locked<[Element]>([])

    /// Creates an empty recorder.
    public init() {}

    /// Appends one element. Safe from any thread.
    public func append(_ element: Element) { elements.withLock { $0.append(element) } }

    /// Every element so far, in the order they were appended.
    public var all: [Element] { elements.withLock { $0 } }

    /// How many elements were appended so far.
    public var count: Int { elements.withLock { $0.count } }
}
