/// When an origin's circuit opens, how long it stays open, and how it closes again.
///
/// Closed, calls go through and their outcomes are counted. After `trip` (N failures in a row, or a
/// failure ratio over a window) the circuit opens: calls to the origin fail at once with
/// `ServerAPIError.Kind.circuitOpen`, which names the origin and when it probes again. After
/// `openDuration` it is half-open: `probes` calls go through; if they all succeed it closes, and the
/// first failure opens it again for another `openDuration`.
public struct CircuitBreakerPolicy: Sendable, Hashable {
    /// What opens the circuit.
    public enum Trip: Sendable, Hashable {
        /// This many failed attempts in a row.
        case consecutiveFailures(Int)
        /// A share of failed attempts (0…1) over a window, once the window holds at least `minimumCalls`.
        case failureRatio(Double, minimumCalls: Int, window: Duration)
    }

    /// What opens the circuit.
    public var trip: Trip
    /// How long the circuit stays open before it lets probes through.
    public var openDuration: Duration
    /// How many probes a half-open circuit lets through at once; they must all succeed for it to close.
    public var probes: Int
    /// Which outcomes of an attempt count as failures.
    public var failures: FailureClassification

    /// Creates a breaker that stops calls to an origin after it trips, then probes it before closing again.
    /// - Parameters:
    ///   - trip: What opens the circuit.
    ///   - openDuration: How long it stays open before probing (5 s).
    ///   - probes: Probes let through when half-open (1).
    ///   - failures: What counts as a failure (`.default`: cannot connect, timeouts, broken connections, 5xx).
    public init(
        trip: Trip = .consecutiveFailures(5), openDuration: Duration = .seconds(5), probes: Int = 1,
        failures: FailureClassification = .default
    ) {
        self.trip = trip
        self.openDuration = max(openDuration, .zero)
        self.probes = max(probes, 1)
        self.failures = failures
    }

    /// Opens after 5 failures in a row, for 5 s, then lets one probe through.
    public static let `default` = CircuitBreakerPolicy()

    /// Opens after `count` failures in a row.
    /// - Parameters:
    ///   - count: Failures in a row that open the circuit.
    ///   - openDuration: How long it stays open before probing.
    /// - Returns: The policy.
    public static func consecutiveFailures(_ count: Int, openFor openDuration: Duration = .seconds(5))
        -> CircuitBreakerPolicy
    {
        CircuitBreakerPolicy(trip: .consecutiveFailures(max(count, 1)), openDuration: openDuration)
    }

    /// Opens when at least `ratio` of the attempts of the last `window` failed, once there were `minimumCalls`.
    /// - Parameters:
    ///   - ratio: The share of failures, 0…1 (0.5: half).
    ///   - minimumCalls: Attempts the window must hold before the ratio counts (20).
    ///   - window: How far back attempts count (10 s).
    ///   - openDuration: How long it stays open before probing.
    /// - Returns: The policy.
    public static func failureRatio(
        _ ratio: Double, minimumCalls: Int = 20, window: Duration = .seconds(10),
        openFor openDuration: Duration = .seconds(5)
    ) -> CircuitBreakerPolicy {
        CircuitBreakerPolicy(
            trip: .failureRatio(min(max(ratio, 0), 1), minimumCalls: max(minimumCalls, 1), window: window),
            openDuration: openDuration)
    }
}

/// Which outcomes of an attempt count as failures for a circuit breaker (and as overload for an
/// adaptive concurrency limit).
///
/// A response with a status the classification lists is a failure even when the call accepts it; any
/// other response is a success (a 404 says the origin is up). An error is a failure when its kind is
/// listed (an `httpStatus` error is judged by its status). A cancelled attempt counts as neither.
public struct FailureClassification: Sendable, Hashable {
    /// Error kinds that are failures.
    public var kinds: Set<ServerAPIError.Kind>
    /// Response statuses that are failures.
    public var statuses: Set<Int>

    /// Creates the set of failures that count against the circuit: these error kinds and HTTP statuses.
    public init(kinds: Set<ServerAPIError.Kind>, statuses: Set<Int>) {
        self.kinds = kinds
        self.statuses = statuses
    }

    /// Cannot connect, timeouts, broken connections and TLS failures, and every 5xx status.
    public static let `default` = FailureClassification(
        kinds: [.cannotConnect, .timedOut, .network, .tls], statuses: Set(500..<600))

    /// Connection failures and timeouts only: the origin answering at all counts as a success.
    public static let connectionFailures = FailureClassification(
        kinds: [.cannotConnect, .timedOut, .network, .tls], statuses: [])

    /// Whether a response with this status is a failure.
    public func isFailure(status: Int) -> Bool { statuses.contains(status) }

    /// Whether an error is a failure; cancellations never are.
    public func isFailure(_ error: ServerAPIError) -> Bool {
        if error.kind == .cancelled { return false }
        if error.kind == .httpStatus, let status = error.status { return statuses.contains(status) }
        return kinds.contains(error.kind)
    }
}

/// The state of an origin's circuit breaker.
public enum CircuitState: String, Sendable, Hashable, CustomStringConvertible {
    /// Calls go through.
    case closed
    /// Calls fail at once until the next probe.
    case open
    /// A few probes go through; the others fail at once.
    case halfOpen = "half-open"

    /// `closed`, `open` or `half-open`.
    public var description: String { rawValue }
}
