#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Whether and when a failed attempt is sent again: the plugins first, then the call's retry policy.
extension ServerAPIManager {
    func retryDelay(
        after error: ServerAPIError, response: TransportResponse?, request: TransportRequest, api: ServerAPI,
        attempt: Int, pluginRetries: inout Int
    ) async -> Duration? {
        var decision = RetryDecision.useDefault
        for plugin in plugins {
            decision = await plugin.shouldRetry(after: error, request: request, api: api, attempt: attempt)
            if decision != .useDefault { break }
        }
        let policy = api.retryPolicy
        switch decision {
        case .doNotRetry:
            return nil
        case .retry, .retryAfter:
            guard pluginRetries < configuration.maxPluginRetries else { return nil }
            pluginRetries += 1
            if case .retryAfter(let delay) = decision { return delay }
            return policy.delay(forRetry: attempt)
        case .useDefault:
            guard attempt <= api.retryCount, api.isRetryable, policy.shouldRetry(error) else { return nil }
            if policy.honorsRetryAfter, let wait = RetryPolicy.retryAfter(response?.headers["Retry-After"]) {
                return wait <= policy.maxRetryAfter ? wait : nil
            }
            return policy.delay(forRetry: attempt)
        }
    }
}
