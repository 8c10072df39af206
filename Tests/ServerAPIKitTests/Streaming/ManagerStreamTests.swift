import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@_spi(Transport) @testable import ServerAPIKit

@Suite("Streamed calls through the manager (MockTransport)")
struct ManagerStreamTests {
    private func manager(_ mock: MockTransport, plugins: [any ServerAPIPlugin] = [], clock: TestClock? = nil)
        -> ServerAPIManager
    {
        ServerAPIManager(
            transport: mock, plugins: plugins,
            configuration: clock.map { .init(clock: $0) } ?? .init())
    }

    @Test("the head comes first, then the body's chunks, lines and metrics at the end")
    func headThenBody() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(
            .get, "/feed",
            .stream([.text("one\ntw"), .wait(.seconds(5)), .text("o\r\nthree")], headers: ["X-Feed": "1"]))
        let manager = manager(mock, clock: clock)
        let response = try await manager.stream(.test("/feed").tag("feed"))
        #expect(response.status == 200)
        #expect(response.headers["X-Feed"] == "1")
        #expect(manager.inFlight.map(\.tag) == ["feed"])
        let lines = Task { () -> [String] in
            var lines: [String] = []
            for try await line in response.lines { lines.append(line) }
            return lines
        }
        // The second part waits on the mock's clock: the reader has the first line, not the rest.
        await clock.waitForSleepers(1)
        #expect(manager.inFlight.count == 1)
        clock.advance(by: .seconds(5))
        #expect(try await lines.value == ["one", "two", "three"])
        let metrics = await response.finalMetrics
        #expect(metrics.transport?.bytesReceived == 14)
        #expect(metrics.attempts == 1)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("server-sent events from a scripted stream")
    func events() async throws {
        let mock = MockTransport()
        let sent = [
            ServerSentEvent(data: "a", id: "1"),
            ServerSentEvent(type: "update", data: "b\nc", id: "2", retry: .milliseconds(1500)),
        ]
        mock.stub(.get, "/events", .events(sent))
        let response = try await manager(mock).stream(.test("/events"))
        var received: [ServerSentEvent] = []
        for try await event in response.events { received.append(event) }
        #expect(received == sent)
    }

    @Test("a status the call does not accept fails before the body, with a bounded excerpt of it")
    func errorStatus() async throws {
        let mock = MockTransport()
        let huge = String(repeating: "x", count: 1 << 20)
        mock.stub(.get, "/e", .stream([.text("not found: "), .text(huge)], status: 404))
        let manager = manager(mock)
        let error = await expectError { try await manager.stream(.test("/e")) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 404)
        #expect(error?.bodyExcerpt?.hasPrefix("not found: xxx") == true)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("retries and plugins apply before the head; didComplete waits for the body's end")
    func pipeline() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        let log = Recorder<String>()
        // The body cannot end before the test advances the clock: the end is the test's to decide.
        mock.stub(.get, "/r", .status(503), .stream([.text("ok"), .wait(.seconds(1))]))
        let manager = manager(mock, plugins: [RecordingPlugin(name: "p", log: log)], clock: clock)
        let response = try await manager.stream(.test("/r").retry(1, policy: RetryPolicy(baseDelay: .zero)))
        #expect(mock.requestCount == 2)
        #expect(mock.requests.last?.headers["X-Plugin"] == "p")
        await clock.waitForSleepers(1)
        #expect(!log.all.contains { $0.hasPrefix("p.didComplete") })
        clock.advance(by: .seconds(1))
        #expect(try await response.body.collect(upTo: 10) == Data("ok".utf8))
        _ = await response.finalMetrics
        #expect(log.all.last == "p.didComplete(ok)")
        #expect(log.all.filter { $0 == "p.prepare" }.count == 2)
    }

    @Test("a plugin sees the head with the streamed body, unread")
    func pluginSeesHead() async throws {
        struct HeadCheck: ServerAPIPlugin {
            let seen: Recorder<String>
            func process(_ response: TransportResponse, for api: ServerAPI) async throws -> TransportResponse {
                if case .stream(let body) = response.body { seen.append("stream:\(body.isFinished)") }
                return response
            }
        }
        let clock = TestClock()
        let timed = MockTransport(clock: clock)
        timed.stub(.get, "/h", .stream([.wait(.seconds(1)), .text("late")]))
        let seen = Recorder<String>()
        let response = try await manager(timed, plugins: [HeadCheck(seen: seen)], clock: clock).stream(.test("/h"))
        #expect(seen.all == ["stream:false"])
        response.cancel()
    }

    @Test("cancel(tag:), cancel(id:), cancelAll and cancelLast end a body mid-stream with cancelled")
    func registryCancels() async throws {
        for how in ["tag", "id", "all", "last", "first"] {
            let clock = TestClock()
            let mock = MockTransport(clock: clock)
            mock.stub(.get, "/s", .stream([.text("first"), .wait(.seconds(60)), .text("never")]))
            let manager = manager(mock, clock: clock)
            let api = ServerAPI.test("/s").tag("s")
            let response = try await manager.stream(api)
            var chunks = response.body.makeAsyncIterator()
            #expect(try await chunks.next() == Data("first".utf8))
            await clock.waitForSleepers(1)
            switch how {
            case "tag": #expect(manager.cancel(tag: "s").count == 1)
            case "id": #expect(manager.cancel(id: api.id).count == 1)
            case "all": #expect(manager.cancelAll().count == 1)
            case "last": #expect(manager.cancelLast() != nil)
            default: #expect(manager.cancelFirst() != nil)
            }
            let error = await #expect(throws: ServerAPIError.self) { try await chunks.next() }
            #expect(error?.kind == .cancelled, "\(how)")
            #expect(error?.requestID == api.id)
            let metrics = await response.finalMetrics
            #expect(metrics.endedAt != nil)
            #expect(manager.inFlight.isEmpty)
        }
    }

    @Test("the caller's task cancelled while the head is awaited ends the call with cancelled")
    func cancelBeforeHead() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/slow", .stream([.text("x")], delay: .seconds(30)))
        let manager = manager(mock, clock: clock)
        let task = Task { try await manager.stream(.test("/slow")) }
        await clock.waitForSleepers(1)
        task.cancel()
        let error = await expectError { try await task.value }
        #expect(error?.kind == .cancelled)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a failure mid-body reaches the reader after the chunks before it, typed and stamped")
    func failureMidBody() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/d", .stream([.text("a\n"), .failure(ServerAPIError(.network, "the connection dropped"))]))
        let manager = manager(mock)
        let response = try await manager.stream(.test("/d"))
        var lines: [String] = []
        let error = await expectError { for try await line in response.lines { lines.append(line) } }
        #expect(lines == ["a"])
        #expect(error?.kind == .network)
        #expect(error?.requestID == response.requestID)
        let metrics = await response.finalMetrics
        #expect(metrics.transport?.bytesReceived == 2)
    }

    @Test("maxResponseSize ends a streamed body that grows past it")
    func sizeLimit() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/big", .stream([.chunk(Data(count: 600)), .chunk(Data(count: 600))]))
        let response = try await manager(mock).stream(.test("/big").maxResponseSize(1000))
        let error = await expectError { try await response.body.collect(upTo: 1 << 20) }
        #expect(error?.kind == .responseTooLarge)
    }

    @Test("a transport that cannot stream delivers its whole body as one chunk")
    func defaultStream() async throws {
        struct Whole: RequestPerforming {
            var name: String { "whole" }
            func perform(_ request: TransportRequest) async throws -> TransportResponse {
                TransportResponse(
                    status: 200, body: .data(Data("a\nb\n".utf8)), url: request.url,
                    metrics: TransportMetrics(transport: "whole", bytesReceived: 4))
            }
        }
        let manager = ServerAPIManager(transport: Whole())
        let response = try await manager.stream(.test("/w"))
        var lines: [String] = []
        for try await line in response.lines { lines.append(line) }
        #expect(lines == ["a", "b"])
        #expect(await response.finalMetrics.transport?.bytesReceived == 4)
    }

    @Test("a streamed call with a download destination is refused")
    func noDownload() async {
        let manager = manager(MockTransport())
        let api = ServerAPI.test("/f").download(to: URL(fileURLWithPath: "/tmp/never"))
        let error = await expectError { try await manager.stream(api) }
        #expect(error?.kind == .invalidRequest)
    }

    @Test("a mock's streamed body larger than its buffer arrives whole, the producer waiting for room")
    func mockBackpressure() async throws {
        let mock = MockTransport(streamBufferSize: 100)
        let parts = (0..<50).map { _ in MockStreamPart.chunk(Data(count: 40)) }
        mock.stub(.get, "/p", .stream(parts))
        let response = try await manager(mock).stream(.test("/p"))
        var chunks = response.body.makeAsyncIterator()
        _ = try await chunks.next()
        var total = 40
        while let chunk = try await chunks.next() { total += chunk.count }
        #expect(total == 2000)
    }
}

@Suite("Streamed request bodies (MockTransport)")
struct StreamedRequestBodyTests {
    @Test("the mock records a streamed body's bytes")
    func recorded() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/up", .status(201))
        let chunks = AsyncStream<Data> { continuation in
            for part in ["a", "b", "c"] { continuation.yield(Data(part.utf8)) }
            continuation.finish()
        }
        let body = RequestBodyStream(chunks, length: 3)
        let result = try await ServerAPIManager(transport: mock).send(
            .test("/up").method(.post).body(.stream(body, contentType: "text/plain")).format(.data))
        #expect(result.status == 201)
        #expect(mock.requests.first?.bodyText == "abc")
        #expect(mock.requests.first?.headers["Content-Type"] == "text/plain")
        #expect(body.hasStarted)
    }

    @Test("a declared length that the sequence does not match fails with invalidRequest")
    func wrongLength() async throws {
        let mock = MockTransport()
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("ab".utf8))
            continuation.finish()
        }
        let error = await expectError {
            try await ServerAPIManager(transport: mock).send(
                .test("/up").method(.post).body(.stream(RequestBodyStream(chunks, length: 5))))
        }
        #expect(error?.kind == .invalidRequest)
    }

    @Test("a call whose streamed body was sent is not retried")
    func notRetried() async throws {
        let mock = MockTransport()
        // PUT is idempotent: with any other body, the 503 would be retried.
        mock.stub(.put, "/up", .status(503), .status(201))
        let chunks = AsyncStream<[UInt8]> { continuation in
            continuation.yield([1, 2, 3])
            continuation.finish()
        }
        let error = await expectError {
            try await ServerAPIManager(transport: mock).send(
                .test("/up").method(.put).body(.stream(RequestBodyStream(chunks)))
                    .retry(3, policy: RetryPolicy(baseDelay: .zero)))
        }
        #expect(error?.kind == .httpStatus)
        #expect(mock.requestCount == 1)
    }
}

@Suite("Decoding streamed JSON lines and event data")
struct StreamDecodingTests {
    struct Item: Decodable, Sendable, Equatable {
        var id: Int
    }

    @Test("JSON lines decode one model per line, blank lines skipped, a bad line a decoding error")
    func lines() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/nd", .stream([.text("{\"id\":1}\n\n{\"i"), .text("d\":2}\r\nnot json\n{\"id\":3}\n")]))
        let response = try await ServerAPIManager(transport: mock).stream(.test("/nd"))
        var items: [Item] = []
        let error = await expectError { for try await item in response.decodedLines(Item.self) { items.append(item) } }
        #expect(items == [Item(id: 1), Item(id: 2)])
        #expect(error?.kind == .decoding)
        #expect(error?.message.contains("line 4") == true)
        #expect(error?.message.contains("not json") == true)
    }

    @Test("an event's data decodes as JSON")
    func eventData() throws {
        #expect(try ServerSentEvent(data: #"{"id":7}"#).decode(Item.self) == Item(id: 7))
        let error = #expect(throws: ServerAPIError.self) { try ServerSentEvent(data: "[DONE]").decode(Item.self) }
        #expect(error?.kind == .decoding)
    }
}
