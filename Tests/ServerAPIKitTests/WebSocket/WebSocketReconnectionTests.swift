import Foundation
import ServerAPITestSupport
@_spi(Transport) import ServerAPITesting
import Testing

@_spi(Backend) @_spi(Transport) @testable import ServerAPIKit

@Suite("WebSocket reconnection: after a drop, with backoff, on the manager's clock")
struct WebSocketReconnectionTests {
    private static let live = ServerAPI(host: "ws://api.test", path: "/live").tag("live")

    /// How long a test waits for what the socket does between the clock's steps, in real time: generous, as the
    /// whole suite's hundreds of tests share two cores' pool with these hops (never a speed assertion).
    private static let patience = TestTiming.bound(.seconds(60))

    /// Exact waits: the tests drive the clock by them.
    private static func policy(
        retry: Duration = .seconds(1), maximumReconnects: Int? = 10,
        onReconnect: (@Sendable (WebSocket) async throws -> Void)? = nil
    ) -> WebSocket.Reconnection {
        WebSocket.Reconnection(
            retry: retry, maximumRetry: .seconds(30), backoffMultiplier: 2, jitter: 0,
            maximumReconnects: maximumReconnects, onReconnect: onReconnect)
    }

    /// Waits until the socket or the manager asked the clock for its `count`-th sleep of `duration`, then advances
    /// the clock by it.
    private static func advance(_ clock: TestClock, past duration: Duration, count: Int = 1) async throws {
        try await poll("a wait of \(duration) (number \(count))", within: Self.patience) {
            clock.requestedSleeps.filter { $0 == duration }.count >= count
        }
        await clock.waitForSleepers(1)
        clock.advance(by: duration)
    }

    private struct Completions: ServerAPIPlugin {
        let count: Locked<Int>
        func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
            count.withLock { $0 += 1 }
        }
    }

    @Test("a dropped connection is made again after the retry wait, and messages go on across connections")
    func reconnectsAfterDrop() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(
            .get, "/live", .webSocket([.send(.text("one")), .drop]),
            .webSocket([.send(.text("two")), .close(.normalClosure)]))
        let completions = Locked(0)
        let manager = ServerAPIManager(
            transport: mock, plugins: [Completions(count: completions)], configuration: .init(clock: clock))
        let socket = try await manager.webSocket(Self.live, reconnection: Self.policy(retry: .seconds(2)))
        let reader = Task { await socket.collectMessages() }
        try await Self.advance(clock, past: .seconds(2))
        let (messages, error) = await reader.value
        #expect(messages == [.text("one"), .text("two")])
        #expect(error == nil, "a close with 1000 ends the socket: the server is done")
        #expect(socket.reconnects == 1)
        #expect(mock.requestCount == 2)
        #expect(socket.closeCode == .normalClosure)
        try await poll("both connections' calls to end", within: Self.patience) { completions.withLock { $0 } == 2 }
        #expect(manager.inFlight.isEmpty)
    }

    @Test("without a reconnection policy a drop ends the socket")
    func noPolicy() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/live", .webSocket([.send(.text("one")), .drop]), .webSocket([.send(.text("two"))]))
        let socket = try await ServerAPIManager(transport: mock).webSocket(Self.live)
        let (messages, error) = await socket.collectMessages()
        #expect(messages == [.text("one")])
        #expect(error?.kind == .network)
        #expect(mock.requestCount == 1)
    }

    @Test("a close that asks to come back (1012) reconnects; the next close with 1000 does not")
    func serverRestart() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(
            .get, "/live", .webSocket([.close(.init(1012), reason: "restarting")]),
            .webSocket([.send(.text("back")), .close(.normalClosure)]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let socket = try await manager.webSocket(Self.live, reconnection: Self.policy())
        let reader = Task { await socket.collectMessages() }
        try await Self.advance(clock, past: .seconds(1))
        let (messages, error) = await reader.value
        #expect(messages == [.text("back")])
        #expect(error == nil)
        #expect(socket.reconnects == 1)
        try await poll("the client's close frames", within: Self.patience) { mock.webSocketClosesReceived.count == 2 }
        #expect(mock.webSocketClosesReceived == [WebSocketCloseCode(1012), .normalClosure])
    }

    @Test("failed handshakes wait longer each time, and the socket gives up after maximumReconnects of them")
    func backoffAndGiveUp() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/live", .webSocket([.drop]), .text("down for maintenance", status: 503))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let socket = try await manager.webSocket(Self.live, reconnection: Self.policy(maximumReconnects: 3))
        let reader = Task { await socket.collectMessages() }
        try await Self.advance(clock, past: .seconds(1))
        try await Self.advance(clock, past: .seconds(2))
        try await Self.advance(clock, past: .seconds(4))
        let (messages, error) = await reader.value
        #expect(messages.isEmpty)
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 503)
        #expect(mock.requestCount == 4, "the first connection, then three failed handshakes")
        #expect(socket.reconnects == 0)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a handshake refused with 401 on reconnecting ends the socket at once")
    func refusedForGood() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/live", .webSocket([.drop]), .text("log in again", status: 401))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let socket = try await manager.webSocket(Self.live, reconnection: Self.policy())
        let reader = Task { await socket.collectMessages() }
        try await Self.advance(clock, past: .seconds(1))
        let (_, error) = await reader.value
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 401)
        #expect(mock.requestCount == 2)
    }

    @Test("onReconnect's messages go out first, then the sends that waited for the new connection")
    func onReconnectFirst() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(
            .get, "/live", .webSocket([.drop]),
            .webSocket([
                .expect(.text("subscribe")), .expect(.text("queued")), .send(.text("ok")), .close(.normalClosure),
            ]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let heldBack = Locked<Int?>(nil)
        let socket = try await manager.webSocket(
            Self.live,
            reconnection: Self.policy { socket in
                heldBack.withLock { $0 = socket.waitingForConnection }
                try await socket.send(.text("subscribe"))
            })
        let reader = Task { await socket.collectMessages() }
        try await poll("the wait to reconnect", within: Self.patience) { clock.requestedSleeps.contains(.seconds(1)) }
        let queued = Task { try await socket.send(.text("queued")) }
        try await poll("the send to wait for the new connection", within: Self.patience) {
            socket.waitingForConnection == 1
        }
        try await Self.advance(clock, past: .seconds(1))
        try await queued.value
        let (messages, error) = await reader.value
        #expect(messages == [.text("ok")])
        #expect(error == nil)
        #expect(mock.webSocketMismatches.isEmpty)
        #expect(heldBack.withLock { $0 } == 1, "the waiting send was held back while the hook ran")
    }

    @Test("cancel by tag while waiting to reconnect ends the socket with cancelled and leaves nothing in flight")
    func cancelWhileWaiting() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/live", .webSocket([.send(.text("one")), .drop]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let socket = try await manager.webSocket(Self.live, reconnection: Self.policy(retry: .seconds(5)))
        let reader = Task { await socket.collectMessages() }
        try await poll("the wait to reconnect", within: Self.patience) { clock.requestedSleeps.contains(.seconds(5)) }
        #expect(manager.inFlight.map(\.tag) == ["live"], "the socket is in flight while it waits")
        let waitingSend = Task { await expectError { try await socket.send(.text("late")) } }
        try await poll("the send to wait", within: Self.patience) { socket.waitingForConnection == 1 }
        #expect(manager.cancel(tag: "live").count == 1)
        let (messages, error) = await reader.value
        #expect(messages == [.text("one")])
        #expect(error?.kind == .cancelled)
        #expect(await waitingSend.value?.kind == .cancelled)
        #expect(manager.inFlight.isEmpty)
        #expect(mock.requestCount == 1)
    }

    @Test("close() while waiting to reconnect ends the socket at once, without another handshake")
    func closeWhileWaiting() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/live", .webSocket([.drop]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let socket = try await manager.webSocket(Self.live, reconnection: Self.policy())
        let reader = Task { await socket.collectMessages() }
        try await poll("the wait to reconnect", within: Self.patience) { clock.requestedSleeps.contains(.seconds(1)) }
        await socket.close()
        let (_, error) = await reader.value
        #expect(error == nil)
        #expect(socket.isClosed)
        #expect(mock.requestCount == 1)
        try await poll("nothing in flight", within: Self.patience) { manager.inFlight.isEmpty }
    }

    @Test("a protocol violation is not reconnected: the server would send it again")
    func violationIsFinal() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/live", .webSocket([.sendFrame(WebSocketFrame(.text, payload: Data([0xFF])))]))
        let socket = try await ServerAPIManager(transport: mock).webSocket(Self.live, reconnection: Self.policy())
        let (_, error) = await socket.collectMessages()
        #expect(error?.message.contains("1007") == true)
        #expect(mock.requestCount == 1)
    }

    @Test("a connection the idle timeout finds silent is made again")
    func idleReconnects() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/live", .webSocket([]), .webSocket([.send(.text("fresh")), .close(.normalClosure)]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let socket = try await manager.webSocket(
            Self.live, configuration: .init(idleTimeout: .seconds(30)), reconnection: Self.policy())
        let reader = Task { await socket.collectMessages() }
        try await Self.advance(clock, past: .seconds(30))
        try await Self.advance(clock, past: .seconds(1))
        let (messages, error) = await reader.value
        #expect(messages == [.text("fresh")])
        #expect(error == nil)
        #expect(socket.reconnects == 1)
        #expect(mock.webSocketClosesReceived.first == .goingAway, "the silent connection was closed with 1001")
    }

    @Test("waits grow by the multiplier up to the cap, spread by the jitter")
    func delays() {
        let policy = WebSocket.Reconnection(
            retry: .seconds(1), maximumRetry: .seconds(10), backoffMultiplier: 3, jitter: 0.25)
        #expect(policy.delay(afterFailures: 0, random: 0.5) == .seconds(1))
        #expect(policy.delay(afterFailures: 1, random: 0.5) == .seconds(3))
        #expect(policy.delay(afterFailures: 2, random: 0.5) == .seconds(9))
        #expect(policy.delay(afterFailures: 3, random: 0.5) == .seconds(10))
        #expect(policy.delay(afterFailures: 0, random: 0) == .milliseconds(750))
        #expect(policy.delay(afterFailures: 0, random: 1) == .milliseconds(1250))
        let tryAgainLater = WebSocket.Reconnection.reconnects(afterClose: WebSocketCloseCode(1013))
        let normal = WebSocket.Reconnection.reconnects(afterClose: .normalClosure)
        let none = WebSocket.Reconnection.reconnects(afterClose: nil)
        #expect(tryAgainLater && !normal && !none)
    }
}
