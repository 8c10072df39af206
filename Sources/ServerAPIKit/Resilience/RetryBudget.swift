/// How many retries an origin may take: a share of its recent calls plus a small floor, as Finagle's
/// retry budget.
///
/// Each call to the origin deposits into the budget when it starts; each retry withdraws from it. A
/// retry is allowed while the retries in the last `window` stay within `percentCanRetry` of the calls
/// in that window plus `minRetriesPerSecond` × the window's seconds. A retry refused by the budget ends
/// the call with its last error, and its metrics say so (`ResilienceMetrics.retryRefusedByBudget`).
///
/// When an upstream fails everything, retries then add at most `percentCanRetry` to its load, instead
/// of multiplying it by each call's retry count.
public struct RetryBudget: Sendable, Hashable {
    /// How long a call or a retry counts against the budget.
    public var window: Duration
    /// The share of calls that may be retried (0.2: one retry per five calls).
    public var percentCanRetry: Double
    /// Retries allowed each second whatever the traffic, so that a quiet client can still retry.
    public var minRetriesPerSecond: Int

    /// Creates a budget that lets retries be at most a share of an origin's recent calls.
    /// - Parameters:
    ///   - window: How long a call or a retry counts against the budget (10 s).
    ///   - percentCanRetry: The share of calls that may be retried, from 0 to 1 (0.2).
    ///   - minRetriesPerSecond: Retries allowed each second whatever the traffic (10).
    public init(window: Duration = .seconds(10), percentCanRetry: Double = 0.2, minRetriesPerSecond: Int = 10) {
        self.window = max(window, .milliseconds(1))
        self.percentCanRetry = min(max(percentCanRetry, 0), 1)
        self.minRetriesPerSecond = max(minRetriesPerSecond, 0)
    }

    /// Finagle's defaults: 20 % of the calls of the last 10 s, plus 10 retries per second.
    public static let `default` = RetryBudget()

    /// The retries allowed in one window with `calls` calls in it.
    package func allowance(calls: Int) -> Double {
        Double(calls) * percentCanRetry + Double(minRetriesPerSecond) * window.seconds
    }
}

/// One origin's retry budget: calls deposit, retries withdraw. A pure state machine: the caller
/// passes the time, read from the manager's clock.
struct RetryBudgetState: Sendable, Hashable {
    let budget: RetryBudget
    /// `first`: calls, `second`: retries.
    private var counts: WindowedCounter

    init(_ budget: RetryBudget) {
        self.budget = budget
        self.counts = WindowedCounter(window: budget.window)
    }

    /// A call started at `now`.
    mutating func deposit(at now: Duration) {
        counts.add(first: 1, at: now)
    }

    /// Asks for one retry at `now`.
    /// - Returns: Whether the budget allows it; an allowed retry is counted.
    mutating func withdraw(at now: Duration) -> Bool {
        let (calls, retries) = counts.sums(at: now)
        guard Double(retries + 1) <= budget.allowance(calls: calls) else { return false }
        counts.add(second: 1, at: now)
        return true
    }

    /// The calls and retries in the window at `now`.
    func usage(at now: Duration) -> (calls: Int, retries: Int) {
        let sums = counts.sums(at: now)
        return (sums.first, sums.second)
    }
}
