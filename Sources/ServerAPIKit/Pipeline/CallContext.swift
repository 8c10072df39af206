import Foundation

/// One call on its way through the manager: the description, the prepared request, one clock, and
/// the per-call settings each step of the pipeline reads. Errors and metrics are stamped from it.
///
/// The clock is read once when the call is accepted; every `Date` in the call's metrics is that
/// wall-clock anchor plus a duration on `ContinuousClock`, so the metrics' instants are ordered and
/// consistent even when the system clock jumps.
struct CallContext: Sendable {
    /// The call as described.
    let api: ServerAPI
    /// The request the transport gets (before plugins), with the call's token and progress.
    var request: TransportRequest
    /// When the call was accepted.
    let started: ContinuousClock.Instant
    /// The wall-clock time of `started`.
    let startDate: Date
    /// The cache key, when the call uses the cache.
    var cacheKey: CacheKey?
    /// The conditional request made from a stored entry, when the call revalidates.
    var revalidation: ServerAPIManager.Revalidation?
    /// What each caller's result passes through after formatting (`nil` for a shared flight's call,
    /// whose callers each deliver for themselves).
    var delivery: Delivery?

    /// What happens to a result after it is formatted for the caller.
    struct Delivery: Sendable {
        /// The business rules' success interceptor.
        var interceptor: BusinessRules.SuccessInterceptor?
        /// Records the response for a throttled call that replays the previous result.
        var keep: (@Sendable (SharedResponse) -> Void)?
    }

    init(api: ServerAPI, request: TransportRequest) {
        self.api = api
        self.request = request
        started = .now
        startDate = Date()
    }

    /// The call's id.
    var id: RequestID { api.id }
    /// The URL the call was sent to.
    var url: URL { request.url }

    /// The wall-clock time of an instant of the call.
    func date(at instant: ContinuousClock.Instant) -> Date {
        startDate.addingTimeInterval((instant - started).seconds)
    }

    /// How long the call has run.
    var elapsed: Duration { .now - started }

    /// Metrics for a call that has not reached the transport yet.
    func initialMetrics() -> RequestMetrics {
        RequestMetrics(attempts: 0, startedAt: startDate)
    }

    /// An error with the call's id and URL.
    func stamp(_ error: any Error) -> ServerAPIError {
        ServerAPIError.wrap(error).with(requestID: api.id, url: request.url)
    }
}
