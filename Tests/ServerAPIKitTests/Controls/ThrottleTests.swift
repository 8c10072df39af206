import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Minimum interval", .timeLimit(.minutes(1)))
struct ThrottleTests {
    @Test("the same call sent again within its interval fails with throttled and is not sent")
    func failsWithinInterval() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/feed", .json(#"{"n":1}"#))
        let clock = TestClock()
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let feed = ServerAPI.test("/feed").query("page", "1").minimumInterval(.seconds(2))

        _ = try await manager.send(feed)
        clock.advance(by: .milliseconds(1999))
        let error = await expectError { try await manager.send(feed) }
        #expect(error?.kind == .throttled)
        #expect(error?.requestID == feed.id && error?.url?.path == "/feed")
        #expect(error?.metrics?.attempts == 0)
        #expect(mock.requestCount == 1)

        clock.advance(by: .milliseconds(1))
        _ = try await manager.send(feed)
        #expect(mock.requestCount == 2)
    }

    @Test("returnPrevious answers with the previous result without sending")
    func returnsPrevious() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/feed", .json(#"{"n":1}"#), .json(#"{"n":2}"#))
        let clock = TestClock()
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let feed = ServerAPI.test("/feed").minimumInterval(.seconds(2), onThrottle: .returnPrevious)

        #expect(try await manager.send(feed).json?["n"] == .int(1))
        let again = feed.id(.next())
        let replay = try await manager.send(again.format(.string))
        #expect(replay.string == #"{"n":1}"#)  // formatted for this call
        #expect(replay.requestID == again.id)
        #expect(mock.requestCount == 1)

        clock.advance(by: .seconds(2))
        #expect(try await manager.send(feed).json?["n"] == .int(2))
        #expect(mock.requestCount == 2)
    }

    @Test("returnPrevious with no result to reuse (the previous call is still running) fails with throttled")
    func nothingToReturn() async throws {
        let clock = TestClock()
        let transportClock = TestClock()
        let entered = EventCounter()
        let mock = gatedMock(transportClock, entered: entered)
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let feed = ServerAPI.test("/feed").minimumInterval(.seconds(2), onThrottle: .returnPrevious)
        let first = Task { try await manager.send(feed) }
        await entered.wait()
        let error = await expectError { try await manager.send(feed) }
        #expect(error?.kind == .throttled)
        #expect(error?.message.contains("no result to reuse") == true)
        await transportClock.waitForSleepers(1)
        transportClock.advance(by: .seconds(1))
        _ = try await first.value
        #expect(mock.requestCount == 1)
    }

    @Test("a failed call leaves nothing to reuse")
    func failureNotReused() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/feed", .json(#"{"n":1}"#), .status(500), .json(#"{"n":3}"#))
        let clock = TestClock()
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let feed = ServerAPI.test("/feed").minimumInterval(.seconds(2), onThrottle: .returnPrevious)
        _ = try await manager.send(feed)
        clock.advance(by: .seconds(3))
        let failed = await expectError { try await manager.send(feed) }
        #expect(failed?.kind == .httpStatus && failed?.status == 500)
        // The 500 was the last send: its window has no result, so the first result is not replayed.
        #expect(await expectError { try await manager.send(feed) }?.kind == .throttled)
    }

    @Test("other parameters, bodies or credentials are other calls")
    func differentCallsAreNotThrottled() async throws {
        let mock = MockTransport()
        mock.stub(handler: { _ in .json("{}") })
        let clock = TestClock()
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let base = ServerAPI.test("/feed").minimumInterval(.seconds(10))
        let calls = [
            base, base.query("page", "2"), base.setHeader("Authorization", "Bearer other"),
            base.setHeader("Cookie", "sid=2"), base.method(.post).body(.text("a")), base.method(.post).body(.text("b")),
        ]
        for call in calls { _ = try await manager.send(call) }
        #expect(mock.requestCount == calls.count)
        for call in calls { #expect(await expectError { try await manager.send(call) }?.kind == .throttled) }
        #expect(mock.requestCount == calls.count)
    }

    @Test("of 50 identical calls racing, exactly one is sent")
    func racingCalls() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/feed", .json("{}"))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: TestClock()))
        let feed = ServerAPI.test("/feed").minimumInterval(.seconds(1))
        let outcomes = Outcomes()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<50 { group.addTask { await outcomes.run(index) { try await manager.send(feed) } } }
        }
        let results = outcomes.all.values.flatMap { $0 }
        #expect(results.count == 50)
        #expect(results.filter { $0.value != nil }.count == 1)
        #expect(results.filter { $0.error?.kind == .throttled }.count == 49)
        #expect(mock.requestCount == 1)
    }

    @Test("joining an identical coalesced call in flight is not throttled: nothing is sent")
    func coalescedJoinIsNotThrottled() async throws {
        let transportClock = TestClock()
        let entered = EventCounter()
        let mock = gatedMock(transportClock, entered: entered)
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: TestClock()))
        let feed = ServerAPI.test("/feed").minimumInterval(.seconds(5)).coalesced()
        let first = Task { try await manager.send(feed) }
        await entered.wait()
        let second = Task { try await manager.send(feed.id(.next())) }
        await manager.controls.flights.waitForJoins(2)
        await transportClock.waitForSleepers(1)
        transportClock.advance(by: .seconds(1))
        #expect(try await first.value.json?["ok"] == .bool(true))
        #expect(try await second.value.json?["ok"] == .bool(true))
        #expect(mock.requestCount == 1)
        #expect(await expectError { try await manager.send(feed) }?.kind == .throttled)
    }
}
