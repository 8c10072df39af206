/// The policies that shape a manager's traffic to each origin: a retry budget, a circuit breaker,
/// hedged requests and a concurrency limit. Each is off (`nil`) unless set.
///
/// ```swift
/// var configuration = ServerAPIManager.Configuration()
/// configuration.resilience = .recommended
/// configuration.resilience.origins[ServerOrigin(scheme: "https", host: "search.example.com")] =
///     ResiliencePolicies.recommended.hedging(.percentile(0.95))
/// ```
/// The state of each policy (the budget's window, the breaker's state, the limit) is kept per origin
/// and per policy: calls to one origin with the same policy share it. A call can override any policy
/// with `ServerAPI.retryBudget(_:)`, `circuitBreaker(_:)`, `hedging(_:)` and `concurrencyLimit(_:)`.
public struct ResiliencePolicies: Sendable, Hashable {
    /// Retries allowed as a share of recent calls; `nil` for no budget (each call's retry count alone).
    public var retryBudget: RetryBudget?
    /// When calls to a failing origin fail at once; `nil` for none.
    public var circuitBreaker: CircuitBreakerPolicy?
    /// When a slow idempotent call sends a second attempt; `nil` for none.
    public var hedging: HedgingPolicy?
    /// How many attempts may be in flight to the origin at once; `nil` for no limit.
    public var concurrencyLimit: ConcurrencyLimitPolicy?
    /// Policies for particular origins, used instead of these for calls to them.
    public var origins: [ServerOrigin: ResiliencePolicies]

    /// Creates the policies every origin gets, with `origins` overriding them for named origins; all off by default.
    public init(
        retryBudget: RetryBudget? = nil, circuitBreaker: CircuitBreakerPolicy? = nil, hedging: HedgingPolicy? = nil,
        concurrencyLimit: ConcurrencyLimitPolicy? = nil, origins: [ServerOrigin: ResiliencePolicies] = [:]
    ) {
        self.retryBudget = retryBudget
        self.circuitBreaker = circuitBreaker
        self.hedging = hedging
        self.concurrencyLimit = concurrencyLimit
        self.origins = origins
    }

    /// No policy: every call is sent as it is described (the default).
    public static let none = ResiliencePolicies()

    /// A retry budget (Finagle's defaults), a circuit breaker (5 failures in a row, 5 s open) and an
    /// adaptive (AIMD) concurrency limit; no hedging, which needs knowing which calls are safe to send twice.
    public static let recommended = ResiliencePolicies(
        retryBudget: .default, circuitBreaker: .default, concurrencyLimit: .aimd)

    /// The policies for calls to `origin`.
    public func policies(for origin: ServerOrigin) -> ResiliencePolicies {
        origins[origin] ?? self
    }

    /// Returns a copy with this retry budget.
    public func retryBudget(_ budget: RetryBudget?) -> ResiliencePolicies { replacing(\.retryBudget, with: budget) }

    /// Returns a copy with this circuit breaker.
    public func circuitBreaker(_ policy: CircuitBreakerPolicy?) -> ResiliencePolicies {
        replacing(\.circuitBreaker, with: policy)
    }

    /// Returns a copy with this hedging policy.
    public func hedging(_ policy: HedgingPolicy?) -> ResiliencePolicies { replacing(\.hedging, with: policy) }

    /// Returns a copy with this concurrency limit.
    public func concurrencyLimit(_ policy: ConcurrencyLimitPolicy?) -> ResiliencePolicies {
        replacing(\.concurrencyLimit, with: policy)
    }

    private func replacing<Policy>(_ field: WritableKeyPath<Self, Policy?>, with policy: Policy?) -> Self {
        var copy = self
        copy[keyPath: field] = policy
        return copy
    }
}

/// A call's choice for one resilience policy: the manager's, none, or its own.
package enum PolicyOverride<Policy: Sendable & Hashable>: Sendable, Hashable {
    /// The manager's policy for the call's origin.
    case managerDefault
    /// No policy for this call.
    case disabled
    /// This policy.
    case custom(Policy)

    /// The policy that applies, given the manager's.
    func resolve(_ inherited: Policy?) -> Policy? {
        switch self {
        case .managerDefault: inherited
        case .disabled: nil
        case .custom(let policy): policy
        }
    }
}

/// A call's overrides of the manager's resilience policies, as `ServerAPI.retryBudget(_:)`, `circuitBreaker(_:)`,
/// `hedging(_:)` and `concurrencyLimit(_:)` set them: those modifiers are the public spelling.
package struct ResilienceOverrides: Sendable, Hashable {
    /// The retry budget.
    package var retryBudget: PolicyOverride<RetryBudget> = .managerDefault
    /// The circuit breaker.
    package var circuitBreaker: PolicyOverride<CircuitBreakerPolicy> = .managerDefault
    /// Hedging.
    package var hedging: PolicyOverride<HedgingPolicy> = .managerDefault
    /// The concurrency limit.
    package var concurrencyLimit: PolicyOverride<ConcurrencyLimitPolicy> = .managerDefault

    /// No overrides: the manager's policies apply.
    package init() {}

    /// The policies for a call, from the manager's for its origin.
    func resolve(_ inherited: ResiliencePolicies) -> ResiliencePolicies {
        ResiliencePolicies(
            retryBudget: retryBudget.resolve(inherited.retryBudget),
            circuitBreaker: circuitBreaker.resolve(inherited.circuitBreaker),
            hedging: hedging.resolve(inherited.hedging),
            concurrencyLimit: concurrencyLimit.resolve(inherited.concurrencyLimit))
    }
}
