import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Circuit breaker state machine")
struct CircuitBreakerTests {
    @Test("closed opens after N failures in a row; a success in between resets the count")
    func consecutive() {
        let clock = TestClock()
        var breaker = CircuitBreaker(.consecutiveFailures(3, openFor: .seconds(5)))
        for outcome in [CircuitBreaker.Outcome.failure, .failure, .success, .failure, .failure] {
            #expect(breaker.admit(at: clock.now.offset).0 == .allowed(probe: false))
            #expect(breaker.record(outcome, probe: false, at: clock.now.offset) == nil)
        }
        #expect(breaker.admit(at: clock.now.offset).0 == .allowed(probe: false))
        let opened = breaker.record(.failure, probe: false, at: clock.now.offset)
        #expect(opened == CircuitBreaker.Transition(from: .closed, to: .open, probeAt: .seconds(5)))
        #expect(breaker.state(at: clock.now.offset) == .open)
    }

    @Test("open rejects with the probe time until it comes, then lets one probe through half-open")
    func openToHalfOpen() {
        let clock = TestClock()
        var breaker = CircuitBreaker(.consecutiveFailures(1, openFor: .seconds(5)))
        _ = breaker.admit(at: clock.now.offset)
        _ = breaker.record(.failure, probe: false, at: clock.now.offset)

        clock.advance(by: .milliseconds(4999))
        #expect(breaker.admit(at: clock.now.offset).0 == .rejected(state: .open, probeAt: .seconds(5)))
        clock.advance(by: .milliseconds(1))
        #expect(breaker.state(at: clock.now.offset) == .halfOpen)
        let (admission, transition) = breaker.admit(at: clock.now.offset)
        #expect(admission == .allowed(probe: true))
        #expect(transition == CircuitBreaker.Transition(from: .open, to: .halfOpen))
        // One probe at a time: the next call is rejected while it is out.
        #expect(breaker.admit(at: clock.now.offset).0 == .rejected(state: .halfOpen, probeAt: .seconds(5)))
    }

    @Test("half-open closes when its probes succeed")
    func halfOpenCloses() {
        let clock = TestClock()
        var breaker = CircuitBreaker(
            CircuitBreakerPolicy(trip: .consecutiveFailures(1), openDuration: .seconds(1), probes: 2))
        _ = breaker.record(.failure, probe: false, at: clock.now.offset)
        clock.advance(by: .seconds(1))
        #expect(breaker.admit(at: clock.now.offset).0 == .allowed(probe: true))
        #expect(breaker.admit(at: clock.now.offset).0 == .allowed(probe: true))
        #expect(breaker.admit(at: clock.now.offset).0 == .rejected(state: .halfOpen, probeAt: .seconds(1)))
        #expect(breaker.record(.success, probe: true, at: clock.now.offset) == nil)
        // The first success does not free a probe: two successes are needed, and one is still out.
        #expect(breaker.admit(at: clock.now.offset).0 == .rejected(state: .halfOpen, probeAt: .seconds(1)))
        let closed = breaker.record(.success, probe: true, at: clock.now.offset)
        #expect(closed == CircuitBreaker.Transition(from: .halfOpen, to: .closed))
        #expect(breaker.admit(at: clock.now.offset).0 == .allowed(probe: false))
    }

    @Test("a failed probe opens the circuit again for another open duration")
    func halfOpenReopens() {
        let clock = TestClock()
        var breaker = CircuitBreaker(.consecutiveFailures(1, openFor: .seconds(2)))
        _ = breaker.record(.failure, probe: false, at: clock.now.offset)
        clock.advance(by: .seconds(3))
        _ = breaker.admit(at: clock.now.offset)
        let reopened = breaker.record(.failure, probe: true, at: clock.now.offset)
        #expect(reopened == CircuitBreaker.Transition(from: .halfOpen, to: .open, probeAt: .seconds(5)))
        #expect(breaker.admit(at: clock.now.offset).0 == .rejected(state: .open, probeAt: .seconds(5)))
    }

    @Test("a cancelled probe frees its place for another probe and changes nothing")
    func cancelledProbe() {
        let clock = TestClock()
        var breaker = CircuitBreaker(.consecutiveFailures(1, openFor: .seconds(1)))
        _ = breaker.record(.failure, probe: false, at: clock.now.offset)
        clock.advance(by: .seconds(1))
        #expect(breaker.admit(at: clock.now.offset).0 == .allowed(probe: true))
        #expect(breaker.record(.neutral, probe: true, at: clock.now.offset) == nil)
        #expect(breaker.state(at: clock.now.offset) == .halfOpen)
        #expect(breaker.admit(at: clock.now.offset).0 == .allowed(probe: true))
    }

    @Test("outcomes of attempts admitted before the circuit opened change nothing while it is open")
    func lateOutcomes() {
        let clock = TestClock()
        var breaker = CircuitBreaker(.consecutiveFailures(1, openFor: .seconds(1)))
        _ = breaker.admit(at: clock.now.offset)
        _ = breaker.admit(at: clock.now.offset)
        _ = breaker.record(.failure, probe: false, at: clock.now.offset)
        #expect(breaker.record(.success, probe: false, at: clock.now.offset) == nil)
        #expect(breaker.state(at: clock.now.offset) == .open)
        clock.advance(by: .seconds(1))
        _ = breaker.admit(at: clock.now.offset)
        // A non-probe outcome arriving while half-open says nothing about the probe.
        #expect(breaker.record(.success, probe: false, at: clock.now.offset) == nil)
        #expect(breaker.state(at: clock.now.offset) == .halfOpen)
    }

    @Test("a failure ratio opens only once the window holds the minimum calls")
    func ratio() {
        let clock = TestClock()
        var breaker = CircuitBreaker(.failureRatio(0.5, minimumCalls: 4, window: .seconds(10)))
        #expect(breaker.record(.failure, probe: false, at: clock.now.offset) == nil)
        #expect(breaker.record(.failure, probe: false, at: clock.now.offset) == nil)
        #expect(breaker.record(.success, probe: false, at: clock.now.offset) == nil)
        // 3 of 4 failed, and the window holds 4.
        let opened = breaker.record(.failure, probe: false, at: clock.now.offset)
        #expect(opened?.to == .open)
    }

    @Test("a failure ratio forgets the calls that left the window")
    func ratioWindowEdge() {
        let clock = TestClock()
        var breaker = CircuitBreaker(.failureRatio(0.5, minimumCalls: 4, window: .seconds(10)))
        for _ in 0..<3 { _ = breaker.record(.failure, probe: false, at: clock.now.offset) }
        clock.advance(by: .seconds(10))
        // The three failures left: one failure among one call is below the minimum.
        #expect(breaker.record(.failure, probe: false, at: clock.now.offset) == nil)
        #expect(breaker.state(at: clock.now.offset) == .closed)
        for _ in 0..<3 { _ = breaker.record(.success, probe: false, at: clock.now.offset) }
        #expect(breaker.state(at: clock.now.offset) == .closed)  // 1 of 4 failed
    }

    @Test("what counts as a failure is configurable")
    func classification() {
        let error503 = ServerAPIError.httpStatus(503)
        let error404 = ServerAPIError.httpStatus(404)
        #expect(FailureClassification.default.isFailure(error503))
        #expect(!FailureClassification.default.isFailure(error404))
        #expect(FailureClassification.default.isFailure(ServerAPIError(.timedOut, "t")))
        #expect(!FailureClassification.default.isFailure(ServerAPIError.cancelled()))
        #expect(!FailureClassification.connectionFailures.isFailure(error503))
        #expect(!FailureClassification.connectionFailures.isFailure(status: 500))
        let custom = FailureClassification(kinds: [], statuses: [429])
        #expect(custom.isFailure(status: 429) && !custom.isFailure(status: 500))
    }
}
