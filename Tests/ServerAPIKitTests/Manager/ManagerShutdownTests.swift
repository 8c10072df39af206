import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

/// `ServerAPIManager.shutdown(gracePeriod:)` on a mock whose delays, and the grace period, run on a `TestClock`.
@Suite("Manager shutdown")
struct ManagerShutdownTests {
    /// A manager and its mock, both on `clock`, whose calls to `/x` answer after `delay`.
    private static func manager(clock: TestClock, delay: Duration) -> (ServerAPIManager, MockTransport) {
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/x", .json(#"{"a":1}"#, delay: delay))
        return (ServerAPIManager(transport: mock, configuration: .init(clock: clock)), mock)
    }

    @Test("a call in flight finishes in the grace period, and the shutdown returns once it has")
    func callFinishesInGrace() async throws {
        let clock = TestClock()
        let (manager, _) = Self.manager(clock: clock, delay: .seconds(1))
        let call = Task { try await manager.send(ServerAPI.test()) }
        await clock.waitForSleepers(1)
        let shutdown = Task { await manager.shutdown(gracePeriod: .seconds(10)) }
        // The mock's delay and the grace period.
        await clock.waitForSleepers(2)
        #expect(manager.isShuttingDown)
        clock.advance(by: .seconds(1))
        #expect(try await call.value.json?["a"] == .int(1))
        await shutdown.value
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a call slower than the grace period is cancelled when it ends, saying so")
    func slowerCallIsCancelled() async throws {
        let clock = TestClock()
        let (manager, _) = Self.manager(clock: clock, delay: .seconds(60))
        let api = ServerAPI.test().tag("slow")
        let call = Task { try await manager.send(api) }
        await clock.waitForSleepers(1)
        let shutdown = Task { await manager.shutdown(gracePeriod: .seconds(5)) }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(5))
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
        #expect(error?.requestID == api.id)
        #expect(error?.message == "the call was cancelled: the manager shut down, and its grace period ended first")
        await shutdown.value
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a call after shutdown fails at once with shuttingDown and never reaches the transport")
    func refusedAfterShutdown() async throws {
        let clock = TestClock()
        let (manager, mock) = Self.manager(clock: clock, delay: .zero)
        await manager.shutdown(gracePeriod: .seconds(5))
        let api = ServerAPI.test()
        let error = await expectError { try await manager.send(api) }
        #expect(error?.kind == .shuttingDown)
        #expect(error?.requestID == api.id)
        let streamed = await expectError { try await manager.stream(api) }
        #expect(streamed?.kind == .shuttingDown)
        let batch = await expectError { try await manager.send(BatchRequest([api])) }
        #expect(batch?.kind == .shuttingDown)
        #expect(mock.requestCount == 0)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("cancelling the task that shuts down ends the grace period at once; it still returns after the calls end")
    func cancelledShutdown() async throws {
        let clock = TestClock()
        let (manager, _) = Self.manager(clock: clock, delay: .seconds(60))
        let call = Task { try await manager.send(ServerAPI.test()) }
        await clock.waitForSleepers(1)
        let shutdown = Task { await manager.shutdown(gracePeriod: .seconds(3600)) }
        await clock.waitForSleepers(2)
        shutdown.cancel()
        await shutdown.value
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a call cancelled by the registry during the grace period ends it as soon as it has ended")
    func cancelledDuringGrace() async throws {
        let clock = TestClock()
        let (manager, _) = Self.manager(clock: clock, delay: .seconds(60))
        let call = Task { try await manager.send(ServerAPI.test().tag("t")) }
        await clock.waitForSleepers(1)
        let shutdown = Task { await manager.shutdown(gracePeriod: .seconds(3600)) }
        await clock.waitForSleepers(2)
        #expect(manager.cancel(tag: "t").count == 1)
        await shutdown.value
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
    }

    @Test("an open WebSocket is closed with 1001 at shutdown, its messages ending cleanly")
    func webSocketGoesAway() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.echo(1)]))
        let manager = ServerAPIManager(transport: mock)
        let socket = try await manager.webSocket(ServerAPI.test("/chat"))
        try await socket.send(.text("a"))
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("a"))
        await manager.shutdown(gracePeriod: .seconds(60))
        #expect(try await messages.next() == nil)
        // The mock server echoes the code of the close frame it received.
        #expect(socket.closeCode == .goingAway)
        #expect(manager.inFlight.isEmpty)
        let refused = await expectError { try await manager.webSocket(ServerAPI.test("/chat")) }
        #expect(refused?.kind == .shuttingDown)
    }

    @Test("an event source waiting to reconnect stops waiting at shutdown")
    func eventSourceStopsWaiting() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/events", .events([ServerSentEvent(data: "one")]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let source = manager.eventSource(ServerAPI.test("/events"))
        let reader = Task {
            var events: [String] = []
            for try await event in source { events.append(event.data) }
            return events
        }
        // The stream ended; the source waits (registered) to reconnect.
        await clock.waitForSleepers(1)
        await manager.shutdown(gracePeriod: .seconds(3600))
        let error = await expectError { try await reader.value }
        #expect(error?.kind == .cancelled || error?.kind == .shuttingDown, "\(String(describing: error))")
        #expect(manager.inFlight.isEmpty)
    }
}
