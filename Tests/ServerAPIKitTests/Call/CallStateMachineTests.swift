import Testing

@_spi(Backend) @testable import ServerAPIKit

/// The call's lifecycle on its own: every cancellation point × every cancel source, and the races
/// between a cancel and the call's own events, without a transport, a clock or a lock.
@Suite struct CallStateMachineTests {
    typealias Machine = CallStateMachine

    /// Records which handlers ran, and how often.
    final class Fired: Sendable {
        let names = Locked([String]())
        func handler(_ name: String) -> Machine.Handler { { self.names.withLock { $0.append(name) } } }
        var all: [String] { names.withLock { $0 } }
    }

    /// Where a call can be when a cancel arrives.
    enum Point: String, CaseIterable, CustomTestStringConvertible {
        case beforeStart, whileConnecting, midAttempt, betweenRetries, afterHead, midBody, afterCompletion
        case duringCoalescedJoin

        var testDescription: String { rawValue }

        /// A machine driven to this point by the events a call sees on its way there, with the handler of
        /// whatever it waits on there installed (the transport's, the retry wait's, the flight's, the body's).
        func machine(_ fired: Fired) -> Machine {
            var machine = Machine()
            switch self {
            case .beforeStart:
                break
            case .whileConnecting:
                _ = machine.attemptStarted(1)
                _ = machine.observe(fired.handler("transport"))
            case .midAttempt:
                _ = machine.attemptStarted(1)
                guard case .installed(let first) = machine.observe(fired.handler("first attempt")) else { break }
                machine.stopObserving(first)
                _ = machine.waitingToRetry(1)
                guard case .installed(let wait) = machine.observe(fired.handler("retry wait")) else { break }
                machine.stopObserving(wait)
                _ = machine.attemptStarted(2)
                _ = machine.observe(fired.handler("transport"))
            case .betweenRetries:
                _ = machine.attemptStarted(1)
                _ = machine.waitingToRetry(1)
                _ = machine.observe(fired.handler("retry wait"))
            case .afterHead:
                _ = machine.attemptStarted(1)
                machine.headReceived()
            case .midBody:
                _ = machine.attemptStarted(1)
                machine.headReceived()
                machine.bodyStreaming()
                _ = machine.observe(fired.handler("body"))
            case .afterCompletion:
                _ = machine.attemptStarted(1)
                _ = machine.observe(fired.handler("transport"))
                machine.headReceived()
                _ = machine.finish()
            case .duringCoalescedJoin:
                _ = machine.coalescedJoin()
                _ = machine.observe(fired.handler("flight"))
            }
            return machine
        }

        /// The handlers a cancel at this point must run: what the call waits on there, and nothing it waited on
        /// before.
        var stopped: [String] {
            switch self {
            case .beforeStart, .afterHead, .afterCompletion: []
            case .whileConnecting, .midAttempt: ["transport"]
            case .betweenRetries: ["retry wait"]
            case .midBody: ["body"]
            case .duringCoalescedJoin: ["flight"]
            }
        }
    }

    static let reasons: [Machine.CancelReason] = [.id, .tag, .first, .last, .all, .replaced, .scope]

    @Test(
        "A cancel at each point stops what the call waits on there, once, whoever cancels", arguments: Point.allCases,
        CallStateMachineTests.reasons)
    func matrix(point: Point, reason: Machine.CancelReason) {
        let fired = Fired()
        var machine = point.machine(fired)
        machine.cancel(reason).handlers.run()
        #expect(fired.all == point.stopped)
        if point == .afterCompletion {
            #expect(machine.state == .finished)
            #expect(!machine.isCancelled)
            // The call's end was handed out when it finished; nothing is left to do.
            let end1 = machine.fail()
            #expect(end1.isEmpty)
            return
        }
        #expect(machine.state == .cancelled(reason))
        #expect(machine.handlerCount == 0)
        // A second cancel, from anyone, does nothing and keeps the first reason.
        let end2 = machine.cancel(.all)
        #expect(end2.isEmpty)
        #expect(machine.state == .cancelled(reason))
        // No attempt, retry wait or join starts after a cancel, and nothing new waits on it.
        #expect(machine.attemptStarted(9) == false)
        #expect(machine.waitingToRetry(9) == false)
        #expect(machine.coalescedJoin() == false)
        let observed1 = machine.observe(fired.handler("late"))
        #expect(observed1 == .runNow)
        machine.headReceived()
        #expect(machine.state == .cancelled(reason))
        // The failure the cancel causes ends the call once: metrics, `didComplete`, the registries.
        let end3 = machine.fail()
        #expect(end3.completes)
        let end4 = machine.fail()
        #expect(end4.isEmpty)
        let end5 = machine.finish()
        #expect(end5.isEmpty)
        #expect(machine.state == .cancelled(reason))
        #expect(fired.all == point.stopped)
    }

    @Test("A cancel before the body's handler exists leaves the call cancelled, so the handler runs when installed")
    func cancelBeforeHandler() {
        let fired = Fired()
        var machine = Point.afterHead.machine(fired)
        let end6 = machine.cancel(.tag)
        #expect(end6.handlers.count == 0)
        machine.bodyStreaming()
        // The owner runs the handler at once, and every later one too.
        let observed2 = machine.observe(fired.handler("body"))
        #expect(observed2 == .runNow)
        let observed3 = machine.observe(fired.handler("again"))
        #expect(observed3 == .runNow)
        #expect(machine.state == .cancelled(.tag))
    }

    @Test("A handler removed before the cancel is not run")
    func handlerRemoved() {
        let fired = Fired()
        var machine = Machine()
        _ = machine.attemptStarted(1)
        guard case .installed(let key) = machine.observe(fired.handler("transport")) else {
            Issue.record("a running call installs the handler")
            return
        }
        machine.stopObserving(key)
        machine.cancel(.id).handlers.run()
        #expect(fired.all.isEmpty)
    }

    @Test("A body read to its end before its handler is installed is not cancelled by it: the call has ended")
    func handlerAfterEnd() {
        let fired = Fired()
        var machine = Point.afterHead.machine(fired)
        machine.bodyStreaming()
        let end = machine.finish()
        #expect(end.completes)
        let observed4 = machine.observe(fired.handler("body"))
        #expect(observed4 == .ended)
        let failed = Point.whileConnecting.machine(fired)
        var ended = failed
        _ = ended.fail()
        let observed5 = ended.observe(fired.handler("late"))
        #expect(observed5 == .ended)
        #expect(fired.all.isEmpty)
    }

    @Test("Two waits at once (a hedged attempt's legs) are both stopped, each once")
    func twoHandlers() {
        let fired = Fired()
        var machine = Machine()
        _ = machine.attemptStarted(1)
        _ = machine.observe(fired.handler("primary"))
        _ = machine.observe(fired.handler("hedge"))
        #expect(machine.handlerCount == 2)
        machine.cancel(.all).handlers.run()
        machine.cancel(.all).handlers.run()
        #expect(fired.all == ["primary", "hedge"])
    }

    @Test("The body's end racing a cancel: whichever comes first wins, and the end is handed out once")
    func bodyEndRacesCancel() {
        let fired = Fired()
        var endFirst = Point.midBody.machine(fired)
        let end7 = endFirst.finish()
        #expect(end7.completes)
        endFirst.cancel(.all).handlers.run()
        #expect(fired.all.isEmpty)
        #expect(endFirst.state == .finished)

        var cancelFirst = Point.midBody.machine(fired)
        cancelFirst.cancel(.all).handlers.run()
        #expect(fired.all == ["body"])
        // The transport then reports the end of the body: a success or a failure, the call is cancelled.
        let end8 = cancelFirst.finish()
        #expect(end8.completes)
        #expect(cancelFirst.state == .cancelled(.all))
    }

    @Test("A head arriving after a cancel does not revive the call")
    func headAfterCancel() {
        var machine = Point.whileConnecting.machine(Fired())
        _ = machine.cancel(.first)
        machine.headReceived()
        machine.bodyStreaming()
        #expect(machine.state == .cancelled(.first))
    }

    @Test("A call that fails or succeeds ends once, and a cancel after it does nothing")
    func endsOnce() {
        let fired = Fired()
        var failed = Point.whileConnecting.machine(fired)
        let end9 = failed.fail()
        #expect(end9.completes)
        #expect(failed.state == .failed)
        failed.cancel(.last).handlers.run()
        #expect(fired.all.isEmpty)
        let end10 = failed.finish()
        #expect(end10.isEmpty)

        var retried = Point.betweenRetries.machine(fired)
        #expect(retried.attemptStarted(2) == true)
        #expect(retried.state == .running(.attempting(2)))
        let end11 = retried.finish()
        #expect(end11.completes)
        #expect(retried.state == .finished)
    }

    @Test("A call cancelled before its first attempt never starts one, and ends once")
    func cancelBeforeStart() {
        var machine = Machine()
        #expect(machine.state == .running(.registered))
        let end12 = machine.cancel(.scope)
        #expect(end12.handlers.count == 0)
        #expect(machine.attemptStarted(1) == false)
        #expect(machine.state == .cancelled(.scope))
        let end13 = machine.fail()
        #expect(end13.completes)
    }

    @Test("The registries that list a call are left once, at its end; one that cancelled it is not left again")
    func listings() {
        let manager = InFlightRegistry()
        let scope = InFlightRegistry()
        var ended = Machine(listedBy: manager)
        let listed = ended.listed(by: scope)
        #expect(listed)
        #expect(ended.listingCount == 2)
        let end14 = ended.finish()
        #expect(end14.leave.count == 2)
        let end15 = ended.finish()
        #expect(end15.leave.count == 0)
        let relisted = ended.listed(by: scope)
        #expect(!relisted)

        var cancelled = Machine(listedBy: manager)
        let alsoListed = cancelled.listed(by: scope)
        #expect(alsoListed)
        _ = cancelled.cancel(.scope, removedFrom: scope)
        // The manager's registry still lists it until it ends.
        #expect(cancelled.listingCount == 1)
        _ = cancelled.cancel(.id, removedFrom: manager)
        #expect(cancelled.listingCount == 0)
        let end = cancelled.fail()
        #expect(end.completes && end.leave.count == 0)
        #expect(cancelled.state == .cancelled(.scope))
    }

    @Test(
        "A running call moves only along its path: registered, attempts with a wait between two, or a join; the head, then its body or an open WebSocket that closes"
    )
    func legalMoves() {
        let stages: [Machine.Stage] = [
            .registered, .attempting(1), .attempting(2), .waitingToRetry(1), .waitingToRetry(2), .joined, .headReceived,
            .streamingBody, .open, .closing,
        ]
        let legal: Set<[Machine.Stage]> = [
            [.registered, .attempting(1)], [.registered, .joined], [.attempting(1), .waitingToRetry(1)],
            [.attempting(2), .waitingToRetry(2)], [.waitingToRetry(1), .attempting(2)],
            [.attempting(1), .headReceived], [.attempting(2), .headReceived], [.headReceived, .streamingBody],
            [.headReceived, .open], [.open, .closing],
        ]
        for from in stages {
            for to in stages {
                #expect(Machine.allows(from, to) == legal.contains([from, to]), "\(from) → \(to)")
            }
        }
    }

    #if DEBUG
        // The check is an assertion: a release build leaves it out, so this test exists in debug builds only.
        @Test("A move off the path (a second attempt with no failed first, a body before any head) stops a debug build")
        func illegalMoveTraps() async {
            await #expect(processExitsWith: .failure) {
                var machine = CallStateMachine()
                _ = machine.attemptStarted(2)
            }
            await #expect(processExitsWith: .failure) {
                var machine = CallStateMachine()
                _ = machine.attemptStarted(1)
                machine.bodyStreaming()
            }
        }
    #endif
}
