/// The lifecycle of one call, as a value: each event changes the state and returns what the caller of
/// the event must do — fire the transport's cancellation, run the stage's cancel handler, stamp the
/// metrics, run the plugins' `didComplete`, leave the in-flight registry, resume a waiter.
///
/// It takes no lock, reads no clock and does no I/O, so that every race (a cancel against the head, the
/// end of the body, a retry wait, a coalesced join) is a sequence of events tested on its own. `Call`
/// runs it under its lock and acts on the actions after unlocking.
///
/// A cancel that arrives before the current stage has installed its cancel handler (a streamed body's
/// `cancel`) is remembered and returned as `fireCancelHandler` when the handler is installed, as
/// async-http-client's `TransactionCancelHandler` does.
struct CallStateMachine: Sendable {
    /// Where a call is in its life.
    enum State: Sendable, Hashable {
        /// Made and listed in the registry, before its first attempt.
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
        /// Ended with a result.
        case finished
        /// Ended with an error other than a cancellation.
        case failed
        /// Cancelled, for this reason.
        case cancelled(CancelReason)
    }

    /// Who cancelled a call. The caller's task (and so a `RequestHandle`, which cancels the task that runs
    /// the call) is not among them: it fires the call's token, which the transport and the waits observe
    /// directly, and `Call.isCancelled` reads.
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
    }

    /// What the owner of the machine does after an event, after releasing its lock.
    struct Actions: OptionSet, Sendable, Hashable, CustomStringConvertible {
        let rawValue: UInt8

        /// Fire the call's one cancellation, the one its transport and waits observe.
        static let cancelTransport = Actions(rawValue: 1 << 0)
        /// Run the cancel handler the current stage installed (a streamed body's `cancel`).
        static let fireCancelHandler = Actions(rawValue: 1 << 1)
        /// Stamp the call's end and duration on its metrics.
        static let stampMetrics = Actions(rawValue: 1 << 2)
        /// Run the plugins' `didComplete`: once per call, whatever ends it.
        static let runDidComplete = Actions(rawValue: 1 << 3)
        /// Remove the call from the in-flight registry.
        static let leaveRegistry = Actions(rawValue: 1 << 4)
        /// Wake the call's waiter (a retry wait, a coalesced join) so that it ends with `cancelled`.
        static let resumeWaiter = Actions(rawValue: 1 << 5)

        /// Nothing to do.
        static let none: Actions = []
        /// Everything that ends a call.
        static let complete: Actions = [.stampMetrics, .runDidComplete, .leaveRegistry]

        var description: String {
            let names: [(Actions, String)] = [
                (.cancelTransport, "cancelTransport"), (.fireCancelHandler, "fireCancelHandler"),
                (.stampMetrics, "stampMetrics"), (.runDidComplete, "runDidComplete"),
                (.leaveRegistry, "leaveRegistry"), (.resumeWaiter, "resumeWaiter"),
            ]
            return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
        }
    }

    /// The state.
    private(set) var state: State = .registered
    /// Whether the current stage installed a cancel handler that has not run.
    private var handlerInstalled = false
    /// Whether a cancel came before the current stage's handler existed, to fire when it is installed.
    private var cancelPending = false
    /// Whether the call's end (metrics, `didComplete`, registry) was handed out: it is, once.
    private var completed = false

    /// Whether the call was cancelled.
    var isCancelled: Bool {
        if case .cancelled = state { return true }
        return false
    }

    /// Whether the call has ended (with a result, an error or a cancellation).
    var hasEnded: Bool {
        switch state {
        case .finished, .failed, .cancelled: true
        default: false
        }
    }

    /// An attempt starts.
    /// - Returns: `false` when the call was cancelled: no attempt may start.
    mutating func attemptStarted(_ number: Int) -> Bool {
        guard !hasEnded else { return false }
        state = .attempting(number)
        return true
    }

    /// An attempt failed and the call waits before the next.
    /// - Returns: `false` when the call was cancelled: it must not wait.
    mutating func waitingToRetry(_ number: Int) -> Bool {
        guard !hasEnded else { return false }
        state = .waitingToRetry(number)
        return true
    }

    /// The call joins an identical call in flight instead of sending.
    /// - Returns: `false` when the call was cancelled: it must not join.
    mutating func coalescedJoin() -> Bool {
        guard !hasEnded else { return false }
        state = .joined
        return true
    }

    /// The response head arrived.
    mutating func headReceived() -> Actions {
        guard !hasEnded else { return .none }
        state = .headReceived
        return .none
    }

    /// The head went to the caller with a body it reads as it arrives.
    mutating func bodyStreaming() -> Actions {
        guard !hasEnded else { return .none }
        state = .streamingBody
        return .none
    }

    /// The current stage installed its cancel handler.
    /// - Returns: `fireCancelHandler` when the call was cancelled before: the handler runs now.
    mutating func cancelHandlerInstalled() -> Actions {
        if cancelPending || isCancelled {
            cancelPending = false
            return .fireCancelHandler
        }
        handlerInstalled = true
        return .none
    }

    /// The current stage's cancel handler is gone (its wait ended).
    mutating func cancelHandlerRemoved() {
        handlerInstalled = false
    }

    /// Cancels the call.
    /// - Returns: What stops it: its transport's cancellation, the stage's handler if there is one (else
    ///   it is remembered), its waiter when it waits. Nothing once the call has ended.
    mutating func cancel(_ reason: CancelReason) -> Actions {
        var actions: Actions
        switch state {
        case .finished, .failed, .cancelled:
            return .none
        case .registered, .attempting, .headReceived, .streamingBody:
            actions = .cancelTransport
        case .waitingToRetry, .joined:
            actions = [.cancelTransport, .resumeWaiter]
        }
        state = .cancelled(reason)
        if handlerInstalled {
            handlerInstalled = false
            actions.insert(.fireCancelHandler)
        } else {
            cancelPending = true
        }
        return actions
    }

    /// The call failed: a transport, status, decoding or business error, or the cancellation its
    /// waits reported.
    mutating func fail() -> Actions {
        if !hasEnded { state = .failed }
        return end()
    }

    /// The call ended with a result (a whole response delivered, a streamed body read to its end).
    mutating func finish() -> Actions {
        if !hasEnded { state = .finished }
        return end()
    }

    /// The call's end, handed out once.
    private mutating func end() -> Actions {
        handlerInstalled = false
        guard !completed else { return .none }
        completed = true
        return .complete
    }
}
