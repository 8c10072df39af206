import Synchronization

/// One call in flight: what the in-flight registry lists and cancels, what a `RequestScope` and the
/// caller's task cancel, and the one cancellation its transport observes.
///
/// It runs a `CallStateMachine` under its lock and acts on the machine's actions after unlocking, so
/// that a cancellation handler that calls back into the manager cannot deadlock. The transport sees
/// the call's `cancellation` token on the prepared request, and nothing else: no second flag.
final class Call: Sendable {
    private struct State: ~Copyable {
        var machine = CallStateMachine()
        /// The current stage's cancel handler (a streamed body's `cancel`), run once.
        var handler: (@Sendable () -> Void)?
        /// The `RequestScope` operation the call runs in, and its key there.
        var scope: (run: ScopeRun, key: UInt64)?
    }

    /// What the registry lists: id, tag, method, URL, start.
    let info: InFlightRequest
    /// The call's one cancellation: on its prepared request, observed by the transport, the retry
    /// waits and a coalesced join.
    let cancellation: CancellationToken
    private let registry: InFlightRegistry?
    private let state = Locked(State())
    /// The call's key in the registry, 0 once it left (or before it was listed): an atomic, so that
    /// an ordinary call's registration and departure take no lock of the call's.
    private let registryKey = Atomic<UInt64>(0)
    /// Whether the call joined a scope's operation: only then does leaving take the lock.
    private let scoped = Atomic<Bool>(false)
    /// Whether the first attempt started: an atomic, so that an ordinary call's attempt takes no lock.
    private let firstAttemptStarted = Atomic<Bool>(false)

    /// Makes a call.
    /// - Parameters:
    ///   - info: What the registry lists.
    ///   - cancellation: The token its prepared request carries.
    ///   - registry: The registry it leaves when it ends; `nil` for a call no registry lists.
    init(info: InFlightRequest, cancellation: CancellationToken = CancellationToken(), registry: InFlightRegistry?) {
        self.info = info
        self.cancellation = cancellation
        self.registry = registry
    }

    /// The call's id.
    var id: RequestID { info.id }
    /// The call's tag.
    var tag: String? { info.tag }

    /// The state, for tests and diagnostics.
    var lifecycle: CallStateMachine.State {
        let state = state.withLock { $0.machine.state }
        // The first attempt is not an event of the machine's (see `attemptStarted`).
        if state == .registered, firstAttemptStarted.load(ordering: .acquiring) { return .attempting(1) }
        return state
    }

    /// Whether the call was cancelled, by anything.
    var isCancelled: Bool { cancellation.isCancelled || state.withLock { $0.machine.isCancelled } }

    /// Records that the registry lists the call under `key`.
    func registered(as key: UInt64) {
        registryKey.store(key, ordering: .releasing)
    }

    /// Records that the call runs in a scope's operation, under `key`.
    func joined(_ run: ScopeRun, as key: UInt64) {
        state.withLock { $0.scope = (run, key) }
        scoped.store(true, ordering: .releasing)
    }

    /// Cancels the call; an ended call is left alone.
    /// - Returns: Whether the call was still running.
    @discardableResult
    func cancel(_ reason: CallStateMachine.CancelReason) -> Bool {
        let (actions, handler) = state.withLock { state in
            let actions = state.machine.cancel(reason)
            let handler = actions.contains(.fireCancelHandler) ? state.handler.take() : nil
            return (actions, handler)
        }
        // The token wakes whatever waits (`resumeWaiter`) as well as the transport.
        if actions.contains(.cancelTransport) || actions.contains(.resumeWaiter) { cancellation.cancel() }
        handler?()
        return !actions.isEmpty
    }

    /// Installs the current stage's cancel handler; it runs at once when the call was cancelled already.
    func installCancelHandler(_ handler: @escaping @Sendable () -> Void) {
        let fire = state.withLock { state in
            let fire = state.machine.cancelHandlerInstalled().contains(.fireCancelHandler)
            if !fire { state.handler = handler }
            return fire
        }
        if fire { handler() }
    }

    /// An attempt starts. - Returns: `false` when the call was cancelled.
    ///
    /// The first attempt takes no lock. In the machine, `registered` and `attempting(1)` answer a cancel alike
    /// (fire the token), a call cannot have ended before its first attempt but by a cancel, and every cancel of
    /// a running call fires the token: reading the token is enough. A cancel whose token fires just after this
    /// read ends the attempt through the token, which the transport observes.
    func attemptStarted(_ number: Int) -> Bool {
        if number == 1 {
            firstAttemptStarted.store(true, ordering: .releasing)
            return !cancellation.isCancelled
        }
        return state.withLock { $0.machine.attemptStarted(number) } && !cancellation.isCancelled
    }

    /// The call waits to retry. - Returns: `false` when the call was cancelled.
    func waitingToRetry(_ number: Int) -> Bool {
        state.withLock { $0.machine.waitingToRetry(number) } && !cancellation.isCancelled
    }

    /// The call joins an identical call in flight. - Returns: `false` when the call was cancelled.
    func coalescedJoin() -> Bool {
        state.withLock { $0.machine.coalescedJoin() } && !cancellation.isCancelled
    }

    /// The head arrived.
    func headReceived() {
        state.withLock { _ = $0.machine.headReceived() }
    }

    /// The caller reads the body as it arrives.
    func bodyStreaming() {
        state.withLock { _ = $0.machine.bodyStreaming() }
    }

    /// Ends the call, with a result (`failed == false`) or an error, and leaves the registry.
    /// - Returns: Whether this was the call's end: its metrics are stamped and `didComplete` runs only then.
    func end(failed: Bool) -> Bool {
        let actions = state.withLock { state in
            let actions = failed ? state.machine.fail() : state.machine.finish()
            state.handler = nil
            return actions
        }
        if actions.contains(.leaveRegistry) { leave() }
        return actions.contains(.runDidComplete)
    }

    /// Leaves the registry and the scope, once; for the paths that end a call without `end(failed:)`
    /// (a cached answer, a coalesced join), it runs when the call returns.
    func leave() {
        let key = registryKey.exchange(0, ordering: .acquiringAndReleasing)
        if key != 0 { registry?.remove(key) }
        guard scoped.load(ordering: .acquiring), let scope = state.withLock({ $0.scope.take() }) else { return }
        scope.run.remove(scope.key)
    }
}
