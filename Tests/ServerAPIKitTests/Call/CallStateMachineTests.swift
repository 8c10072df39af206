import Testing

@testable import ServerAPIKit

/// The call's lifecycle on its own: every cancellation point × every cancel source, and the races
/// between a cancel and the call's own events, without a transport, a clock or a lock.
@Suite struct CallStateMachineTests {
    typealias Machine = CallStateMachine
    typealias Actions = CallStateMachine.Actions

    /// Where a call can be when a cancel arrives.
    enum Point: String, CaseIterable, CustomTestStringConvertible {
        case beforeStart, whileConnecting, midAttempt, betweenRetries, afterHead, midBody, afterCompletion
        case duringCoalescedJoin

        var testDescription: String { rawValue }

        /// A machine driven to this point by the events a call sees on its way there.
        func machine() -> Machine {
            var machine = Machine()
            switch self {
            case .beforeStart:
                break
            case .whileConnecting:
                _ = machine.attemptStarted(1)
            case .midAttempt:
                _ = machine.attemptStarted(1)
                _ = machine.waitingToRetry(1)
                _ = machine.attemptStarted(2)
            case .betweenRetries:
                _ = machine.attemptStarted(1)
                _ = machine.waitingToRetry(1)
            case .afterHead:
                _ = machine.attemptStarted(1)
                _ = machine.headReceived()
            case .midBody:
                _ = machine.attemptStarted(1)
                _ = machine.headReceived()
                _ = machine.bodyStreaming()
                _ = machine.cancelHandlerInstalled()
            case .afterCompletion:
                _ = machine.attemptStarted(1)
                _ = machine.headReceived()
                _ = machine.finish()
            case .duringCoalescedJoin:
                _ = machine.coalescedJoin()
            }
            return machine
        }

        /// What a cancel at this point must do.
        var cancelActions: Actions {
            switch self {
            case .beforeStart, .whileConnecting, .midAttempt, .afterHead: .cancelTransport
            case .betweenRetries, .duringCoalescedJoin: [.cancelTransport, .resumeWaiter]
            case .midBody: [.cancelTransport, .fireCancelHandler]
            case .afterCompletion: .none
            }
        }
    }

    static let reasons: [Machine.CancelReason] = [.id, .tag, .first, .last, .all, .replaced, .scope]

    @Test(
        "A cancel at each point does what stops the call there, once, whoever cancels", arguments: Point.allCases,
        CallStateMachineTests.reasons)
    func matrix(point: Point, reason: Machine.CancelReason) {
        var machine = point.machine()
        #expect(machine.cancel(reason) == point.cancelActions)
        if point == .afterCompletion {
            #expect(machine.state == .finished)
            #expect(!machine.isCancelled)
            // The call's end was handed out when it finished; nothing is left to do.
            #expect(machine.fail() == .none)
            return
        }
        #expect(machine.state == .cancelled(reason))
        // A second cancel, from anyone, does nothing and keeps the first reason.
        #expect(machine.cancel(.all) == .none)
        #expect(machine.state == .cancelled(reason))
        // No attempt, retry wait or join starts after a cancel.
        #expect(machine.attemptStarted(9) == false)
        #expect(machine.waitingToRetry(9) == false)
        #expect(machine.coalescedJoin() == false)
        #expect(machine.headReceived() == .none && machine.state == .cancelled(reason))
        // The failure the cancel causes ends the call once: metrics, `didComplete`, the registry.
        #expect(machine.fail() == .complete)
        #expect(machine.fail() == .none)
        #expect(machine.finish() == .none)
        #expect(machine.state == .cancelled(reason))
    }

    @Test("A cancel before the body's handler exists is remembered and fires the handler when it is installed")
    func cancelBeforeHandler() {
        var machine = Point.afterHead.machine()
        #expect(machine.cancel(.tag) == .cancelTransport)
        _ = machine.bodyStreaming()
        #expect(machine.cancelHandlerInstalled() == .fireCancelHandler)
        // Fired once: a later install is a new stage's, and still sees a cancelled call.
        #expect(machine.cancelHandlerInstalled() == .fireCancelHandler)
    }

    @Test("A handler removed before the cancel is not fired")
    func handlerRemoved() {
        var machine = Point.midBody.machine()
        machine.cancelHandlerRemoved()
        #expect(machine.cancel(.id) == .cancelTransport)
    }

    @Test("The body's end racing a cancel: whichever comes first wins, and the end is handed out once")
    func bodyEndRacesCancel() {
        var endFirst = Point.midBody.machine()
        #expect(endFirst.finish() == .complete)
        #expect(endFirst.cancel(.all) == .none)
        #expect(endFirst.state == .finished)

        var cancelFirst = Point.midBody.machine()
        #expect(cancelFirst.cancel(.all) == [.cancelTransport, .fireCancelHandler])
        // The transport then reports the end of the body: a success or a failure, the call is cancelled.
        #expect(cancelFirst.finish() == .complete)
        #expect(cancelFirst.state == .cancelled(.all))
    }

    @Test("A head arriving after a cancel does not revive the call")
    func headAfterCancel() {
        var machine = Point.whileConnecting.machine()
        _ = machine.cancel(.first)
        #expect(machine.headReceived() == .none)
        #expect(machine.bodyStreaming() == .none)
        #expect(machine.state == .cancelled(.first))
    }

    @Test("A call that fails or succeeds ends once, and a cancel after it does nothing")
    func endsOnce() {
        var failed = Point.whileConnecting.machine()
        #expect(failed.fail() == .complete)
        #expect(failed.state == .failed)
        #expect(failed.cancel(.last) == .none)
        #expect(failed.finish() == .none)

        var retried = Point.betweenRetries.machine()
        #expect(retried.attemptStarted(2) == true)
        #expect(retried.state == .attempting(2))
        #expect(retried.finish() == .complete)
        #expect(retried.state == .finished)
    }

    @Test("A call cancelled before its first attempt never starts one, and ends once")
    func cancelBeforeStart() {
        var machine = Machine()
        #expect(machine.state == .registered)
        #expect(machine.cancel(.scope) == .cancelTransport)
        #expect(machine.attemptStarted(1) == false)
        #expect(machine.state == .cancelled(.scope))
        #expect(machine.fail() == .complete)
    }
}
