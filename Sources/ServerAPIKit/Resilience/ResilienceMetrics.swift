/// What the resilience policies did to a call: part of its `RequestMetrics`.
public struct ResilienceMetrics: Sendable, Hashable {
    /// The origin the policies' state belongs to; `nil` when no policy applied.
    public var origin: ServerOrigin?
    /// Whether a hedge (a second attempt of a slow call) was sent.
    public var hedged = false
    /// Whether the hedge's answer was the one delivered.
    public var hedgeWon = false
    /// Whether the retry budget refused a retry, so that the call ended with its last error.
    public var retryRefusedByBudget = false
    /// Whether an attempt waited in the queue for a concurrency slot.
    public var waitedForSlot = false
    /// How long the call's attempts waited for concurrency slots, in all.
    public var slotWait: Duration = .zero
    /// The origin's concurrency limit when the last attempt asked for a slot.
    public var concurrencyLimit: Int?
    /// The state of the origin's circuit breaker when the last attempt asked to go; `nil` without a breaker.
    public var circuitState: CircuitState?

    /// Creates metrics where no policy did anything.
    public init() {}
}

/// A change of an origin's circuit-breaker state, for `ServerAPIPlugin.circuitStateDidChange(_:)`.
public struct CircuitStateChange: Sendable, Hashable {
    /// The origin whose circuit changed.
    public var origin: ServerOrigin
    /// The state before.
    public var from: CircuitState
    /// The state now.
    public var to: CircuitState
    /// For a circuit that opened: how long until it lets a probe through.
    public var probeAfter: Duration?

    /// Creates a record of one origin's circuit moving from one state to another.
    public init(origin: ServerOrigin, from: CircuitState, to: CircuitState, probeAfter: Duration? = nil) {
        self.origin = origin
        self.from = from
        self.to = to
        self.probeAfter = probeAfter
    }
}
