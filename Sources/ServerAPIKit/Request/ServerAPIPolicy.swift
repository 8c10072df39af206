#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ServerAPI {
    /// What the manager does around the exchange: retries, the cache, throttling, coalescing, replacing
    /// calls in flight, business rules and resilience overrides. Transports never see it.
    package struct Policy: Sendable, Hashable {
        /// How many times a failed attempt is retried (0: no retries).
        package var retryCount: Int
        /// When and how a failed attempt is retried.
        package var retryPolicy: RetryPolicy
        /// How the manager's cache is used for this call (`.never` by default).
        package var cacheMode: CacheMode
        /// How long a stored response stays fresh; `nil` uses the manager's `defaultCacheTTL`.
        package var cacheTTL: Duration?
        /// Methods besides GET and HEAD whose responses the cache may answer and store for this call
        /// (empty unless the call opts in with `cacheable(methods:)`).
        package var additionalCacheableMethods: Set<HTTPMethod>
        /// Request headers whose values are part of the cache key (such as `Authorization`, `Accept-Language`).
        package var varyingHeaders: [String]
        /// The shortest time between two sends of this same call; `nil` for no limit.
        /// See `ServerAPI.minimumInterval(_:onThrottle:)`.
        package var throttle: ThrottlePolicy?
        /// Whether identical GET and HEAD calls in flight share one transport call. See `ServerAPI.coalesced(_:)`.
        package var coalescing: CoalescingMode
        /// Whether starting this call cancels the earlier unfinished calls with its tag (or endpoint).
        /// See `ServerAPI.replacesInFlight(_:)`.
        package var replacesInFlight: Bool
        /// How business codes are shown, silenced and intercepted; inherits the manager's rules by default.
        package var businessRules: BusinessRules
        /// This call's overrides of the manager's resilience policies. See `ServerAPI.retryBudget(_:)`,
        /// `ServerAPI.circuitBreaker(_:)`, `ServerAPI.hedging(_:)` and `ServerAPI.concurrencyLimit(_:)`.
        package var resilience: ResilienceOverrides

        /// Creates the policy of a new `ServerAPI`: no retries, no cache, no throttle, the manager's
        /// coalescing, business rules and resilience policies.
        package init() {
            self.retryCount = 0
            self.retryPolicy = .default
            self.cacheMode = .never
            self.cacheTTL = nil
            self.additionalCacheableMethods = []
            self.varyingHeaders = []
            self.throttle = nil
            self.coalescing = .managerDefault
            self.replacesInFlight = false
            self.businessRules = BusinessRules()
            self.resilience = ResilienceOverrides()
        }
    }
}
