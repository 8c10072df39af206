/// A hook into every call a manager makes: signing, auth, logging, interception, retry decisions.
///
/// Every hook has a default that does nothing, so a plugin implements only what it needs.
/// Plugins run in the order they were given to the manager.
public protocol ServerAPIPlugin: Sendable {
    /// Changes the request before it is sent (add headers or query items, sign it).
    /// Called once per attempt, so a refreshed token reaches a retry.
    /// - Throws: Any error fails the call (wrapped as `ServerAPIError`).
    func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest

    /// Observes the request as it is handed to the transport.
    func willSend(_ request: TransportRequest, for api: ServerAPI)

    /// Observes what the transport returned for one attempt.
    func didReceive(_ result: Result<TransportResponse, ServerAPIError>, for request: TransportRequest, api: ServerAPI)

    /// Inspects or changes a response with an accepted status before it is formatted;
    /// throwing turns a success into a failure (an interceptor).
    func process(_ response: TransportResponse, for api: ServerAPI) async throws -> TransportResponse

    /// Decides whether a failed attempt is retried; `.useDefault` leaves it to the retry policy.
    func shouldRetry(
        after error: ServerAPIError, request: TransportRequest, api: ServerAPI, attempt: Int
    ) async -> RetryDecision

    /// Observes the end of a call: `error` is `nil` on success.
    func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?)

    /// Observes an origin's circuit breaker changing state (closed, open, half-open), on the thread of
    /// the call that changed it.
    func circuitStateDidChange(_ change: CircuitStateChange)
}

extension ServerAPIPlugin {
    public func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest { request }
    public func willSend(_ request: TransportRequest, for api: ServerAPI) {}
    public func didReceive(
        _ result: Result<TransportResponse, ServerAPIError>, for request: TransportRequest, api: ServerAPI
    ) {}
    public func process(_ response: TransportResponse, for api: ServerAPI) async throws -> TransportResponse {
        response
    }
    public func shouldRetry(
        after error: ServerAPIError, request: TransportRequest, api: ServerAPI, attempt: Int
    ) async -> RetryDecision { .useDefault }
    public func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {}
}

/// A plugin's answer to "retry this failed attempt?".
public enum RetryDecision: Sendable, Hashable {
    /// Let the call's retry policy decide.
    case useDefault
    /// Retry after the policy's delay, even when the call's retry count is used up (a token
    /// refresh); a call takes at most `ServerAPIManager.Configuration.maxPluginRetries` such retries.
    case retry
    /// As `retry`, after this delay.
    case retryAfter(Duration)
    /// Do not retry.
    case doNotRetry
}
