import Testing

@testable import ServerAPIKit

@Suite("Backoff: the one rule for waits before trying again")
struct BackoffTests {
    @Test("the wait grows by the multiplier at each step and stops at the maximum")
    func growsAndCaps() {
        let backoff = Backoff(initial: .milliseconds(100), multiplier: 3, maximum: .seconds(1))
        #expect(backoff.nominal(afterSteps: 0) == .milliseconds(100))
        #expect(backoff.nominal(afterSteps: 1) == .milliseconds(300))
        #expect(backoff.nominal(afterSteps: 2) == .milliseconds(900))
        #expect(backoff.nominal(afterSteps: 3) == .seconds(1))
        // Before the first step (an event source's first failure) is the initial wait.
        #expect(backoff.nominal(afterSteps: -1) == .milliseconds(100))
    }

    @Test("a step count or multiplier that overflows waits the maximum, never traps")
    func overflow() {
        let backoff = Backoff(initial: .seconds(1), multiplier: 1e300, maximum: .seconds(30), jitter: 1)
        #expect(backoff.nominal(afterSteps: 10_000) == .seconds(30))
        #expect(backoff.delay(afterSteps: Int.max, random: 1) == .seconds(60))
        let notANumber = Backoff(initial: .seconds(1), multiplier: .nan, maximum: .seconds(5))
        #expect(notANumber.nominal(afterSteps: 2) == .seconds(5))
    }

    @Test("jitter spreads the wait evenly on both sides; random outside 0...1 is clamped")
    func jitter() {
        let backoff = Backoff(initial: .seconds(2), multiplier: 2, maximum: .seconds(60), jitter: 0.25)
        #expect(backoff.delay(afterSteps: 0, random: 0) == .milliseconds(1500))
        #expect(backoff.delay(afterSteps: 0, random: 0.5) == .seconds(2))
        #expect(backoff.delay(afterSteps: 0, random: 1) == .milliseconds(2500))
        #expect(backoff.delay(afterSteps: 0, random: 7) == .milliseconds(2500))
        #expect(backoff.delay(afterSteps: 0, random: -3) == .milliseconds(1500))
        let none = Backoff(initial: .seconds(2), multiplier: 2, maximum: .seconds(60))
        #expect(none.delay(afterSteps: 1, random: 0) == .seconds(4))
    }

    @Test("retries, event sources and WebSockets wait by the same rule")
    func sharedByTheThree() {
        let retry = RetryPolicy(baseDelay: .milliseconds(100), multiplier: 2, maxDelay: .seconds(1), jitter: 0.2)
        let reconnection = WebSocket.Reconnection(
            retry: .milliseconds(100), maximumRetry: .seconds(1), backoffMultiplier: 2, jitter: 0.2)
        for step in 0..<6 {
            for random in [0, 0.3, 1.0] {
                #expect(
                    retry.delay(forRetry: step + 1, random: random)
                        == retry.backoff.delay(afterSteps: step, random: random))
                #expect(
                    reconnection.delay(afterFailures: step, random: random)
                        == retry.delay(forRetry: step + 1, random: random))
            }
        }
    }
}
