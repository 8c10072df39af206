extension ServerAPIError.Kind {
    /// The origin's circuit breaker is open: the call was not sent. `ServerAPIError.circuitOpen` says
    /// which origin and when it probes again.
    public static let circuitOpen = ServerAPIError.Kind(rawValue: "circuit open")
    /// The origin's concurrency limit was reached and the call could not wait for a slot (the queue was
    /// full, or the wait ran out). `ServerAPIError.concurrencyLimited` says which.
    public static let concurrencyLimited = ServerAPIError.Kind(rawValue: "concurrency limited")
}

/// Why a call failed with `circuitOpen`: the origin, and when its circuit lets a probe through.
public struct CircuitOpenDetails: Error, Sendable, Hashable {
    /// The origin whose circuit refused the call.
    public var origin: ServerOrigin
    /// `open`, or `half-open` with its probes already out.
    public var state: CircuitState
    /// How long until the circuit lets a probe through (zero when half-open).
    public var probeAfter: Duration
}

/// Why a call failed with `concurrencyLimited`.
public struct ConcurrencyLimitDetails: Error, Sendable, Hashable {
    /// What happened to the call.
    public enum Reason: String, Sendable, Hashable {
        /// The wait queue was full.
        case queueFull = "queue full"
        /// It waited for a slot for the policy's whole queue timeout.
        case queueTimeout = "queue timeout"
    }

    /// The origin whose concurrency limit refused the call.
    public var origin: ServerOrigin
    /// What happened.
    public var reason: Reason
    /// The limit at the time.
    public var limit: Int
}

extension ServerAPIError {
    /// The origin and next probe, for a `circuitOpen` error.
    public var circuitOpen: CircuitOpenDetails? { underlying as? CircuitOpenDetails }

    /// The origin and reason, for a `concurrencyLimited` error.
    public var concurrencyLimited: ConcurrencyLimitDetails? { underlying as? ConcurrencyLimitDetails }

    static func circuitOpenError(_ details: CircuitOpenDetails) -> ServerAPIError {
        let when =
            details.state == .open
            ? "it lets a probe through in \(details.probeAfter.seconds.formatted3) s"
            : "its probes are in flight"
        return ServerAPIError(
            .circuitOpen, "the circuit breaker of \(details.origin) is \(details.state): \(when)", underlying: details)
    }

    static func concurrencyLimitedError(_ details: ConcurrencyLimitDetails) -> ServerAPIError {
        let what =
            details.reason == .queueFull
            ? "the queue of calls waiting for a slot is full"
            : "the call waited for a slot for the whole queue timeout"
        return ServerAPIError(
            .concurrencyLimited, "\(details.limit) calls to \(details.origin) are in flight and \(what)",
            underlying: details)
    }
}

extension Double {
    /// The number with at most three significant digits, for messages.
    fileprivate var formatted3: String {
        let rounded = (self * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
