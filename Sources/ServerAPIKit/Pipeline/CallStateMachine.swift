/// The lifecycle of one call, as a value that owns what must be released exactly once: the handlers that
/// stop whatever the call waits on (the transport, a retry wait, a shared flight, a streamed body) and the
/// registries that list it. Each event changes the state and returns what to do with them; `Call` runs it
/// under its lock and acts after unlocking, so that a handler that calls back into the manager cannot deadlock.
/// (`Call` keeps the handler of its one wait in a slot of its own, which a cancel that this machine allows takes,
/// and tells the machine of an attempt's start at its next event: see `Call`.)
///
/// It takes no lock, reads no clock and does no I/O, so that every race (a cancel against the head, the end of
/// the body, a retry wait, a coalesced join) is a sequence of events tested on its own, as async-http-client's
/// `Transaction` state machine is. Whether the call was cancelled is held here and nowhere else (`Call` marks its
/// slot taken under the same lock, for a read without it); the caller's task has its own `Task.isCancelled`.
///
/// Exactly once by construction: a handler is in the state until it is handed out (by a cancel) or removed (its
/// wait ended), and a cancelled or ended state holds none; the listings are handed out by the call's end, once.
struct CallStateMachine: Sendable {
    /// What stops the thing a call waits on.
    typealias Handler = @Sendable () -> Void

    /// Where a running call is.
    enum Stage: Sendable, Hashable {
        /// Made and listed, before its first attempt.
        case registered
        /// An attempt is with the transport (connecting, sending, waiting for the head).
        case attempting(Int)
        /// An attempt failed and the call waits on the clock before the next.
        case waitingToRetry(Int)
        /// The call waits on an identical call in flight (coalescing).
        case joined
        /// The head arrived; the call formats or hands the body over.
        case headReceived
        /// The caller reads a streamed body.
        case streamingBody
        /// A WebSocket's connection is open (its handshake was the head).
        case open
        /// A WebSocket sent its close frame and waits for the server's; its end is the call's.
        case closing
    }

    /// Where a call is in its life, as tests and diagnostics see it.
    enum State: Sendable, Hashable {
        /// Running, at this stage.
        case running(Stage)
        /// Cancelled for this reason; it ends when what it waited on has stopped.
        case cancelled(CancelReason)
        /// Ended with a result.
        case finished
        /// Ended with an error other than a cancellation.
        case failed
    }

    /// Who cancelled a call. The caller's task is not among them: its cancellation stops what the task waits
    /// on through the handler the wait installed (`Call.withCancellationHandler` observes both).
    enum CancelReason: Sendable, Hashable {
        /// `cancel(id:)`.
        case id
        /// `cancel(tag:)`.
        case tag
        /// `cancelFirst()`.
        case first
        /// `cancelLast()`.
        case last
        /// `cancelAll()`.
        case all
        /// A later call that replaces calls in flight (`replacesInFlight`).
        case replaced
        /// The `RequestScope` the call runs in.
        case scope
        /// The manager's `shutdown(gracePeriod:)`, once its grace period ended.
        case shutdown
    }

    /// What the owner does after an event, after releasing its lock.
    struct Actions: Sendable {
        /// Run these handlers: they stop what the call waits on.
        var handlers: Handlers = Handlers()
        /// Leave these registries.
        var leave: Listings = Listings()
        /// Run the plugins' `didComplete` and stamp the call's end: once per call, whatever ends it.
        var completes = false

        /// Whether there is nothing to do.
        var isEmpty: Bool { handlers.count == 0 && leave.count == 0 && !completes }
    }

    /// The handlers a running call holds, by key: the one wait a call has at a time without an allocation,
    /// more (a hedged attempt's two legs) in an array.
    struct Handlers: Sendable {
        fileprivate var first: (key: UInt64, handler: Handler)?
        fileprivate var others: [(key: UInt64, handler: Handler)] = []

        var count: Int { (first == nil ? 0 : 1) + others.count }

        fileprivate mutating func insert(_ key: UInt64, _ handler: @escaping Handler) {
            if first == nil { first = (key, handler) } else { others.append((key, handler)) }
        }

        fileprivate mutating func remove(_ key: UInt64) {
            if first?.key == key { first = nil } else { others.removeAll { $0.key == key } }
        }

        /// Runs each handler once; the owner calls it after unlocking.
        func run() {
            first?.handler()
            for other in others { other.handler() }
        }
    }

    /// The registries that list a call: the manager's and, in a `RequestScope`, the operation's.
    struct Listings: Sendable {
        fileprivate var manager: InFlightRegistry?
        fileprivate var scope: InFlightRegistry?

        var count: Int { (manager == nil ? 0 : 1) + (scope == nil ? 0 : 1) }

        /// Removes the call from each, by its key; the owner calls it after unlocking.
        func leave(_ key: UInt64) {
            manager?.remove(key)
            scope?.remove(key)
        }

        /// Drops `registry` when it is the manager's listing. - Returns: whether it was.
        mutating func takeManager(_ registry: InFlightRegistry) -> Bool {
            guard manager === registry else { return false }
            manager = nil
            return true
        }

        fileprivate mutating func drop(_ registry: InFlightRegistry) {
            if manager === registry { manager = nil }
            if scope === registry { scope = nil }
        }
    }

    private enum Storage: Sendable {
        case running(Stage, Handlers, Listings)
        /// Cancelled: its handlers were handed out, its listings wait for its end.
        case cancelled(CancelReason, Listings)
        case ended(State)
    }

    private var storage: Storage
    private var nextKey: UInt64 = 0

    /// A call listed by `registry` (the manager's), or by none.
    init(listedBy registry: InFlightRegistry? = nil) {
        storage = .running(.registered, Handlers(), Listings(manager: registry, scope: nil))
    }

    /// The state.
    var state: State {
        switch storage {
        case .running(let stage, _, _): .running(stage)
        case .cancelled(let reason, _): .cancelled(reason)
        case .ended(let state): state
        }
    }

    /// Whether the call was cancelled.
    var isCancelled: Bool {
        if case .cancelled = state { return true }
        return false
    }

    /// The number of handlers waiting to run on a cancel.
    var handlerCount: Int {
        switch storage {
        case .running(_, let handlers, _): handlers.count
        default: 0
        }
    }

    /// The number of registries the call has yet to leave.
    var listingCount: Int {
        switch storage {
        case .running(_, _, let listings), .cancelled(_, let listings): listings.count
        case .ended: 0
        }
    }

    // MARK: The call's own events

    /// Moves a running call to `stage`. A move the call's path never makes is a programming error, caught in
    /// debug builds; a cancelled or ended call stays as it is (its own task learns of the cancel only at its next
    /// wait, and a streamed body may end before the head is handed over).
    /// - Returns: `false` when the call was cancelled or ended.
    private mutating func enter(_ stage: Stage) -> Bool {
        switch storage {
        case .running(let current, let handlers, let listings):
            assert(Self.allows(current, stage), "a call cannot move from \(current) to \(stage)")
            storage = .running(stage, handlers, listings)
            return true
        default:
            return false
        }
    }

    /// The moves of a running call: registered, then its attempts with a wait between two of them, or a join;
    /// after an attempt, the head and its streamed body, or a WebSocket open and then closing. Any stage may end.
    static func allows(_ from: Stage, _ to: Stage) -> Bool {
        switch (from, to) {
        case (.registered, .attempting(1)), (.registered, .joined), (.attempting, .headReceived),
            (.headReceived, .streamingBody), (.headReceived, .open), (.open, .closing):
            true
        case (.attempting(let attempt), .waitingToRetry(let waiting)): waiting == attempt
        case (.waitingToRetry(let waited), .attempting(let next)): next == waited + 1
        default: false
        }
    }

    /// An attempt starts. - Returns: `false` when the call was cancelled: no attempt may start.
    mutating func attemptStarted(_ number: Int) -> Bool { enter(.attempting(number)) }

    /// An attempt failed and the call waits before the next. - Returns: `false` when the call was cancelled.
    mutating func waitingToRetry(_ number: Int) -> Bool { enter(.waitingToRetry(number)) }

    /// The call joins an identical call in flight. - Returns: `false` when the call was cancelled.
    mutating func coalescedJoin() -> Bool { enter(.joined) }

    /// The response head arrived.
    mutating func headReceived() { _ = enter(.headReceived) }

    /// The head went to the caller with a body it reads as it arrives.
    mutating func bodyStreaming() { _ = enter(.streamingBody) }

    /// The WebSocket's connection went to the caller.
    mutating func webSocketOpened() { _ = enter(.open) }

    /// The WebSocket sent its close frame.
    mutating func webSocketClosing() { _ = enter(.closing) }

    /// A `RequestScope` operation lists the call too.
    /// - Returns: `false` when the call has ended: the owner removes it from `registry` again.
    mutating func listed(by registry: InFlightRegistry) -> Bool {
        switch storage {
        case .running(let stage, let handlers, var listings):
            listings.scope = registry
            storage = .running(stage, handlers, listings)
            return true
        case .cancelled(let reason, var listings):
            listings.scope = registry
            storage = .cancelled(reason, listings)
            return true
        default:
            return false
        }
    }

    /// What `observe` did with a handler.
    enum Observation: Sendable, Hashable {
        /// Installed under this key, to remove it with when the wait ends.
        case installed(UInt64)
        /// Not installed: the call was cancelled, so the owner runs the handler at once.
        case runNow
        /// Not installed: the call has ended (a streamed body read to its end), so nothing is to be stopped.
        case ended
    }

    /// Something the call waits on can be stopped by `handler`.
    mutating func observe(_ handler: @escaping Handler) -> Observation {
        switch storage {
        case .running(let stage, var handlers, let listings):
            nextKey += 1
            handlers.insert(nextKey, handler)
            storage = .running(stage, handlers, listings)
            return .installed(nextKey)
        case .cancelled, .ended(.cancelled):
            return .runNow
        case .ended:
            return .ended
        }
    }

    /// The wait that installed the handler under `key` ended: the handler is dropped, not run.
    mutating func stopObserving(_ key: UInt64) {
        guard case .running(let stage, var handlers, let listings) = storage else { return }
        handlers.remove(key)
        storage = .running(stage, handlers, listings)
    }

    // MARK: Cancels and ends

    /// Cancels the call.
    /// - Parameters:
    ///   - reason: Who cancelled it.
    ///   - registry: The registry that cancels it and has already removed it, which it need not leave.
    /// - Returns: The handlers that stop what it waits on, to run now. Empty once the call was cancelled or ended.
    mutating func cancel(_ reason: CancelReason, removedFrom registry: InFlightRegistry? = nil) -> Actions {
        switch storage {
        case .running(_, let handlers, var listings):
            if let registry { listings.drop(registry) }
            storage = .cancelled(reason, listings)
            return Actions(handlers: handlers)
        case .cancelled(let reason, var listings):
            if let registry { listings.drop(registry) }
            storage = .cancelled(reason, listings)
            return Actions()
        default:
            return Actions()
        }
    }

    /// The call failed: a transport, status, decoding or business error, or the cancellation its waits reported.
    mutating func fail() -> Actions { end(.failed) }

    /// The call ended with a result (a whole response delivered, a streamed body read to its end).
    mutating func finish() -> Actions { end(.finished) }

    /// The call's end, handed out once: the registries to leave and `didComplete` to run. A cancelled call stays
    /// cancelled; its handlers were run by the cancel, and a running call's unrun handlers are dropped.
    private mutating func end(_ state: State) -> Actions {
        // Swapped out rather than copied: the listings move into the actions without being retained and released.
        var previous = Storage.ended(state)
        swap(&previous, &storage)
        switch consume previous {
        case .running(_, _, let listings):
            return Actions(leave: listings, completes: true)
        case .cancelled(let reason, let listings):
            storage = .ended(.cancelled(reason))
            return Actions(leave: listings, completes: true)
        case .ended(let ended):
            storage = .ended(ended)
            return Actions()
        }
    }
}
