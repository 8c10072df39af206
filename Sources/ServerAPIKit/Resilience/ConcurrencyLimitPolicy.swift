/// How many attempts may be in flight to an origin at once, and what happens to the others.
///
/// Past the limit, attempts wait in a queue of at most `maxQueue`, first in first out, for up to
/// `queueTimeout`; a full queue or a wait that runs out fails the call with
/// `ServerAPIError.Kind.concurrencyLimited`. The limit is fixed, or adaptive: it finds the origin's
/// capacity from the latencies and overload signals (timeouts, 429, 503) it observes.
public struct ConcurrencyLimitPolicy: Sendable, Hashable {
    /// How the limit is set.
    public enum Limit: Sendable, Hashable {
        /// Always this many.
        case fixed(Int)
        /// Additive increase, multiplicative decrease: grows by one per answer while in use, shrinks
        /// by `backoffRatio` on each overload signal or answer slower than the threshold.
        case aimd(AIMDLimit)
        /// A gradient controller (Envoy's adaptive concurrency, Netflix's concurrency-limits): measures
        /// the origin's latency under little load, then scales the limit by that latency ÷ the latest one.
        case gradient(GradientLimit)
    }

    /// How the limit is set.
    public var limit: Limit
    /// How many attempts may wait for a slot; 0 fails at once when the limit is reached.
    public var maxQueue: Int
    /// How long an attempt may wait for a slot.
    public var queueTimeout: Duration

    /// Creates a limit on the attempts in flight to one origin, with a queue for those past it.
    /// - Parameters:
    ///   - limit: How the limit is set.
    ///   - maxQueue: How many attempts may wait for a slot (100).
    ///   - queueTimeout: How long an attempt may wait (1 s).
    public init(limit: Limit, maxQueue: Int = 100, queueTimeout: Duration = .seconds(1)) {
        self.limit = limit
        self.maxQueue = max(maxQueue, 0)
        self.queueTimeout = max(queueTimeout, .zero)
    }

    /// At most `limit` attempts at once.
    /// - Parameters:
    ///   - limit: Attempts in flight at once.
    ///   - maxQueue: How many may wait.
    ///   - queueTimeout: How long one may wait.
    /// - Returns: The policy.
    public static func fixed(_ limit: Int, maxQueue: Int = 100, queueTimeout: Duration = .seconds(1))
        -> ConcurrencyLimitPolicy
    {
        ConcurrencyLimitPolicy(limit: .fixed(max(limit, 1)), maxQueue: maxQueue, queueTimeout: queueTimeout)
    }

    /// An AIMD limit with its defaults.
    public static let aimd = ConcurrencyLimitPolicy(limit: .aimd(AIMDLimit()))

    /// A gradient limit with its defaults.
    public static let gradient = ConcurrencyLimitPolicy(limit: .gradient(GradientLimit()))
}

/// Settings of an additive-increase, multiplicative-decrease concurrency limit.
public struct AIMDLimit: Sendable, Hashable {
    /// The limit before any answer was seen.
    public var initial: Int
    /// The lowest limit.
    public var minimum: Int
    /// The highest limit.
    public var maximum: Int
    /// The factor applied on overload (0.9).
    public var backoffRatio: Double
    /// An answer slower than this counts as overload.
    public var latencyThreshold: Duration

    /// Creates AIMD settings: the limit grows by one per success and shrinks by `backoffRatio` on a drop or a slow
    /// answer.
    public init(
        initial: Int = 20, minimum: Int = 1, maximum: Int = 200, backoffRatio: Double = 0.9,
        latencyThreshold: Duration = .seconds(5)
    ) {
        self.minimum = max(minimum, 1)
        self.maximum = max(maximum, self.minimum)
        self.initial = min(max(initial, self.minimum), self.maximum)
        self.backoffRatio = min(max(backoffRatio, 0.1), 0.99)
        self.latencyThreshold = latencyThreshold
    }
}

/// Settings of a gradient concurrency limit.
///
/// As Envoy's adaptive concurrency filter: the limit measures the origin's latency with little load
/// (its *minimum latency*: the median of `probeSamples` answers while at most `probeConcurrency` are in
/// flight), then on each answer scales itself by `tolerance` × minimum ÷ latest latency (kept between
/// 0.5 and 1) and adds √limit of headroom. It settles where latency is about `tolerance` times the
/// minimum; every `probeInterval` answers it drops to `probeConcurrency` to measure the minimum again,
/// so it follows an origin that got faster or slower.
public struct GradientLimit: Sendable, Hashable {
    /// The limit before any answer was seen.
    public var initial: Int
    /// The lowest limit.
    public var minimum: Int
    /// The highest limit.
    public var maximum: Int
    /// How far latency may exceed the minimum latency before the limit shrinks (1.5: half as long again,
    /// Netflix's default).
    public var tolerance: Double
    /// How much of each new estimate is taken (0.2).
    public var smoothing: Double
    /// How many attempts may be in flight while the minimum latency is measured (3).
    public var probeConcurrency: Int
    /// How many answers the minimum latency is the median of (20).
    public var probeSamples: Int
    /// How many answers pass between two measurements of the minimum latency (1,000).
    public var probeInterval: Int

    /// Creates gradient settings: the limit follows the ratio of the long-term to the recent latency.
    public init(
        initial: Int = 20, minimum: Int = 1, maximum: Int = 200, tolerance: Double = 1.5, smoothing: Double = 0.2,
        probeConcurrency: Int = 3, probeSamples: Int = 20, probeInterval: Int = 1_000
    ) {
        self.minimum = max(minimum, 1)
        self.maximum = max(maximum, self.minimum)
        self.initial = min(max(initial, self.minimum), self.maximum)
        self.tolerance = max(tolerance, 1)
        self.smoothing = min(max(smoothing, 0.01), 1)
        self.probeConcurrency = max(probeConcurrency, 1)
        self.probeSamples = max(probeSamples, 1)
        self.probeInterval = max(probeInterval, 1)
    }
}
