// Chainable resilience overrides: each replaces the manager's policy for this call.
extension ServerAPI {
    /// Returns a copy that uses this retry budget instead of the manager's; `nil` for none.
    /// - Returns: The modified call.
    public func retryBudget(_ budget: RetryBudget?) -> ServerAPI {
        overriding(\.retryBudget, with: budget)
    }

    /// Returns a copy that uses this circuit breaker instead of the manager's; `nil` for none.
    /// - Returns: The modified call.
    public func circuitBreaker(_ policy: CircuitBreakerPolicy?) -> ServerAPI {
        overriding(\.circuitBreaker, with: policy)
    }

    /// Returns a copy that is hedged with this policy instead of the manager's; `nil` for never.
    ///
    /// ```swift
    /// let item = ServerAPI(host: host, path: "/items/42").hedging(.after(.milliseconds(50)))
    /// ```
    /// Only idempotent calls with a body that can be sent twice and no download destination are hedged.
    /// - Returns: The modified call.
    public func hedging(_ policy: HedgingPolicy?) -> ServerAPI {
        overriding(\.hedging, with: policy)
    }

    /// Returns a copy that uses this concurrency limit instead of the manager's; `nil` for none.
    /// - Returns: The modified call.
    public func concurrencyLimit(_ policy: ConcurrencyLimitPolicy?) -> ServerAPI {
        overriding(\.concurrencyLimit, with: policy)
    }

    /// Returns a copy whose override of one policy is `policy`, or `.disabled` for `nil`.
    private func overriding<Policy>(
        _ field: WritableKeyPath<ResilienceOverrides, PolicyOverride<Policy>>, with policy: Policy?
    ) -> ServerAPI {
        var copy = self
        copy.resilience[keyPath: field] = policy.map(PolicyOverride.custom) ?? .disabled
        return copy
    }
}
