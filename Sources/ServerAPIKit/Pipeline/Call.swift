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
/// `CallStateMachine` run under a lock — the registry's that lists the call, so that the call's end and its
/// leaving the registry are one acquisition; a call no registry lists has its own — and the call acts on what it
/// returns after unlocking, so that a handler that calls back into the manager cannot deadlock. The transport sees
/// the call through the `TransportRequest` of each attempt (`withCancellationHandler`, `isCancelled`), and
/// nothing else.
///
/// The events of a call's own task that race with nothing but a cancel take no lock (a send's path then takes
/// two: listed, ended): an attempt's start is published (`startedAttempt`) and told to the machine by the next
/// event that locks; the handler of the one thing the call waits on (the transport, a retry wait) sits in a
/// slot that the call's task fills and empties, and that a cancel takes or the end closes, each with one atomic
/// exchange (`HandlerSlot`), so that whether a cancel runs it is decided once. The machine keeps every other
/// handler (a hedged attempt's second leg). A cancel marks the slot taken under the lock, so `isCancelled` is one
/// atomic read.
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
    ///
    /// This and the other variables below have no run-time exclusivity check (one per access, several per call):
    /// each is accessed by one task at a time, the call's own or the holder of the lifecycle's lock.
    @exclusivity(unchecked) private(set) nonisolated(unsafe) var metrics: RequestMetrics
    /// The resilience policies of the call's origin, resolved once (`ServerAPIManager.resilience(of:api:url:)`);
    /// `nil` before. Written and read only by the call's own task, as `metrics` is.
    @exclusivity(unchecked) private(set) nonisolated(unsafe) var resilience:
        (origin: ServerOrigin, policies: ResiliencePolicies?)?
    /// The lifecycle, read and written only under its lock (`locked`).
    @exclusivity(unchecked) private nonisolated(unsafe) var machine: CallStateMachine
    /// The attempt the machine was told of last (`lockedBody`); guarded as `machine` is.
    @exclusivity(unchecked) private nonisolated(unsafe) var toldAttempt = 0
    /// The attempt the call's task started last (`attemptStarted`), for the machine to catch up with.
    private let startedAttempt = Atomic<Int>(0)
    /// The state of `slotHandler` (`HandlerSlot`).
    private let slot = Atomic<UInt8>(HandlerSlot.empty)
    /// The handler in the slot: written by whoever holds the slot `writing`, read by the cancel that took it.
    @exclusivity(unchecked) private nonisolated(unsafe) var slotHandler: CallStateMachine.Handler?
    /// The lock of a call that no registry lists; inline rather than a `Locked` of its own: one heap object less.
    private let ownLock = Mutex<Void>(())
    /// The manager's registry that lists the call: its lock is the lifecycle's, and its drain handler is the
    /// call's (`onDrain`).
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
        machine = CallStateMachine(listedBy: registry)
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

    /// Runs `body` under the lifecycle's lock (the registry's, or the call's own, annotated for ThreadSanitizer as
    /// `Locked` is), on the state machine told of the attempt the call's task started.
    private func locked<R: Sendable>(_ body: (inout CallStateMachine) -> R) -> R {
        if let registry {
            return registry.withLifecycleLock { lockedBody(body) }
        }
        return ownLock.withLockAnnotated(token: Unmanaged.passUnretained(self).toOpaque()) { _ in lockedBody(body) }
    }

    /// `locked`'s body, with the lock held.
    private func lockedBody<R>(_ body: (inout CallStateMachine) -> R) -> R {
        let started = startedAttempt.load(ordering: .relaxed)
        if started != toldAttempt {
            toldAttempt = started
            _ = machine.attemptStarted(started)
        }
        return body(&machine)
    }

    /// The call's id.
    var id: RequestID { api.id }
    /// The URL the call was sent to.
    var url: URL { request.url }

    // MARK: Cancellation

    /// The state, for tests and diagnostics.
    var state: CallStateMachine.State { locked { $0.state } }

    /// Whether the call was cancelled, or the task that runs it was.
    var isCancelled: Bool { Task.isCancelled || slot.load(ordering: .acquiring) == HandlerSlot.taken }

    /// Cancels the call: what it waits on is stopped now, on this thread; an ended call is left alone.
    /// - Parameters:
    ///   - reason: Who cancelled it.
    ///   - registry: The registry that cancels it, which has already removed it.
    /// - Returns: Whether the call was still running.
    @discardableResult
    func cancel(_ reason: CallStateMachine.CancelReason, removedFrom registry: InFlightRegistry? = nil) -> Bool {
        let (wasRunning, actions, slotted) = locked { machine -> (Bool, CallStateMachine.Actions, Bool) in
            let wasRunning = if case .running = machine.state { true } else { false }
            let actions = machine.cancel(reason, removedFrom: registry)
            // The cancel that moved the call takes the slot: its handler, if one is installed, runs now.
            let slotted = wasRunning && HandlerSlot.take(slot) == HandlerSlot.installed
            return (wasRunning, actions, slotted)
        }
        if slotted {
            // Taken, the slot is the cancel's alone: the handler is let go as it runs, since it may hold the
            // request, and so this call, and whatever the transport keeps for the wait (a session's task).
            let handler = slotHandler
            slotHandler = nil
            handler?()
        }
        actions.handlers.run()
        return wasRunning
    }

    /// What `observe` did with a handler.
    private enum Observed: Equatable {
        /// In the slot.
        case slot
        /// In the machine, under this key.
        case machine(UInt64)
        /// Not kept: the call was cancelled, so the handler runs now.
        case runNow
        /// Not kept: the call has ended.
        case ended
    }

    /// Keeps `handler` to run on a cancel: in the slot when it is free (no lock), else in the machine.
    private func observe(_ handler: @escaping CallStateMachine.Handler) -> Observed {
        switch HandlerSlot.claim(slot) {
        case HandlerSlot.empty:
            slotHandler = handler
            switch HandlerSlot.install(slot) {
            case HandlerSlot.installed: return .slot
            case let state:
                // Taken by a cancel or closed by the end while it was written: it was not seen, so it is not kept.
                slotHandler = nil
                return state == HandlerSlot.taken ? .runNow : .ended
            }
        case HandlerSlot.taken: return .runNow
        case HandlerSlot.closed: return .ended
        default:
            switch locked({ $0.observe(handler) }) {
            case .installed(let key): return .machine(key)
            case .runNow: return .runNow
            case .ended: return .ended
            }
        }
    }

    /// The wait that kept a handler ended: it is dropped, not run.
    private func stopObserving(_ observed: Observed) {
        switch observed {
        case .slot:
            if HandlerSlot.reclaim(slot) {
                slotHandler = nil
                HandlerSlot.release(slot)
            }
        case .machine(let key): locked { $0.stopObserving(key) }
        case .runNow, .ended: break
        }
    }

    /// Runs `operation`, calling `onCancel` once if the call is cancelled (or already was) or the current task
    /// is cancelled before `operation` returns. Cancelling the task stops this wait; it does not cancel the call
    /// (a hedge's losing leg is such a task).
    func withCancellationHandler<T, E: Error>(
        isolation: isolated (any Actor)? = #isolation,
        operation: () async throws(E) -> T,
        onCancel: @escaping @Sendable () -> Void
    ) async throws(E) -> T {
        let observation = observe(onCancel)
        if observation == .runNow { onCancel() }
        defer { stopObserving(observation) }
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
        if observe(handler) == .runNow { handler() }
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

    /// An attempt starts: published for the machine, which the next event that locks tells of it.
    /// - Returns: `false` when the call was cancelled (or has ended).
    func attemptStarted(_ number: Int) -> Bool {
        startedAttempt.store(number, ordering: .relaxed)
        let slot = slot.load(ordering: .acquiring)
        return slot != HandlerSlot.taken && slot != HandlerSlot.closed && !Task.isCancelled
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
        let actions: CallStateMachine.Actions
        if let registry {
            // Leaving the manager's registry in the same acquisition as the end.
            actions = registry.end(key) { lockedBody { ending(&$0, failed: failed) } }
        } else {
            actions = locked { ending(&$0, failed: failed) }
        }
        actions.leave.leave(key)
        return actions.completes
    }

    /// The end's event, under the lock: the end closes the slot; a cancelled call's stays taken.
    private func ending(_ machine: inout CallStateMachine, failed: Bool) -> CallStateMachine.Actions {
        let actions = failed ? machine.fail() : machine.finish()
        if actions.completes, HandlerSlot.close(slot) == HandlerSlot.installed { slotHandler = nil }
        return actions
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
        metrics.takeTransport(of: response)
        metrics.status = response.status
    }

    /// The status the caller gets, when it is not the response's (a stored entry's, after a `304`).
    func stampStatus(_ status: Int) {
        metrics.status = status
    }

    /// How long the call has run, as its duration so far.
    /// - Returns: The instant it read, for a step that stamps the same moment (`ServerAPIManager.deliver`).
    @inline(never)
    @discardableResult
    func stampDuration() -> ContinuousClock.Instant {
        let now = ContinuousClock.now
        metrics.duration = now - started
        return now
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

/// The states of a call's handler slot, and its moves, each one atomic operation: the call's task claims an empty
/// slot (`writing`), writes the handler and installs it, and later reclaims and empties it; a cancel takes it (its
/// handler runs if it was installed), the end closes it. `taken` and `closed` are final. A handler being written
/// when the slot is taken or closed was never seen: its writer runs it (taken) or drops it (closed).
enum HandlerSlot {
    static let empty: UInt8 = 0
    static let writing: UInt8 = 1
    static let installed: UInt8 = 2
    static let taken: UInt8 = 3
    static let closed: UInt8 = 4

    /// `empty` → `writing`. - Returns: the state before: `empty` when claimed.
    static func claim(_ slot: borrowing Atomic<UInt8>) -> UInt8 {
        slot.compareExchange(expected: empty, desired: writing, ordering: .acquiringAndReleasing).original
    }

    /// `writing` → `installed`. - Returns: the state after: `installed`, or `taken` or `closed`.
    static func install(_ slot: borrowing Atomic<UInt8>) -> UInt8 {
        let (exchanged, original) = slot.compareExchange(
            expected: writing, desired: installed, ordering: .acquiringAndReleasing)
        return exchanged ? installed : original
    }

    /// `installed` → `writing`, to empty it. - Returns: whether it was reclaimed (else taken or closed).
    static func reclaim(_ slot: borrowing Atomic<UInt8>) -> Bool {
        slot.compareExchange(expected: installed, desired: writing, ordering: .acquiringAndReleasing).exchanged
    }

    /// `writing` → `empty`, unless it was taken or closed meanwhile.
    static func release(_ slot: borrowing Atomic<UInt8>) {
        _ = slot.compareExchange(expected: writing, desired: empty, ordering: .acquiringAndReleasing)
    }

    /// Any state → `taken`. - Returns: the state before: `installed` when its handler is the taker's to run.
    static func take(_ slot: borrowing Atomic<UInt8>) -> UInt8 {
        slot.exchange(taken, ordering: .acquiringAndReleasing)
    }

    /// Any state but `taken` → `closed`. - Returns: the state before: `installed` when its handler is the
    /// closer's to drop.
    static func close(_ slot: borrowing Atomic<UInt8>) -> UInt8 {
        var state = slot.load(ordering: .acquiring)
        while state != taken {
            let (exchanged, original) = slot.compareExchange(
                expected: state, desired: closed, ordering: .acquiringAndReleasing)
            if exchanged { return state }
            state = original
        }
        return state
    }
}

// MARK: - What the caller gets

/// What a caller gets from a response: a formatted `ServerResult`, a decoded model, the head with a
/// streamed body, or (for a shared flight) the response itself. The pipeline calls it inside the attempt,
/// so that a business error found while formatting can still be retried (an auth refresh on a business code).
protocol CallFinishing: Sendable {
    associatedtype Value: Sendable
    /// The end of a streamed call, which `StreamedResponse.finalMetrics` waits on; `nil` (the default) for
    /// a call whose response is collected whole. A streamed call asks the transport for the head with the
    /// body to read, and uses neither the cache nor coalescing.
    var streamCompletion: StreamCompletion? { get }
    /// Turns a response into the caller's value.
    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> Value
}

extension CallFinishing {
    var streamCompletion: StreamCompletion? { nil }

    /// Whether the call hands the head and the body over as the body arrives.
    var streams: Bool { streamCompletion != nil }
}

/// `send(_:)`: a `ServerResult` in the call's result format.
struct ResultFinishing: CallFinishing {
    let formatter: any ResponseFormatting

    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> ServerResult
    {
        ServerResult(
            value: try formatter.format(response, for: api), status: response.status, headers: response.headers,
            url: response.url, requestID: api.id, source: source, metrics: metrics, trailers: response.trailers)
    }
}

/// `send(_:decoding:)`: a model decoded at the call's key path.
struct ModelFinishing<Model: Decodable & Sendable>: CallFinishing {
    let formatter: any ResponseFormatting

    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> Model
    {
        try formatter.decode(Model.self, from: response, for: api)
    }
}

/// The one transport call of a coalesced flight: the response, kept for every caller to format.
struct SharedFinishing: CallFinishing {
    let formatter: any ResponseFormatting

    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> SharedResponse
    {
        // A business failure must surface inside the retry loop, where plugins (an auth refresh on a
        // business code) can act on it; each caller then formats for itself.
        do {
            _ = try formatter.format(response, for: api)
        } catch let error as ServerAPIError where error.kind == .business {
            throw error
        } catch {}
        return SharedResponse(response: response, source: source, metrics: metrics)
    }
}

/// `stream(_:)`: the head, with the body to read as it arrives; the call completes when the body ends.
struct StreamFinishing: CallFinishing {
    let streamCompletion: StreamCompletion? = StreamCompletion()

    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> StreamedResponse
    {
        guard case .stream(let body) = response.body, let completion = streamCompletion else {
            throw ServerAPIError(.network, "the transport returned no streamed body")
        }
        return StreamedResponse(
            status: response.status, headers: response.headers, url: response.url, requestID: api.id,
            metrics: metrics, body: body, completion: completion)
    }
}
