import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One call on its way through the manager, and the only object a call has: its description, the request
/// the transport gets, one clock, the metrics the steps stamp, and its lifecycle — what the in-flight registry
/// lists and cancels, what a `RequestScope` cancels, what the transport and every wait observe.
///
/// Made once when the manager accepts the call and shared by reference between the steps. The lifecycle is a
/// `CallStateMachine` run under the call's lock; the call acts on what it returns after unlocking, so that a
/// handler that calls back into the manager cannot deadlock. The transport sees the call through the
/// `TransportRequest` of each attempt (`withCancellationHandler`, `isCancelled`), and nothing else.
///
/// The clock is read once: every `Date` in the call's metrics is that wall-clock anchor plus a duration on
/// `ContinuousClock`, so the metrics' instants stay in order even when the system clock jumps.
final class Call: Sendable {
    /// The call's key in the registries that list it: unique in the process.
    let key: UInt64
    /// What the registry lists: id, tag, method, URL, start.
    let info: InFlightRequest
    /// The call as described.
    let api: ServerAPI
    /// The request before plugins, with the call's progress. It does not refer to the call (that would be a
    /// cycle): each attempt's copy does (`attemptRequest`).
    let request: TransportRequest
    /// When the call was accepted.
    let started: ContinuousClock.Instant
    /// The wall-clock time of `started`.
    let startDate: Date
    /// The cache key, when the call uses the cache.
    let cacheKey: CacheKey?
    /// The business rules' success interceptor, run on each result delivered to the caller.
    let interceptor: BusinessRules.SuccessInterceptor?
    /// Whether results go to this call's caller; `false` for a shared flight's one transport call, whose
    /// callers each deliver the response for themselves.
    let deliversToCaller: Bool
    /// Whether the plugins' `didComplete` sees the call's end: `false` for a shared flight's transport call (its
    /// callers each end) and for a registry entry that is not a call (a batch, a wait between connections).
    let reportsEnd: Bool
    /// What was measured so far, stamped by the steps through the methods below.
    ///
    /// No lock: the steps of a call run one after the other in the one task that runs it (the caller's, or
    /// a shared flight's for its transport call), and only they write or read these. A hedge's legs run in
    /// child tasks that do not touch them; a streamed body's end works on a copy taken at the head.
    private(set) nonisolated(unsafe) var metrics: RequestMetrics
    /// The resilience policies of the call's origin, resolved once (`ServerAPIManager.resilience(of:api:url:)`);
    /// `nil` before. Written and read only by the call's own task, as `metrics` is.
    private(set) nonisolated(unsafe) var resilience: (origin: ServerOrigin, policies: ResiliencePolicies?)?
    /// Inline rather than a `Locked` of its own: one heap object less per call.
    private let lifecycle: Mutex<CallStateMachine>
    /// The manager's registry that lists the call, for its drain handler (`onDrain`).
    private let registry: InFlightRegistry?

    private static let keys = Atomic<UInt64>(0)

    /// Makes a call, listed by `registry` when one is given (the registry's `add` then lists it there).
    init(
        api: ServerAPI, request: TransportRequest, url: URL? = nil, cacheKey: CacheKey? = nil,
        interceptor: BusinessRules.SuccessInterceptor? = nil, started: ContinuousClock.Instant = .now,
        startDate: Date = Date(), deliversToCaller: Bool = true, kind: InFlightRequest.Kind = .call,
        reportsEnd: Bool = true, registry: InFlightRegistry?
    ) {
        key = Self.keys.add(1, ordering: .relaxed).newValue
        self.api = api
        self.request = request
        self.cacheKey = cacheKey
        self.interceptor = interceptor
        self.started = started
        self.startDate = startDate
        self.deliversToCaller = deliversToCaller
        self.reportsEnd = reportsEnd && deliversToCaller && kind == .call
        info = InFlightRequest(
            id: api.id, tag: api.tag, method: kind == .call ? api.method : nil,
            url: kind == .call ? (url ?? request.url) : url, startedAt: startDate, kind: kind)
        metrics = RequestMetrics(attempts: 0, startedAt: startDate)
        lifecycle = Mutex(CallStateMachine(listedBy: registry))
        self.registry = registry
    }

    /// A registry entry that is not an HTTP call: a batch, a chain, an event source between connections.
    convenience init(
        entry id: RequestID, tag: String?, url: URL?, kind: InFlightRequest.Kind, registry: InFlightRegistry
    ) {
        var api = Self.entryDescription
        api.id = id
        api.tag = tag
        self.init(api: api, request: Self.entryRequest, url: url, kind: kind, reportsEnd: false, registry: registry)
    }

    private static let entryDescription = ServerAPI(host: "localhost")
    private static let entryRequest = TransportRequest(url: URL(fileURLWithPath: "/"))

    /// The context of a coalesced flight's one transport call, made for this (its leader's) call: listed by no
    /// registry and not cancelled by the leader alone, its progress reported to every caller of the flight.
    func sharedFlight(progress: @escaping @Sendable (TransferProgress) -> Void) -> Call {
        var request = self.request
        request.progress = progress
        return Call(
            api: api, request: request, cacheKey: cacheKey, started: started, startDate: startDate,
            deliversToCaller: false, registry: nil)
    }

    /// Runs `body` on the state machine under the call's lock, annotated for ThreadSanitizer as `Locked` is.
    private func locked<R>(_ body: (inout CallStateMachine) -> sending R) -> sending R {
        lifecycle.withLockAnnotated(token: Unmanaged.passUnretained(self).toOpaque(), body)
    }

    /// The call's id.
    var id: RequestID { api.id }
    /// The URL the call was sent to.
    var url: URL { request.url }

    // MARK: Cancellation

    /// The state, for tests and diagnostics.
    var state: CallStateMachine.State { locked { $0.state } }

    /// Whether the call was cancelled, or the task that runs it was.
    var isCancelled: Bool { Task.isCancelled || locked { $0.isCancelled } }

    /// Cancels the call: what it waits on is stopped now, on this thread; an ended call is left alone.
    /// - Parameters:
    ///   - reason: Who cancelled it.
    ///   - registry: The registry that cancels it, which has already removed it.
    /// - Returns: Whether the call was still running.
    @discardableResult
    func cancel(_ reason: CallStateMachine.CancelReason, removedFrom registry: InFlightRegistry? = nil) -> Bool {
        let (wasRunning, actions) = locked { machine in
            let wasRunning = if case .running = machine.state { true } else { false }
            return (wasRunning, machine.cancel(reason, removedFrom: registry))
        }
        actions.handlers.run()
        return wasRunning
    }

    /// Runs `operation`, calling `onCancel` once if the call is cancelled (or already was) or the current task
    /// is cancelled before `operation` returns. Cancelling the task stops this wait; it does not cancel the call
    /// (a hedge's losing leg is such a task).
    func withCancellationHandler<T, E: Error>(
        isolation: isolated (any Actor)? = #isolation,
        operation: () async throws(E) -> T,
        onCancel: @escaping @Sendable () -> Void
    ) async throws(E) -> T {
        let observation = locked { $0.observe(onCancel) }
        if observation == .runNow { onCancel() }
        defer { if case .installed(let key) = observation { locked { $0.stopObserving(key) } } }
        // A typed-throws body cannot go through withTaskCancellationHandler's untyped one directly.
        let result: Result<T, E> = await withTaskCancellationHandler {
            do throws(E) { return .success(try await operation()) } catch { return .failure(error) }
        } onCancel: {
            onCancel()
        }
        return try result.get()
    }

    /// Runs work that honours only task cancellation in a task of its own, which cancelling the call (or the
    /// current task) cancels: a transport's or a plugin's wait that knows nothing of calls, a retry's sleep.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws; usually `CancellationError` or `cancelled` once cancelled.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await operation() }
        return try await withCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Runs `handler` when the call is cancelled, until the call ends: a streamed body's `cancel`. It runs at
    /// once when the call was cancelled already, and never once it has ended (the body was read to its end).
    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        if locked({ $0.observe(handler) }) == .runNow { handler() }
    }

    /// Runs `handler` when the manager starts shutting down while the call is listed (at once when it has started
    /// already): what a call that never ends by itself does then, a WebSocket's close with 1001.
    func onDrain(_ handler: @escaping @Sendable () -> Void) {
        registry?.onDrain(key, handler)
    }

    /// A `RequestScope` operation lists the call too; an operation cancelled already cancels it at once.
    func listed(by registry: InFlightRegistry) -> Bool {
        locked { $0.listed(by: registry) }
    }

    // MARK: The lifecycle

    /// An attempt starts. - Returns: `false` when the call was cancelled.
    func attemptStarted(_ number: Int) -> Bool {
        locked { $0.attemptStarted(number) } && !Task.isCancelled
    }

    /// The call waits to retry. - Returns: `false` when the call was cancelled.
    func waitingToRetry(_ number: Int) -> Bool {
        locked { $0.waitingToRetry(number) } && !Task.isCancelled
    }

    /// The call joins an identical call in flight. - Returns: `false` when the call was cancelled.
    func coalescedJoin() -> Bool {
        locked { $0.coalescedJoin() } && !Task.isCancelled
    }

    /// The head arrived.
    func headReceived() {
        locked { $0.headReceived() }
    }

    /// The caller reads the body as it arrives.
    func bodyStreaming() {
        locked { $0.bodyStreaming() }
    }

    /// The WebSocket's connection went to the caller.
    func webSocketOpened() {
        locked { $0.webSocketOpened() }
    }

    /// The WebSocket sent its close frame; the server's is awaited.
    func webSocketClosing() {
        locked { $0.webSocketClosing() }
    }

    /// Ends the call, with a result (`failed == false`) or an error, and leaves the registries that list it: what
    /// `ServerAPIManager.end` does, and only it.
    /// - Returns: Whether this was the call's end: its metrics are stamped and `didComplete` runs only then.
    @discardableResult
    func end(failed: Bool) -> Bool {
        let actions = locked { failed ? $0.fail() : $0.finish() }
        actions.leave.leave(key)
        return actions.completes
    }

    // MARK: Metrics

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

    /// The call was answered by another one's exchange (a shared flight's, a replayed one's): its metrics.
    func stampJoined(_ shared: RequestMetrics) {
        metrics = shared
    }

    /// Keeps the resolved resilience policies of an origin.
    func keepResilience(origin: ServerOrigin, policies: ResiliencePolicies?) {
        resilience = (origin, policies)
    }

    /// What a resilience policy did.
    func stampResilience(_ update: (inout ResilienceMetrics) -> Void) {
        update(&metrics.resilience)
    }

    /// An error with the call's id and URL (an attempt's, when given), where it has none: the one place an error
    /// gets them.
    func stamp(_ error: any Error, url: URL? = nil) -> ServerAPIError {
        ServerAPIError.wrap(error).with(requestID: api.id, url: url ?? info.url)
    }
}

/// Records a throttled call's response, so that a call that comes too soon can replay it.
typealias ThrottleRecord = @Sendable (SharedResponse) -> Void
