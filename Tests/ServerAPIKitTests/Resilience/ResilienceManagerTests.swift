import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@_spi(Backend) @testable import ServerAPIKit

/// Records every circuit-breaker state change it is told about.
final class CircuitLog: ServerAPIPlugin {
    private let changes = Locked<[CircuitStateChange]>([])
    var all: [CircuitStateChange] { changes.withLock { $0 } }
    var steps: [String] { all.map { "\($0.from)->\($0.to)" } }
    func circuitStateDidChange(_ change: CircuitStateChange) { changes.withLock { $0.append(change) } }
}

/// A mock whose first `blocking` requests wait on `clock` (one second, honouring cancellation) and
/// whose later ones answer at once.
func firstBlocks(
    _ clock: TestClock, blocking: Int = 1, entered: EventCounter, cancelled: EventCounter? = nil
) -> MockTransport {
    let mock = MockTransport()
    let seen = Locked(0)
    mock.stub(handler: { request in
        let number = seen.withLock { count -> Int in
            count += 1
            return count
        }
        entered.fire()
        guard number <= blocking else { return .json(#"{"leg":\#(number)}"#) }
        do {
            try await clock.sleep(for: .seconds(1))
        } catch {
            cancelled?.fire()
            throw error
        }
        return .json(#"{"leg":\#(number)}"#)
    })
    return mock
}

extension ServerAPIManager {
    /// A manager over `transport` with these resilience policies, on a test clock.
    static func resilient(
        _ policies: ResiliencePolicies, transport: MockTransport, clock: TestClock = TestClock(),
        plugins: [any ServerAPIPlugin] = []
    ) -> ServerAPIManager {
        var configuration = Configuration(clock: clock)
        configuration.resilience = policies
        return ServerAPIManager(transport: transport, plugins: plugins, configuration: configuration)
    }
}

@Suite("Resilience in the manager", .timeLimit(.minutes(1)))
struct ResilienceManagerTests {
    static let origin = ServerOrigin(scheme: "https", host: "api.test")

    // MARK: Retry budget

    @Test("a retry the budget refuses ends the call with its last error, and the metrics say so")
    func budgetRefuses() async throws {
        let mock = MockTransport()
        mock.stub(handler: { _ in .status(503) })
        let budget = RetryBudget(window: .seconds(10), percentCanRetry: 0.5, minRetriesPerSecond: 0)
        let manager = ServerAPIManager.resilient(ResiliencePolicies(retryBudget: budget), transport: mock)
        let api = ServerAPI.test("/busy").retry(3, policy: .immediate)

        let first = await expectError { try await manager.send(api) }
        #expect(first?.kind == .httpStatus && first?.status == 503)
        #expect(first?.metrics?.attempts == 1)
        #expect(first?.metrics?.resilience.retryRefusedByBudget == true)
        #expect(first?.metrics?.resilience.origin == Self.origin)
        // Two calls in the window earn one retry.
        let second = await expectError { try await manager.send(api.id(.next())) }
        #expect(second?.kind == .httpStatus)
        #expect(second?.metrics?.attempts == 2)
        #expect(second?.metrics?.resilience.retryRefusedByBudget == true)
        #expect(mock.requestCount == 3)
    }

    @Test("a call can opt out of the manager's budget, and retries as its retry count says")
    func budgetOverride() async throws {
        let mock = MockTransport()
        mock.stub(handler: { _ in .status(503) })
        let budget = RetryBudget(percentCanRetry: 0, minRetriesPerSecond: 0)
        let manager = ServerAPIManager.resilient(ResiliencePolicies(retryBudget: budget), transport: mock)
        let error = await expectError {
            try await manager.send(ServerAPI.test().retry(3, policy: .immediate).retryBudget(nil))
        }
        #expect(error?.kind == .httpStatus)
        #expect(error?.metrics?.attempts == 4)
        #expect(error?.metrics?.resilience.retryRefusedByBudget == false)
    }

    // MARK: Circuit breaker

    @Test("an open circuit fails calls at once with circuitOpen, naming the origin and the next probe")
    func breakerOpens() async throws {
        let clock = TestClock()
        let healthy = Locked(false)
        let mock = MockTransport()
        mock.stub(handler: { _ in healthy.withLock { $0 } ? .json(#"{"ok":true}"#) : .status(503) })
        let log = CircuitLog()
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(circuitBreaker: .consecutiveFailures(2, openFor: .seconds(5))), transport: mock,
            clock: clock, plugins: [log])

        for _ in 0..<2 {
            let error = await expectError { try await manager.send(ServerAPI.test()) }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 503)
        }
        #expect(log.steps == ["closed->open"])
        #expect(log.all.first?.probeAfter == .seconds(5))

        clock.advance(by: .seconds(2))
        let rejected = await expectError { try await manager.send(ServerAPI.test()) }
        #expect(rejected?.kind == .circuitOpen)
        #expect(rejected?.circuitOpen?.origin == Self.origin)
        #expect(rejected?.circuitOpen?.state == .open)
        #expect(rejected?.circuitOpen?.probeAfter == .seconds(3))
        #expect(rejected?.message.contains("https://api.test:443") == true)
        #expect(rejected?.metrics?.resilience.circuitState == .open)
        #expect(mock.requestCount == 2)

        // Upstream back: the probe after the open duration closes the circuit.
        healthy.withLock { $0 = true }
        clock.advance(by: .seconds(3))
        let probe = try await manager.send(ServerAPI.test())
        #expect(probe.metrics.resilience.circuitState == .halfOpen)
        #expect(log.steps == ["closed->open", "open->half-open", "half-open->closed"])
        let after = try await manager.send(ServerAPI.test())
        #expect(after.metrics.resilience.circuitState == .closed)
        #expect(mock.requestCount == 4)
    }

    @Test("a failed probe opens the circuit again; a call without a breaker still goes through")
    func probeFails() async throws {
        let clock = TestClock()
        let mock = MockTransport()
        mock.stub(handler: { _ in .cannotConnect() })
        let log = CircuitLog()
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(circuitBreaker: .consecutiveFailures(1, openFor: .seconds(1))), transport: mock,
            clock: clock, plugins: [log])
        #expect(await expectError { try await manager.send(ServerAPI.test()) }?.kind == .cannotConnect)
        clock.advance(by: .seconds(1))
        #expect(await expectError { try await manager.send(ServerAPI.test()) }?.kind == .cannotConnect)
        #expect(log.steps == ["closed->open", "open->half-open", "half-open->open"])
        #expect(await expectError { try await manager.send(ServerAPI.test()) }?.kind == .circuitOpen)
        #expect(
            await expectError { try await manager.send(ServerAPI.test().circuitBreaker(nil)) }?.kind == .cannotConnect)
        #expect(mock.requestCount == 3)
    }

    @Test("statuses the classification does not list keep the circuit closed")
    func notFailures() async throws {
        let mock = MockTransport()
        mock.stub(handler: { _ in .status(404) })
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(circuitBreaker: .consecutiveFailures(1)), transport: mock)
        for _ in 0..<3 {
            let error = await expectError { try await manager.send(ServerAPI.test()) }
            #expect(error?.kind == .httpStatus && error?.status == 404)
        }
        #expect(mock.requestCount == 3)
    }

    // MARK: Hedging

    @Test("a slow call is hedged after the delay; the first answer wins and the other is cancelled")
    func hedgeWins() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let cancelled = EventCounter()
        let mock = firstBlocks(transportClock, entered: entered, cancelled: cancelled)
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(hedging: .after(.milliseconds(100), maxShare: 1)), transport: mock, clock: clock)
        let call = Task { try await manager.send(ServerAPI.test("/item")) }
        await entered.wait()
        await clock.waitForSleepers(1)
        #expect(clock.requestedSleeps == [.milliseconds(100)])
        clock.advance(by: .milliseconds(100))
        let result = try await call.value
        #expect(result.json?["leg"] == .int(2))
        #expect(result.metrics.resilience.hedged && result.metrics.resilience.hedgeWon)
        await cancelled.wait()
        #expect(mock.requestCount == 2)
    }

    @Test("an answer before the delay sends no hedge")
    func noHedgeWhenFast() async throws {
        let clock = TestClock()
        let mock = MockTransport()
        mock.stub(.get, "/item", .json(#"{"ok":true}"#))
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(hedging: .after(.milliseconds(100), maxShare: 1)), transport: mock, clock: clock)
        let result = try await manager.send(ServerAPI.test("/item"))
        #expect(!result.metrics.resilience.hedged)
        #expect(mock.requestCount == 1)
    }

    @Test("the hedge share caps hedges: a refused hedge leaves the first attempt alone")
    func hedgeShare() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let mock = firstBlocks(transportClock, entered: entered)
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(hedging: .after(.milliseconds(100), maxShare: 0.5)), transport: mock, clock: clock)
        let call = Task { try await manager.send(ServerAPI.test("/item")) }
        await entered.wait()
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(100))
        // One call allows half a hedge: none is sent, and the first attempt answers when it is released.
        await transportClock.waitForSleepers(1)
        transportClock.advance(by: .seconds(1))
        let result = try await call.value
        #expect(!result.metrics.resilience.hedged)
        #expect(mock.requestCount == 1)
    }

    @Test("non-idempotent calls and downloads are never hedged")
    func notHedgeable() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let mock = firstBlocks(transportClock, entered: entered)
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(hedging: .after(.milliseconds(100), maxShare: 1)), transport: mock, clock: clock)
        let call = Task { try await manager.send(ServerAPI.test("/orders").method(.post).body(.json(["n": 1]))) }
        await entered.wait()
        await transportClock.waitForSleepers(1)
        #expect(clock.sleeperCount == 0)  // no hedge timer
        transportClock.advance(by: .seconds(1))
        let result = try await call.value
        #expect(!result.metrics.resilience.hedged)
        #expect(mock.requestCount == 1)
    }

    @Test("cancelling a call while its hedge is out cancels both attempts")
    func cancelWhileHedged() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let cancelled = EventCounter()
        let mock = firstBlocks(transportClock, blocking: 2, entered: entered, cancelled: cancelled)
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(hedging: .after(.milliseconds(100), maxShare: 1)), transport: mock, clock: clock)
        let api = ServerAPI.test("/item")
        let call = Task { try await manager.send(api) }
        await entered.wait()
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(100))
        await entered.wait(for: 2)
        await transportClock.waitForSleepers(2)
        manager.cancel(id: api.id)
        await cancelled.wait(for: 2)
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
        #expect(mock.requestCount == 2)
    }

    @Test("cancelling a call before its hedge goes out cancels the attempt and the timer")
    func cancelBeforeHedge() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let cancelled = EventCounter()
        let mock = firstBlocks(transportClock, entered: entered, cancelled: cancelled)
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(hedging: .after(.milliseconds(100), maxShare: 1)), transport: mock, clock: clock)
        let call = Task { try await manager.send(ServerAPI.test("/item")) }
        await entered.wait()
        await clock.waitForSleepers(1)
        call.cancel()
        await cancelled.wait()
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
        #expect(clock.sleeperCount == 0)
        #expect(mock.requestCount == 1)
    }

    // MARK: Concurrency limit

    @Test("past a fixed limit calls queue; a full queue and a wait that runs out fail with concurrencyLimited")
    func fixedLimit() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let mock = firstBlocks(transportClock, entered: entered)
        let limit = ConcurrencyLimitPolicy.fixed(1, maxQueue: 1, queueTimeout: .seconds(1))
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(concurrencyLimit: limit), transport: mock, clock: clock)

        let first = Task { try await manager.send(ServerAPI.test("/a")) }
        await entered.wait()
        let queued = Task { try await manager.send(ServerAPI.test("/b")) }
        await clock.waitForSleepers(1)  // the queue timer of the second call

        let full = await expectError { try await manager.send(ServerAPI.test("/c")) }
        #expect(full?.kind == .concurrencyLimited)
        #expect(full?.concurrencyLimited?.reason == .queueFull)
        #expect(full?.concurrencyLimited?.origin == Self.origin)

        clock.advance(by: .seconds(1))
        let timedOut = await expectError { try await queued.value }
        #expect(timedOut?.kind == .concurrencyLimited)
        #expect(timedOut?.concurrencyLimited?.reason == .queueTimeout)

        await transportClock.waitForSleepers(1)
        transportClock.advance(by: .seconds(1))
        _ = try await first.value
        #expect(mock.requestCount == 1)
        // The slot is free again.
        _ = try await manager.send(ServerAPI.test("/d"))
        #expect(mock.requestCount == 2)
    }

    @Test("a queued call gets the slot its predecessor frees, and its metrics show the wait")
    func waitsForSlot() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let mock = firstBlocks(transportClock, entered: entered)
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(concurrencyLimit: .fixed(1, maxQueue: 4, queueTimeout: .seconds(5))), transport: mock,
            clock: clock)
        let first = Task { try await manager.send(ServerAPI.test("/a")) }
        await entered.wait()
        let queued = Task { try await manager.send(ServerAPI.test("/b")) }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(300))
        await transportClock.waitForSleepers(1)
        transportClock.advance(by: .seconds(1))
        let firstResult = try await first.value
        #expect(!firstResult.metrics.resilience.waitedForSlot)
        #expect(firstResult.metrics.resilience.concurrencyLimit == 1)
        let result = try await queued.value
        #expect(result.metrics.resilience.waitedForSlot)
        #expect(result.metrics.resilience.slotWait == .milliseconds(300))
        #expect(mock.requestCount == 2)
    }

    @Test("a call cancelled while queued is never sent and holds no slot")
    func cancelWhileQueued() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let mock = firstBlocks(transportClock, entered: entered)
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(concurrencyLimit: .fixed(1, maxQueue: 4, queueTimeout: .seconds(5))), transport: mock,
            clock: clock)
        let first = Task { try await manager.send(ServerAPI.test("/a")) }
        await entered.wait()
        let waiting = ServerAPI.test("/b")
        let queued = Task { try await manager.send(waiting) }
        await clock.waitForSleepers(1)
        manager.cancel(id: waiting.id)
        let error = await expectError { try await queued.value }
        #expect(error?.kind == .cancelled)
        #expect(clock.sleeperCount == 0)  // its queue timer stopped

        await transportClock.waitForSleepers(1)
        transportClock.advance(by: .seconds(1))
        _ = try await first.value
        _ = try await manager.send(ServerAPI.test("/c"))
        #expect(mock.requests.map(\.url.path) == ["/a", "/c"])
    }

    @Test("a call's own limit overrides the manager's")
    func limitOverride() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let mock = firstBlocks(transportClock, entered: entered)
        let manager = ServerAPIManager.resilient(
            ResiliencePolicies(concurrencyLimit: .fixed(1, maxQueue: 0)), transport: mock, clock: clock)
        let first = Task { try await manager.send(ServerAPI.test("/a")) }
        await entered.wait()
        #expect(await expectError { try await manager.send(ServerAPI.test("/b")) }?.kind == .concurrencyLimited)
        _ = try await manager.send(ServerAPI.test("/c").concurrencyLimit(nil))
        await transportClock.waitForSleepers(1)
        transportClock.advance(by: .seconds(1))
        _ = try await first.value
    }

    @Test("policies for one origin do not apply to another")
    func perOrigin() async throws {
        let mock = MockTransport()
        mock.stub(handler: { _ in .status(503) })
        var policies = ResiliencePolicies.none
        policies.origins[Self.origin] = ResiliencePolicies(circuitBreaker: .consecutiveFailures(1))
        let manager = ServerAPIManager.resilient(policies, transport: mock)
        let opening = await expectError { try await manager.send(ServerAPI.test()) }
        #expect(opening?.kind == .httpStatus && opening?.status == 503)
        #expect(await expectError { try await manager.send(ServerAPI.test()) }?.kind == .circuitOpen)
        let other = ServerAPI(host: "https://other.test", path: "/x")
        for _ in 0..<2 {
            let error = await expectError { try await manager.send(other) }
            #expect(error?.kind == .httpStatus && error?.status == 503)
        }
    }
}
