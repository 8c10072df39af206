/// When a second attempt of a slow call goes out, and how many such hedges an origin may take.
///
/// A hedged call sends its attempt; if no answer has come after `delay`, it sends the same request
/// again, and the first complete answer wins: the other transfer is cancelled. Only calls with an
/// idempotent method (GET, HEAD, PUT, DELETE, OPTIONS, TRACE), a body that can be sent twice (no streamed
/// body) and no download destination are hedged, and only whole responses, never `stream(_:)`. Hedges are capped at
/// `maxShare` of the origin's calls over `window`, so that a slow origin gets at most that much extra load.
public struct HedgingPolicy: Sendable, Hashable {
    /// How long to wait before the hedge.
    public enum Delay: Sendable, Hashable {
        /// Always this long.
        case fixed(Duration)
        /// The origin's observed latency at this percentile (0.95: p95) of its recent successful
        /// attempts; `fallback` until `minimumSamples` attempts have been seen.
        case percentile(Double, fallback: Duration, minimumSamples: Int)
    }

    /// How long to wait before the hedge.
    public var delay: Delay
    /// The most hedges as a share of the origin's hedgeable calls (0.05: one in twenty).
    public var maxShare: Double
    /// How far back calls and hedges count for `maxShare`.
    public var window: Duration

    /// Creates a policy that sends a second attempt when the first has not answered after `delay`; the first answer
    /// wins.
    /// - Parameters:
    ///   - delay: How long to wait before the hedge.
    ///   - maxShare: The most hedges as a share of the origin's hedgeable calls, 0…1 (0.05).
    ///   - window: How far back calls and hedges count (10 s).
    public init(delay: Delay, maxShare: Double = 0.05, window: Duration = .seconds(10)) {
        self.delay = delay
        self.maxShare = min(max(maxShare, 0), 1)
        self.window = max(window, .milliseconds(1))
    }

    /// Hedges after a fixed delay.
    /// - Parameters:
    ///   - delay: How long to wait before the hedge.
    ///   - maxShare: The most hedges as a share of the origin's calls.
    /// - Returns: The policy.
    public static func after(_ delay: Duration, maxShare: Double = 0.05) -> HedgingPolicy {
        HedgingPolicy(delay: .fixed(delay), maxShare: maxShare)
    }

    /// Hedges after the origin's observed latency at `percentile` (p95 by default).
    /// - Parameters:
    ///   - percentile: 0…1.
    ///   - fallback: The delay until enough latencies were seen (1 s).
    ///   - minimumSamples: Successful attempts seen before the percentile is used (20).
    ///   - maxShare: The most hedges as a share of the origin's calls.
    /// - Returns: The policy.
    public static func percentile(
        _ percentile: Double = 0.95, fallback: Duration = .seconds(1), minimumSamples: Int = 20,
        maxShare: Double = 0.05
    ) -> HedgingPolicy {
        HedgingPolicy(
            delay: .percentile(min(max(percentile, 0), 1), fallback: fallback, minimumSamples: max(minimumSamples, 1)),
            maxShare: maxShare)
    }

    /// The delay before the hedge, given the origin's latency history.
    func hedgeDelay(_ latencies: LatencySamples) -> Duration {
        switch delay {
        case .fixed(let delay):
            return delay
        case .percentile(let percentile, let fallback, let minimum):
            guard latencies.count >= minimum, let value = latencies.percentile(percentile) else { return fallback }
            return value
        }
    }
}

/// The latencies of an origin's last successful attempts, for a percentile hedge delay: a ring of
/// the most recent `capacity` samples.
struct LatencySamples: Sendable, Hashable {
    private var samples: [Duration] = []
    private var next = 0
    let capacity: Int

    init(capacity: Int = 256) { self.capacity = max(capacity, 1) }

    /// How many samples are kept.
    var count: Int { samples.count }

    /// Adds a sample, replacing the oldest when full.
    mutating func add(_ latency: Duration) {
        if samples.count < capacity {
            samples.append(latency)
        } else {
            samples[next] = latency
        }
        next = (next + 1) % capacity
    }

    /// The sample at `percentile` (0…1, nearest rank); `nil` without samples.
    func percentile(_ percentile: Double) -> Duration? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let rank = Int((percentile * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

/// One origin's hedges, capped as a share of its hedgeable calls. A pure state machine.
struct HedgeBudget: Sendable, Hashable {
    let policy: HedgingPolicy
    /// `first`: hedgeable calls, `second`: hedges sent.
    private var counts: WindowedCounter

    init(_ policy: HedgingPolicy) {
        self.policy = policy
        self.counts = WindowedCounter(window: policy.window)
    }

    /// A hedgeable call started at `now`.
    mutating func deposit(at now: Duration) { counts.add(first: 1, at: now) }

    /// Asks to send a hedge at `now`. - Returns: Whether the share allows it; an allowed hedge is counted.
    mutating func withdraw(at now: Duration) -> Bool {
        let (calls, hedges) = counts.sums(at: now)
        guard Double(hedges + 1) <= policy.maxShare * Double(calls) else { return false }
        counts.add(second: 1, at: now)
        return true
    }
}
