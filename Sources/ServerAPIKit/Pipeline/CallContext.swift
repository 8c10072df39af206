#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One call on its way through the manager: the description, the prepared request, one clock, and
/// what every step of the pipeline reads. Errors and metrics are stamped from it.
///
/// Made once when the manager accepts the call and shared by reference between the steps, so that no
/// step copies the call's description. The clock is read once: every `Date` in the call's metrics is
/// that wall-clock anchor plus a duration on `ContinuousClock`, so the metrics' instants stay in order
/// even when the system clock jumps.
final class CallContext: Sendable {
    /// The call as described.
    let api: ServerAPI
    /// The request the transport gets (before plugins), with the call's token and progress.
    let request: TransportRequest
    /// When the call was accepted.
    let started: ContinuousClock.Instant
    /// The wall-clock time of `started`.
    let startDate: Date
    /// The cache key, when the call uses the cache.
    let cacheKey: CacheKey?
    /// The business rules' success interceptor, run on each result delivered to the caller.
    let interceptor: BusinessRules.SuccessInterceptor?
    /// Whether results go to this context's caller; `false` for a shared flight's one transport call,
    /// whose callers each deliver the response for themselves.
    let deliversToCaller: Bool
    /// The call's lifecycle and cancellation; `nil` for a shared flight's transport call, which no
    /// registry lists and its leader alone does not cancel.
    let call: Call?
    /// What was measured so far, stamped by the steps through the methods below.
    ///
    /// No lock: the steps of a call run one after the other in the one task that runs it (the caller's, or
    /// a shared flight's for its transport call), and only they write or read these. A hedge's legs run in
    /// child tasks that do not touch them; a streamed body's end works on a copy taken at the head.
    private(set) nonisolated(unsafe) var metrics: RequestMetrics

    init(
        api: ServerAPI, request: TransportRequest, cacheKey: CacheKey?, interceptor: BusinessRules.SuccessInterceptor?,
        started: ContinuousClock.Instant = .now, startDate: Date = Date(), deliversToCaller: Bool = true,
        call: Call? = nil
    ) {
        self.call = call
        self.api = api
        self.request = request
        self.cacheKey = cacheKey
        self.interceptor = interceptor
        self.started = started
        self.startDate = startDate
        self.deliversToCaller = deliversToCaller
        self.metrics = RequestMetrics(attempts: 0, startedAt: startDate)
    }

    /// The context of a coalesced flight's one transport call, made for this (its leader's) call: not
    /// cancelled by the leader alone, its progress reported to every caller of the flight.
    func sharedFlight(progress: @escaping @Sendable (TransferProgress) -> Void) -> CallContext {
        var request = self.request
        request.cancellation = nil
        request.progress = progress
        return CallContext(
            api: api, request: request, cacheKey: cacheKey, interceptor: nil, started: started, startDate: startDate,
            deliversToCaller: false)
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

    // The stamps that read the clock or copy the transport's figures are never inlined: inlined into an async
    // step, their temporaries (`Date` is resilient, so sized at run time) are allocated from the task's allocator,
    // each in a slab of its own that stays allocated while the call is in flight.

    /// Attempt `number` begins (before the plugins' `prepare`).
    func stampAttempt(_ number: Int) {
        metrics.attempts = number
    }

    /// The attempt is handed to the transport now; what was measured about an earlier one is dropped.
    @inline(never)
    func stampAttemptStart() {
        metrics.markAttemptStart(at: date(at: .now))
    }

    /// The transport answered: its figures and the status.
    @inline(never)
    func stampResponse(_ response: TransportResponse) {
        metrics.transport = response.metrics
        metrics.status = response.status
    }

    /// The status the caller gets, when it is not the response's (a stored entry's, after a `304`).
    func stampStatus(_ status: Int) {
        metrics.status = status
    }

    /// How long the call has run, as its duration so far.
    @inline(never)
    func stampDuration() {
        metrics.duration = elapsed
    }

    /// What a resilience policy did.
    func stampResilience(_ update: (inout ResilienceMetrics) -> Void) {
        update(&metrics.resilience)
    }

    /// An error with the call's id and URL.
    func stamp(_ error: any Error) -> ServerAPIError {
        ServerAPIError.wrap(error).with(requestID: api.id, url: request.url)
    }
}

/// Records a throttled call's response, so that a call that comes too soon can replay it.
typealias ThrottleRecord = @Sendable (SharedResponse) -> Void
