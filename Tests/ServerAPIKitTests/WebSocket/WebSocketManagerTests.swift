import Foundation
import ServerAPITestSupport
@_spi(Transport) import ServerAPITesting
import Testing

@_spi(Backend) @_spi(Transport) @testable import ServerAPIKit

@Suite("WebSockets through the manager (MockTransport's scripted sessions)")
struct WebSocketManagerTests {
    private static let chat = ServerAPI(host: "ws://api.test", path: "/chat")

    /// A plugin that adds a header to every request, as an auth plugin does.
    private struct Bearer: ServerAPIPlugin {
        func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
            var request = request
            request.headers.add(name: "Authorization", value: "Bearer t0ken")
            return request
        }
    }

    @Test("text and binary echo, the subprotocol chosen, and the plugins' header on the handshake")
    func echo() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.send(.text("welcome")), .echo(2)], subprotocol: "chat.v2"))
        let manager = ServerAPIManager(transport: mock, plugins: [Bearer()])
        let socket = try await manager.webSocket(Self.chat.webSocketProtocols("chat.v1", "chat.v2"))
        #expect(socket.subprotocol == "chat.v2")
        try await socket.send(.text("héllo"))
        try await socket.send(.binary(Data([0, 1, 2])))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("welcome"))
        #expect(try await iterator.next() == .text("héllo"))
        #expect(try await iterator.next() == .binary(Data([0, 1, 2])))
        await socket.close()
        #expect(try await iterator.next() == nil)
        #expect(mock.webSocketClosesReceived == [.normalClosure])
        let handshake = try #require(mock.requests.first)
        #expect(handshake.url.absoluteString == "http://api.test/chat")
        #expect(handshake.headers["Authorization"] == "Bearer t0ken")
        #expect(handshake.headers["Sec-WebSocket-Protocol"] == "chat.v1, chat.v2")
        #expect(manager.inFlight.isEmpty)
    }

    @Test("the connection's open and closed are states of its call: open while it is, finished when it closes")
    func callStates() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.echo(1)]))
        let manager = ServerAPIManager(transport: mock)
        let socket = try await manager.webSocket(Self.chat)
        #expect(socket.callState == .running(.open))
        try await socket.send(.text("hi"))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("hi"))
        await socket.close()
        #expect(socket.callState == .finished)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("the handshake carries the jar's cookies for the host, and the cookies its answer sets are stored")
    func cookies() async throws {
        let jar = MemoryCookieStorage()
        jar.store(setCookieLines: ["session=s1; Path=/"], from: try #require(URL(string: "http://api.test/")))
        jar.store(setCookieLines: ["elsewhere=x"], from: try #require(URL(string: "http://other.test/")))
        let mock = MockTransport()
        var stub = MockStub.webSocket([.echo(1)])
        guard case .response(let status, var headers, let body) = stub.outcome else {
            Issue.record("the WebSocket stub is not a response")
            return
        }
        headers.add(name: "Set-Cookie", value: "room=42; Path=/chat")
        stub.outcome = .response(status: status, headers: headers, body: body)
        mock.stub(.get, "/chat", stub)
        let manager = ServerAPIManager(transport: mock, configuration: .init(cookies: jar))
        let socket = try await manager.webSocket(Self.chat.header("Cookie", "own=1"))
        try await socket.send(.text("hi"))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("hi"))
        await socket.close()
        let handshake = try #require(mock.requests.first)
        #expect(handshake.headers["Cookie"] == "own=1; session=s1")
        #expect(jar.cookieHeader(for: try #require(URL(string: "http://api.test/chat/x"))) == "room=42; session=s1")
        #expect(jar.cookieHeader(for: try #require(URL(string: "http://api.test/"))) == "session=s1")
    }

    @Test("the server's close code and reason end the messages, and the client echoes the code")
    func serverCloses() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.send(.text("bye")), .close(.init(4000), reason: "done")]))
        let manager = ServerAPIManager(transport: mock)
        let socket = try await manager.webSocket(Self.chat)
        let (messages, error) = await socket.collectMessages()
        #expect(messages == [.text("bye")])
        #expect(error == nil)
        #expect(socket.closeCode == WebSocketCloseCode(4000))
        #expect(socket.closeReason == "done")
        try await poll("the client's close frame") { !mock.webSocketClosesReceived.isEmpty }
        #expect(mock.webSocketClosesReceived == [WebSocketCloseCode(4000)])
        #expect(socket.isClosed)
    }

    @Test("a connection that breaks without a close frame fails with network (1006)")
    func abrupt() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.send(.text("one")), .drop]))
        let socket = try await ServerAPIManager(transport: mock).webSocket(Self.chat)
        let (messages, error) = await socket.collectMessages()
        #expect(messages == [.text("one")])
        #expect(error?.kind == .network)
        #expect(error?.message.contains("1006") == true)
        #expect(socket.closeCode == nil)
    }

    @Test("fragments are reassembled; text that is not UTF-8 closes with 1007")
    func fragmentsAndInvalidText() async throws {
        let mock = MockTransport()
        mock.stub(
            .get, "/chat",
            .webSocket([
                .sendFrame(WebSocketFrame(.text, payload: Data("frag".utf8), isFinal: false)),
                .sendFrame(WebSocketFrame(.ping, payload: Data("p".utf8))),
                .sendFrame(WebSocketFrame(.continuation, payload: Data("ment".utf8))),
                .sendFrame(WebSocketFrame(.text, payload: Data([0x61, 0xFF]))),
                .echo(1),
            ]))
        let socket = try await ServerAPIManager(transport: mock).webSocket(Self.chat)
        let (messages, error) = await socket.collectMessages()
        #expect(messages == [.text("fragment")])
        #expect(error?.kind == .network)
        #expect(error?.message.contains("UTF-8") == true)
        // The close frame goes out after the failure: wait for the mock server to record it.
        try await poll("the client's close frame") { !mock.webSocketClosesReceived.isEmpty }
        #expect(mock.webSocketClosesReceived == [.invalidPayload])
    }

    @Test("a message over the limit fails with responseTooLarge and closes with 1009")
    func oversize() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.send(.binary(Data(count: 2048))), .echo(1)]))
        let socket = try await ServerAPIManager(transport: mock).webSocket(
            Self.chat, configuration: .init(maxMessageSize: 1024))
        let (messages, error) = await socket.collectMessages()
        #expect(messages.isEmpty)
        #expect(error?.kind == .responseTooLarge)
        try await poll("the client's close frame") { !mock.webSocketClosesReceived.isEmpty }
        #expect(mock.webSocketClosesReceived == [.messageTooBig])
    }

    /// Records each `didComplete` with the attempts in its metrics and whether they were ended.
    private struct Completions: ServerAPIPlugin {
        let log: Locked<[String]>
        func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
            log.withLock {
                $0.append(
                    "\(error?.kind.rawValue ?? "ok") attempts \(metrics.attempts) ended \(metrics.endedAt != nil)")
            }
        }
    }

    @Test("the plugins' didComplete runs once when the socket ends, not at the handshake; a refusal ends it at once")
    func didComplete() async throws {
        let log = Locked([String]())
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.echo(1)]))
        mock.stub(.get, "/refused", .text("log in first", status: 401))
        let manager = ServerAPIManager(transport: mock, plugins: [Completions(log: log)])
        let socket = try await manager.webSocket(Self.chat)
        #expect(log.withLock { $0 }.isEmpty)
        await socket.close()
        try await poll("the socket's call to end") { !log.withLock { $0 }.isEmpty }
        let refused = await expectError {
            _ = try await manager.webSocket(ServerAPI(host: "ws://api.test", path: "/refused"))
        }
        #expect(refused?.kind == .httpStatus && refused?.status == 401)
        #expect(log.withLock { $0 } == ["ok attempts 1 ended true", "HTTP status attempts 1 ended true"])
    }

    @Test("a refused upgrade is httpStatus with the body, and leaves nothing in flight")
    func refused() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .text("log in first", status: 401))
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.webSocket(Self.chat) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 401)
        #expect(error?.bodyExcerpt == "log in first")
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a handshake answered 503 is retried as any call is, with a fresh key, and the socket opens")
    func handshakeRetried() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .status(503), .webSocket([.echo(1)]))
        let manager = ServerAPIManager(transport: mock)
        let socket = try await manager.webSocket(Self.chat.retry(1, policy: RetryPolicy(baseDelay: .zero)))
        try await socket.send(.text("again"))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("again"))
        await socket.close()
        let keys = mock.requests.map { $0.headers["Sec-WebSocket-Key"] }
        #expect(keys.count == 2 && keys[0] != nil && keys[1] != nil && keys[0] != keys[1])
        #expect(mock.requests.map(\.attempt) == [1, 2])
    }

    @Test("without retries a 503 handshake fails at once; a plugin's shouldRetry can ask for another attempt")
    func handshakeRetriedByPlugin() async throws {
        struct RetryRefusals: ServerAPIPlugin {
            func shouldRetry(after error: ServerAPIError, request: TransportRequest, api: ServerAPI, attempt: Int)
                async -> RetryDecision
            {
                error.status == 401 && attempt == 1 ? .retry : .useDefault
            }
        }
        let mock = MockTransport()
        mock.stub(.get, "/busy", .status(503), .webSocket([]))
        mock.stub(.get, "/chat", .text("log in first", status: 401), .webSocket([]))
        let plain = ServerAPIManager(transport: mock)
        let busy = await expectError { try await plain.webSocket(ServerAPI(host: "ws://api.test", path: "/busy")) }
        #expect(busy?.kind == .httpStatus && busy?.status == 503)
        let manager = ServerAPIManager(transport: mock, plugins: [RetryRefusals()])
        let socket = try await manager.webSocket(Self.chat)
        await socket.close()
        #expect(mock.requests.filter { $0.url.path == "/chat" }.count == 2)
    }

    @Test("a handshake goes through its origin's circuit breaker: failed handshakes open it, and it refuses the next")
    func handshakeCircuitBreaker() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .status(503))
        let manager = ServerAPIManager(transport: mock)
        let api = Self.chat.circuitBreaker(
            CircuitBreakerPolicy(trip: .consecutiveFailures(2), openDuration: .seconds(60)))
        for _ in 0..<2 {
            let refused = await expectError { try await manager.webSocket(api) }
            #expect(refused?.kind == .httpStatus && refused?.status == 503)
        }
        let open = await expectError { try await manager.webSocket(api) }
        #expect(open?.kind == .circuitOpen)
        #expect(mock.requests.count == 2)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a handshake attempt that times out is retried when the call retries timeouts; the next one opens")
    func handshakeTimeoutRetried() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/slow", .webSocket([], delay: .seconds(60)), .webSocket([.echo(1)]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let api = ServerAPI(host: "ws://api.test", path: "/slow").timeout(.seconds(2))
            .retry(1, policy: RetryPolicy(baseDelay: .zero))
        let opening = Task { try await manager.webSocket(api) }
        // The first attempt's timer and the mock's delay.
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(2))
        let socket = try await opening.value
        try await socket.send(.text("late"))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("late"))
        await socket.close()
        #expect(mock.requests.count == 2)
    }

    @Test("a subprotocol the call did not offer fails the handshake")
    func unofferedSubprotocol() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([], subprotocol: "other"))
        let error = await expectError {
            try await ServerAPIManager(transport: mock).webSocket(Self.chat.webSocketProtocols("chat"))
        }
        #expect(error?.kind == .network)
        #expect(error?.message.contains("other") == true)
    }

    @Test("the accept for RFC 6455's sample key is the RFC's, and every handshake sends a fresh key of the core's")
    func acceptForKey() async throws {
        #expect(WebSocketHandshakeRule.accept(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([]))
        let manager = ServerAPIManager(transport: mock)
        var keys: [String] = []
        for _ in 0..<2 {
            let socket = try await manager.webSocket(Self.chat.setHeader("Sec-WebSocket-Key", "chosen-by-the-caller"))
            await socket.close()
            keys.append(try #require(mock.requests.last?.headers["Sec-WebSocket-Key"]))
        }
        #expect(keys.allSatisfy { Data(base64Encoded: $0)?.count == 16 }, "\(keys)")
        #expect(keys[0] != keys[1])
    }

    @Test(
        "a 101 that does not prove the server read the key fails with network and leaves nothing in flight",
        arguments: [
            (
                ["Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="],
                "has a Sec-WebSocket-Accept that does not match"
            ),
            (["Sec-WebSocket-Accept": ""], "has a Sec-WebSocket-Accept that does not match"),
            (["Upgrade": "h2c"], "has no \"Upgrade: websocket\""),
            (["Connection": "keep-alive"], "has no \"Connection: Upgrade\""),
        ] as [([String: String], String)])
    func unprovenUpgrade(fields: [String: String], complaint: String) async throws {
        let manager = Self.manager(answering: [.send(.text("read me"))]) { headers in
            for (name, value) in fields { headers[name] = value }
        }
        let error = await expectError { try await manager.webSocket(Self.chat) }
        #expect(error?.kind == .network)
        #expect(error?.message.contains(complaint) == true, "\(String(describing: error))")
        #expect(manager.inFlight.isEmpty)
    }

    /// A manager over a mock whose `/chat` accepts the upgrade and plays `steps`, its 101's fields changed by `edit`.
    private static func manager(
        answering steps: [MockWebSocketScript.Step], edit: (inout HTTPHeaders) -> Void
    ) -> ServerAPIManager {
        var stub = MockStub.webSocket(steps)
        if case .response(let status, var headers, let body) = stub.outcome {
            edit(&headers)
            stub.outcome = .response(status: status, headers: headers, body: body)
        }
        let mock = MockTransport()
        mock.stub(.get, "/chat", stub)
        return ServerAPIManager(transport: mock)
    }

    @Test("the rule: a missing accept, a second one, and a transport that verified the handshake itself")
    func handshakeRule() async throws {
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        func answer(_ headers: HTTPHeaders) -> TransportResponse {
            TransportResponse(status: 101, headers: headers, body: .data(Data()), url: URL(string: "http://a.test")!)
        }
        let upgrade: HTTPHeaders = ["Upgrade": "WebSocket", "Connection": "keep-alive, Upgrade"]
        var good = upgrade
        good.add(name: "Sec-WebSocket-Accept", value: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(try WebSocketHandshakeRule.check(answer(good), key: key, offered: []) == nil)
        var twice = good
        twice.add(name: "Sec-WebSocket-Accept", value: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        for headers in [upgrade, twice] {
            let error = await expectError { try WebSocketHandshakeRule.check(answer(headers), key: key, offered: []) }
            #expect(error?.kind == .network, "\(headers)")
        }
        // A transport that sent its own key and checked the answer (Apple's URLSession) may hand over no head at all.
        #expect(try WebSocketHandshakeRule.check(answer([:]), key: nil, offered: []) == nil)
    }

    @Test("an extension the call did not offer fails the handshake; one it offered is accepted")
    func unofferedExtension() async throws {
        let manager = Self.manager(answering: []) { headers in
            headers.add(name: "Sec-WebSocket-Extensions", value: "permessage-deflate; client_max_window_bits=15")
        }
        // Compression off: the core offers no extension.
        let error = await expectError { try await manager.webSocket(Self.chat, configuration: .init(compression: nil)) }
        #expect(error?.kind == .network)
        #expect(error?.message.contains("permessage-deflate") == true, "\(String(describing: error))")
        #expect(manager.inFlight.isEmpty)
        let offered = Self.chat.setHeader("Sec-WebSocket-Extensions", "permessage-deflate")
        let socket = try await manager.webSocket(offered, configuration: .init(compression: nil))
        await socket.close()
        // Compression on (the default): the core offers permessage-deflate, and the answer is agreed.
        let compressed = try await manager.webSocket(Self.chat)
        #expect(compressed.compression == WebSocketDeflateParameters())
        await compressed.close()
    }

    @Test("cancel by tag closes the connection: messages end with cancelled, and a 1001 close goes out")
    func cancelByTag() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.send(.text("one"))]))
        let manager = ServerAPIManager(transport: mock)
        let socket = try await manager.webSocket(Self.chat.tag("room"))
        #expect(manager.inFlight.map(\.tag) == ["room"])
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("one"))
        let reader = Task { [iterator] in
            var iterator = iterator
            return await expectError { try await iterator.next() }
        }
        manager.cancel(tag: "room")
        #expect(await reader.value?.kind == .cancelled)
        #expect(manager.inFlight.isEmpty)
        try await poll("the client's close frame") { !mock.webSocketClosesReceived.isEmpty }
        #expect(mock.webSocketClosesReceived == [.goingAway])
        let sendError = await expectError { try await socket.send(.text("late")) }
        #expect(sendError?.kind == .cancelled)
    }

    @Test("cancelling the task that reads the messages cancels the connection")
    func cancelReader() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([]))
        let manager = ServerAPIManager(transport: mock)
        let socket = try await manager.webSocket(Self.chat)
        let reader = Task { await socket.collectMessages() }
        reader.cancel()
        let (_, error) = await reader.value
        #expect(error?.kind == .cancelled)
        #expect(socket.isClosed)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("ping waits for the pong; one the server leaves unanswered times out on the clock")
    func ping() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/answers", .webSocket([]))
        mock.stub(.get, "/busy", .webSocket([.wait(.seconds(60))]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let answering = try await manager.webSocket(ServerAPI(host: "ws://api.test", path: "/answers"))
        try await answering.ping(timeout: .seconds(1))
        let busy = try await manager.webSocket(ServerAPI(host: "ws://api.test", path: "/busy"))
        let ping = Task { await expectError { try await busy.ping(timeout: .seconds(1)) } }
        // The server's wait and the ping's timer.
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        #expect(await ping.value?.kind == .timedOut)
        #expect(!busy.isClosed, "a ping that timed out leaves the connection open")
        await answering.close()
        // The busy server reads nothing, so it would never answer a close frame.
        _ = manager.cancelAll()
        #expect(busy.isClosed)
    }

    @Test("a ping from a task cancelled already throws cancelled at once, not after its timeout")
    func pingCancelled() async throws {
        // The server never reads (its wait is on a clock nobody advances); the ping's timer runs on the real clock.
        let mock = MockTransport(clock: TestClock())
        mock.stub(.get, "/busy", .webSocket([.wait(.seconds(600))]))
        let manager = ServerAPIManager(transport: mock)
        let socket = try await manager.webSocket(ServerAPI(host: "ws://api.test", path: "/busy"))
        let ping = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await expectError { try await socket.ping(timeout: .seconds(5)) }
        }
        #expect(await ping.value?.kind == .cancelled)
        _ = manager.cancelAll()
    }

    @Test("a keep-alive ping left unanswered fails the connection with timedOut")
    func keepAlive() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/busy", .webSocket([.wait(.seconds(600))]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let socket = try await manager.webSocket(
            ServerAPI(host: "ws://api.test", path: "/busy"), configuration: .init(pingInterval: .seconds(5)))
        let reader = Task { await socket.collectMessages() }
        // The server's wait and the keep-alive's interval.
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(5))
        // The server's wait and the ping's timer.
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(5))
        let (_, error) = await reader.value
        #expect(error?.kind == .timedOut)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a connection that receives nothing for the idle timeout fails with timedOut")
    func idle() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/quiet", .webSocket([]))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let socket = try await manager.webSocket(
            ServerAPI(host: "ws://api.test", path: "/quiet"), configuration: .init(idleTimeout: .seconds(30)))
        let reader = Task { await socket.collectMessages() }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(30))
        let (_, error) = await reader.value
        #expect(error?.kind == .timedOut)
    }

    @Test("the handshake is bounded by the call's timeout")
    func handshakeTimeout() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/slow", .webSocket([], delay: .seconds(60)))
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let opening = Task {
            await expectError {
                try await manager.webSocket(ServerAPI(host: "ws://api.test", path: "/slow").timeout(.seconds(2)))
            }
        }
        // The manager's handshake timer and the mock's delay.
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(2))
        #expect(await opening.value?.kind == .timedOut)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a transport without WebSockets answers unsupported")
    func unsupported() async throws {
        struct Plain: RequestPerforming {
            var name: String { "plain" }
            func perform(_ request: TransportRequest) async throws -> TransportResponse {
                throw ServerAPIError(.network, "unused")
            }
        }
        let error = await expectError { try await ServerAPIManager(transport: Plain()).webSocket(Self.chat) }
        #expect(error?.kind == .unsupported)
        #expect(error?.message == "this transport (plain) has no WebSockets")
    }

    @Test("a reader that falls behind stops the connection's reading once the buffer is full")
    func backpressure() async throws {
        let inbox = WebSocketInbox(capacity: 10) {}
        await inbox.push(.text("12345"))
        let producer = Task {
            // 10 bytes held: each push waits until the reader has taken a message.
            await inbox.push(.text("67890"))
            await inbox.push(.text("abcde"))
        }
        try await poll("the producer waiting") { inbox.producerIsWaiting }
        #expect(try await inbox.next() == .text("12345"))
        try await poll("the producer waiting again") { inbox.producerIsWaiting }
        #expect(try await inbox.next() == .text("67890"))
        await producer.value
        #expect(try await inbox.next() == .text("abcde"))
    }
    @Test("messages made while more frames are ready reach a waiting reader together: one wake-up, none held back")
    func heldForReader() async throws {
        let inbox = WebSocketInbox(capacity: 1 << 20) {}
        // Held while more follow; the last one pushed wakes the reader with the first.
        let first = Task { try await inbox.next() }
        try await poll("the reader waiting") { inbox.readerIsWaiting }
        await inbox.push(.text("a"), more: true)
        await inbox.push(.text("b"), more: true)
        #expect(inbox.readerIsWaiting)
        await inbox.push(.text("c"))
        #expect(try await first.value == .text("a"))
        #expect(try await inbox.next() == .text("b"))
        #expect(try await inbox.next() == .text("c"))

        // The frames that followed made no message: the reader hands over what it holds before it waits.
        let second = Task { try await inbox.next() }
        try await poll("the reader waiting") { inbox.readerIsWaiting }
        await inbox.push(.text("d"), more: true)
        #expect(inbox.readerIsWaiting)
        inbox.handOver()
        #expect(try await second.value == .text("d"))

        // At most `heldForReader` are held: the reader starts on them while the rest are made.
        let third = Task { try await inbox.next() }
        try await poll("the reader waiting") { inbox.readerIsWaiting }
        for index in 1..<WebSocketInbox.heldForReader { await inbox.push(.text("\(index)"), more: true) }
        #expect(inbox.readerIsWaiting)
        await inbox.push(.text("\(WebSocketInbox.heldForReader)"), more: true)
        #expect(try await third.value == .text("1"))
        for index in 2...WebSocketInbox.heldForReader { #expect(try await inbox.next() == .text("\(index)")) }

        // The connection ends while messages are held: the reader gets them, then the end.
        let fourth = Task { try await inbox.next() }
        try await poll("the reader waiting") { inbox.readerIsWaiting }
        await inbox.push(.text("e"), more: true)
        inbox.finish(nil, discarding: false)
        #expect(try await fourth.value == .text("e"))
        #expect(try await inbox.next() == nil)
    }
}

extension WebSocketInbox {
    /// What the connection's reader does with a message: offers it, and waits for room while the buffer is full.
    fileprivate func push(_ message: WebSocketMessage, more: Bool = false) async {
        if offer(message, more: more) { await waitForRoom() }
    }
}
