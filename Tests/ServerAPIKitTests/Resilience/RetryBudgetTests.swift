import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Retry budget")
struct RetryBudgetTests {
    @Test("Finagle's defaults: 20 % over 10 s plus 10 retries a second")
    func defaults() {
        let budget = RetryBudget.default
        #expect(budget.window == .seconds(10))
        #expect(budget.percentCanRetry == 0.2)
        #expect(budget.minRetriesPerSecond == 10)
        #expect(budget.allowance(calls: 0) == 100)
        #expect(budget.allowance(calls: 1000) == 300)
    }

    @Test("retries stay within the share of the calls in the window")
    func share() {
        let clock = TestClock()
        var state = RetryBudgetState(RetryBudget(percentCanRetry: 0.2, minRetriesPerSecond: 0))
        for _ in 0..<10 { state.deposit(at: clock.now.offset) }
        #expect(state.withdraw(at: clock.now.offset) == true)
        #expect(state.withdraw(at: clock.now.offset) == true)
        #expect(state.withdraw(at: clock.now.offset) == false)
        #expect(state.usage(at: clock.now.offset) == (calls: 10, retries: 2))
        // Five more calls earn one more retry.
        for _ in 0..<5 { state.deposit(at: clock.now.offset) }
        #expect(state.withdraw(at: clock.now.offset) == true)
        #expect(state.withdraw(at: clock.now.offset) == false)
    }

    @Test("the floor allows retries with no calls at all, and no more")
    func floor() {
        let clock = TestClock()
        var state = RetryBudgetState(RetryBudget(window: .seconds(10), percentCanRetry: 0.2, minRetriesPerSecond: 1))
        for _ in 0..<10 { #expect(state.withdraw(at: clock.now.offset) == true) }
        #expect(state.withdraw(at: clock.now.offset) == false)
    }

    @Test("calls and retries leave the window at its edge")
    func windowEdges() {
        let clock = TestClock()
        var state = RetryBudgetState(RetryBudget(window: .seconds(10), percentCanRetry: 0.5, minRetriesPerSecond: 0))
        state.deposit(at: clock.now.offset)
        state.deposit(at: clock.now.offset)
        #expect(state.withdraw(at: clock.now.offset) == true)
        #expect(state.withdraw(at: clock.now.offset) == false)

        clock.advance(by: .milliseconds(9999))
        #expect(state.usage(at: clock.now.offset) == (calls: 2, retries: 1))
        #expect(state.withdraw(at: clock.now.offset) == false)

        // At 10 s both the calls and the retry have left: nothing earned, nothing spent.
        clock.advance(by: .milliseconds(1))
        #expect(state.usage(at: clock.now.offset) == (calls: 0, retries: 0))
        #expect(state.withdraw(at: clock.now.offset) == false)
        state.deposit(at: clock.now.offset)
        state.deposit(at: clock.now.offset)
        #expect(state.withdraw(at: clock.now.offset) == true)
    }

    @Test("a retry spent in the window keeps counting after the calls that earned it left")
    func retriesOutliveCalls() {
        let clock = TestClock()
        var state = RetryBudgetState(RetryBudget(window: .seconds(10), percentCanRetry: 1, minRetriesPerSecond: 0))
        state.deposit(at: clock.now.offset)
        clock.advance(by: .seconds(5))
        state.deposit(at: clock.now.offset)
        #expect(state.withdraw(at: clock.now.offset) == true)
        #expect(state.withdraw(at: clock.now.offset) == true)
        clock.advance(by: .seconds(5))
        // The first call left; the two retries (spent at 5 s) and the second call remain.
        #expect(state.usage(at: clock.now.offset) == (calls: 1, retries: 2))
        state.deposit(at: clock.now.offset)
        #expect(state.withdraw(at: clock.now.offset) == false)
    }
}
