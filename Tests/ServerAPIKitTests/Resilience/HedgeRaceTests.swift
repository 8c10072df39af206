import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Hedged requests: the race, the share, the delay")
struct HedgeRaceTests {
    @Test("an answer before the delay is delivered and no hedge is sent")
    func fastPrimary() {
        var race = HedgeRace()
        #expect(race.finished(attempt: 0, succeeded: true) == .deliver(attempt: 0, cancel: []))
        #expect(race.delayElapsed(hedgeAllowed: true) == .wait)
        #expect(!race.hedgeSent)
    }

    @Test("a failure before the delay fails at once, without a hedge")
    func failedPrimary() {
        var race = HedgeRace()
        #expect(race.finished(attempt: 0, succeeded: false) == .fail(attempt: 0))
        #expect(race.delayElapsed(hedgeAllowed: true) == .wait)
    }

    @Test("after the delay the hedge goes out, and the first answer wins and cancels the other")
    func hedgeWins() {
        var race = HedgeRace()
        #expect(race.delayElapsed(hedgeAllowed: true) == .sendHedge)
        #expect(race.hedgeSent)
        #expect(race.finished(attempt: 1, succeeded: true) == .deliver(attempt: 1, cancel: [0]))
        #expect(race.finished(attempt: 0, succeeded: true) == .wait)
    }

    @Test("the primary can still win after the hedge went out")
    func primaryWins() {
        var race = HedgeRace()
        _ = race.delayElapsed(hedgeAllowed: true)
        #expect(race.finished(attempt: 0, succeeded: true) == .deliver(attempt: 0, cancel: [1]))
    }

    @Test("one failed leg waits for the other; both failed fails with the last")
    func bothFail() {
        var race = HedgeRace()
        _ = race.delayElapsed(hedgeAllowed: true)
        #expect(race.finished(attempt: 0, succeeded: false) == .wait)
        #expect(race.finished(attempt: 1, succeeded: false) == .fail(attempt: 1))
        var other = HedgeRace()
        _ = other.delayElapsed(hedgeAllowed: true)
        #expect(other.finished(attempt: 1, succeeded: false) == .wait)
        #expect(other.finished(attempt: 0, succeeded: true) == .deliver(attempt: 0, cancel: []))
    }

    @Test("a hedge the share refuses is not sent, and the primary runs on alone")
    func refused() {
        var race = HedgeRace()
        #expect(race.delayElapsed(hedgeAllowed: false) == .wait)
        #expect(!race.hedgeSent)
        #expect(race.finished(attempt: 0, succeeded: true) == .deliver(attempt: 0, cancel: []))
    }

    @Test("cancelling while the hedge is out cancels both legs; before it, the primary")
    func cancellation() {
        var hedged = HedgeRace()
        _ = hedged.delayElapsed(hedgeAllowed: true)
        #expect(hedged.cancelled() == .cancel([0, 1]))
        #expect(hedged.finished(attempt: 0, succeeded: true) == .wait)
        var waiting = HedgeRace()
        #expect(waiting.cancelled() == .cancel([0]))
        #expect(waiting.delayElapsed(hedgeAllowed: true) == .wait)
        var oneLeft = HedgeRace()
        _ = oneLeft.delayElapsed(hedgeAllowed: true)
        _ = oneLeft.finished(attempt: 0, succeeded: false)
        #expect(oneLeft.cancelled() == .cancel([1]))
    }

    @Test("hedges are capped as a share of the calls in the window")
    func share() {
        let clock = TestClock()
        var budget = HedgeBudget(HedgingPolicy.after(.milliseconds(10), maxShare: 0.1))
        for _ in 0..<19 { budget.deposit(at: clock.now.offset) }
        #expect(budget.withdraw(at: clock.now.offset) == true)
        #expect(budget.withdraw(at: clock.now.offset) == false)
        budget.deposit(at: clock.now.offset)
        #expect(budget.withdraw(at: clock.now.offset) == true)
        #expect(budget.withdraw(at: clock.now.offset) == false)
        clock.advance(by: .seconds(10))
        budget.deposit(at: clock.now.offset)
        #expect(budget.withdraw(at: clock.now.offset) == false)
    }

    @Test("a percentile delay uses the fallback until enough latencies were seen")
    func percentileDelay() {
        let policy = HedgingPolicy.percentile(0.9, fallback: .seconds(2), minimumSamples: 10)
        var samples = LatencySamples(capacity: 20)
        for ms in 1...9 { samples.add(.milliseconds(ms * 10)) }
        #expect(policy.hedgeDelay(samples) == .seconds(2))
        samples.add(.milliseconds(100))
        #expect(policy.hedgeDelay(samples) == .milliseconds(90))
        #expect(HedgingPolicy.after(.milliseconds(7)).hedgeDelay(samples) == .milliseconds(7))
    }

    @Test("the latency history keeps only the newest samples")
    func ring() {
        var samples = LatencySamples(capacity: 3)
        for ms in [500, 1, 2, 3] { samples.add(.milliseconds(ms)) }
        #expect(samples.count == 3)
        #expect(samples.percentile(1) == .milliseconds(3))
        #expect(samples.percentile(0) == .milliseconds(1))
    }
}
