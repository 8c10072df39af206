import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Streamed responses through the manager on every transport, against the real servers: chunks
/// before the end, lines, server-sent events as the WHATWG specification parses them, the reconnecting
/// event source, bad input, and cancellation at every point of a stream.
@Suite("Conformance: streamed responses")
struct StreamingConformanceTests {
    static func key() -> String { UUID().uuidString }

    private func manager(_ kind: TransportKind) -> ServerAPIManager {
        ServerAPIManager(transport: kind.make())
    }

    /// A JSON document from the fixture, through the transport under test.
    private func json(_ kind: TransportKind, _ manager: ServerAPIManager, _ path: String) async throws -> Any {
        let result = try await manager.send(ServerAPI(url: try kind.fixture(path)).format(.data))
        return try JSONSerialization.jsonObject(with: result.data ?? Data())
    }

    /// The events a fixture route's `expected` document lists, as (type, data, id, retry): `retry` is its
    /// `retry_ms`, the reconnection time in force when the event is dispatched, in milliseconds; "" when none.
    private func expectedEvents(_ kind: TransportKind, _ manager: ServerAPIManager, _ path: String) async throws
        -> [[String]]
    {
        let list = try await json(kind, manager, path) as? [[String: Any]] ?? []
        return list.map {
            [
                $0["type"] as? String ?? "", $0["data"] as? String ?? "", $0["id"] as? String ?? "",
                ($0["retry_ms"] as? NSNumber).map { "\($0.int64Value)" } ?? "",
            ]
        }
    }

    private static func milliseconds(_ duration: Duration?) -> String {
        duration.map { "\($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000)" } ?? ""
    }

    /// The events of `response.events`, as (type, data, id, retry): `retry` is the event's own, the time a
    /// `retry:` among its lines asked for ("" when none did). `reconnection` is the parser's reconnection time
    /// once the stream has ended: the last valid `retry:` of the whole stream.
    private func events(_ response: StreamedResponse) async throws -> (events: [[String]], reconnection: String) {
        var events: [[String]] = []
        var iterator = response.events.makeAsyncIterator()
        while let event = try await iterator.next() {
            events.append([event.type, event.data, event.id, Self.milliseconds(event.retry)])
        }
        return (events, Self.milliseconds(iterator.parser.retry))
    }

    /// Checks `response.events` against the fixture's `expected`: type, data and id exactly; an event's own
    /// `retry`, when it has one, is the one in force at its dispatch (the fixture's `retry_ms`); and the
    /// reconnection time the stream leaves is the last event's `retry_ms` (no fixture stream sets one after it).
    private func expectEvents(
        _ response: StreamedResponse, _ expected: [[String]], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let (received, reconnection) = try await events(response)
        #expect(received.map { $0.prefix(3) } == expected.map { $0.prefix(3) }, sourceLocation: sourceLocation)
        for (event, wanted) in zip(received, expected) where !event[3].isEmpty {
            #expect(event[3] == wanted[3], "the own retry of \(event)", sourceLocation: sourceLocation)
        }
        #expect(reconnection == expected.last?[3], sourceLocation: sourceLocation)
    }

    /// The events of a streamed body as (type, data, id, retry in force), parsed one byte at a time: after a
    /// byte at most one line has ended, so the parser's reconnection time right after an event is dispatched
    /// is the one in force at its dispatch, which is what the fixture's `retry_ms` is. (`response.events`
    /// parses a chunk at a time, and by the end of a chunk a later `retry:` may have been read.)
    private func eventsWithRetryInForce(_ response: StreamedResponse) async throws -> [[String]] {
        var parser = ServerSentEventParser()
        var events: [[String]] = []
        for try await chunk in response.body {
            for byte in chunk {
                for event in try parser.feed([byte]) {
                    events.append([event.type, event.data, event.id, Self.milliseconds(parser.retry)])
                }
            }
        }
        parser.finish()
        return events
    }

    @Test("the first chunk arrives while the server still holds the rest back", arguments: TransportKind.allCases)
    func firstChunkEarly(kind: TransportKind) async throws {
        let manager = manager(kind)
        let response = try await manager.stream(
            ServerAPI(url: try kind.fixture("/hold-body?key=\(Self.key())")))
        var chunks = response.body.makeAsyncIterator()
        // "first\n", then nothing until the client leaves: only a transport that streams delivers it.
        #expect(try await chunks.next() == Data("first\n".utf8))
        #expect(!response.body.isFinished)
        response.cancel()
    }

    @Test("a dripped body arrives whole, and its metrics are final at the end", arguments: TransportKind.allCases)
    func drip(kind: TransportKind) async throws {
        let manager = manager(kind)
        let started = ContinuousClock.now
        let response = try await manager.stream(
            ServerAPI(url: try kind.httpbin("/drip?duration=2&numbytes=4&delay=0")))
        var chunks = response.body.makeAsyncIterator()
        let first = try #require(try await chunks.next())
        let firstAt = ContinuousClock.now - started
        var total = first.count
        while let chunk = try await chunks.next() { total += chunk.count }
        #expect(total == 4)
        // Printed, not asserted: the issue's "well under 2 s" is shown by the hold-body test above.
        print("drip over \(kind): first chunk after \(firstAt), whole body after \(ContinuousClock.now - started)")
        let metrics = await response.finalMetrics
        #expect(metrics.transport?.bytesReceived == 4)
    }

    @Test("a streamed body keeps its transport alive after the caller lets go of it", arguments: TransportKind.allCases)
    func bodyKeepsTransport(kind: TransportKind) async throws {
        var transport: (any RequestPerforming)? = kind.make()
        let response = try await transport!.stream(
            TransportRequest(url: try kind.httpbin("/drip?duration=1&numbytes=3&delay=0")))
        // The only reference to the transport is gone while the server still drips the body.
        transport = nil
        guard case .stream(let body) = response.body else {
            Issue.record("no streamed body")
            return
        }
        #expect(try await body.collect(upTo: 100) == Data("***".utf8))
    }

    @Test("httpbin's JSON lines arrive as lines", arguments: TransportKind.allCases)
    func jsonLines(kind: TransportKind) async throws {
        let response = try await manager(kind).stream(ServerAPI(url: try kind.httpbin("/stream/20")))
        var ids: [Int] = []
        for try await line in response.lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            ids.append(object?["id"] as? Int ?? -1)
        }
        #expect(ids == Array(0..<20))
    }

    @Test("server-sent events follow the WHATWG parsing rules", arguments: TransportKind.allCases)
    func basicEvents(kind: TransportKind) async throws {
        let manager = manager(kind)
        let expected = try await expectedEvents(kind, manager, "/sse/basic/expected")
        let response = try await manager.stream(ServerAPI(url: try kind.fixture("/sse/basic")))
        #expect(response.headers["Content-Type"]?.hasPrefix("text/event-stream") == true)
        try await expectEvents(response, expected)
        #expect(expected.count == 5)
        #expect(expected.map { $0[3] } == ["", "", "1500", "1500", "1500"])
    }

    @Test(
        "LF, CRLF (split across chunks) and CR line ends give the same events",
        arguments: TransportKind.allCases, ["lf", "crlf", "cr"])
    func lineEnds(kind: TransportKind, style: String) async throws {
        let manager = manager(kind)
        let expected = try await expectedEvents(kind, manager, "/sse/lineends/expected")
        let response = try await manager.stream(ServerAPI(url: try kind.fixture("/sse/lineends?style=\(style)")))
        try await expectEvents(response, expected)
    }

    @Test(
        "malformed event streams give events or a typed error, never a crash or a hang",
        arguments: TransportKind.allCases, ["no-blank-line", "invalid-utf8", "absurd-retry"])
    func malformed(kind: TransportKind, name: String) async throws {
        let manager = manager(kind)
        let expected = try await expectedEvents(kind, manager, "/sse/malformed/expected?case=\(name)")
        let response = try await manager.stream(ServerAPI(url: try kind.fixture("/sse/malformed?case=\(name)")))
        try await expectEvents(response, expected)
    }

    @Test(
        "the reconnection time in force at each event is the last valid retry: field before it",
        arguments: TransportKind.allCases,
        ["/sse/basic", "/sse/lineends?style=lf", "/sse/lineends?style=crlf", "/sse/lineends?style=cr"])
    func retryInForce(kind: TransportKind, path: String) async throws {
        let manager = manager(kind)
        // `/sse/lineends/expected` lists the same events for every style.
        let route = path.split(separator: "?", maxSplits: 1)[0]
        let expected = try await expectedEvents(kind, manager, "\(route)/expected")
        #expect(expected.contains { !$0[3].isEmpty })
        let response = try await manager.stream(ServerAPI(url: try kind.fixture(path)))
        #expect(try await eventsWithRetryInForce(response) == expected)
    }

    @Test(
        "an absurd retry: (negative, not digits, past 64 bits) is ignored and the last valid one stays",
        arguments: TransportKind.allCases)
    func absurdRetry(kind: TransportKind) async throws {
        let manager = manager(kind)
        let list = try await json(kind, manager, "/sse/malformed/expected?case=absurd-retry") as? [[String: Any]]
        // The fixture allows a parser to clamp the value past 64 bits instead; ours ignores it, like any other
        // value that is not a number of milliseconds it can hold (ServerSentEventParser.milliseconds).
        #expect(list?.last?["retry_ms_may_be_clamped"] as? Bool == true)
        let expected = try await expectedEvents(kind, manager, "/sse/malformed/expected?case=absurd-retry")
        #expect(
            expected == [
                ["message", "first", "", "1000"], ["message", "second", "", "1000"],
                ["message", "normal", "", "1000"],
            ])
        let url = try kind.fixture("/sse/malformed?case=absurd-retry")
        #expect(try await eventsWithRetryInForce(manager.stream(ServerAPI(url: url))) == expected)
        // Through the manager's own sequence: only the first event's lines carry a valid retry:.
        let (received, reconnection) = try await events(manager.stream(ServerAPI(url: url)))
        #expect(received.map { $0[3] } == ["1000", "", ""])
        #expect(reconnection == "1000")
    }

    @Test("a line longer than the limit ends the events with responseTooLarge", arguments: TransportKind.allCases)
    func longLine(kind: TransportKind) async throws {
        let response = try await manager(kind).stream(
            ServerAPI(url: try kind.fixture("/sse/malformed?case=long-line&size=2097152")))
        let error = await #expect(throws: ServerAPIError.self) {
            for try await _ in response.events {}
        }
        #expect(error?.kind == .responseTooLarge)
        let metrics = await response.finalMetrics
        #expect(metrics.duration > .zero)
    }

    @Test(
        "the event source reconnects with Last-Event-ID after drops and stops on 204",
        arguments: TransportKind.allCases)
    func reconnecting(kind: TransportKind) async throws {
        let manager = manager(kind)
        let key = Self.key()
        var events: [ServerSentEvent] = []
        for try await event in manager.eventSource(ServerAPI(url: try kind.fixture("/sse/reconnect?key=\(key)"))) {
            events.append(event)
        }
        #expect(events.map(\.data) == (1...5).map { "event \($0)" })
        #expect(events.map(\.id) == (1...5).map { "\($0)" })
        // "retry: 50" is among event 1's lines; it stays in force (the fixture's retry_ms) but is no later
        // event's own.
        #expect(events.map(\.retry) == [.milliseconds(50), nil, nil, nil, nil])
        let log = try await json(kind, manager, "/sse/reconnect/log?key=\(key)") as? [String: Any]
        #expect(log?["connections"] as? Int == 3)
        #expect((log?["last_event_ids"] as? [Any])?.map { $0 as? String } == [nil, "3", "5"])
        #expect(manager.inFlight.isEmpty)
    }

    @Test(
        "an event source stops on an error status and refuses a body that is not an event stream",
        arguments: TransportKind.allCases)
    func eventSourceStops(kind: TransportKind) async throws {
        let manager = manager(kind)
        let status = await #expect(throws: ServerAPIError.self) {
            for try await _ in manager.eventSource(ServerAPI(url: try kind.fixture("/sse/status/500"))) {}
        }
        #expect(status?.kind == .httpStatus)
        #expect(status?.bodyExcerpt?.hasPrefix("status 500") == true)
        let type = await #expect(throws: ServerAPIError.self) {
            for try await _ in manager.eventSource(ServerAPI(url: try kind.fixture("/sse/wrong-type"))) {}
        }
        #expect(type?.kind == .decoding)
    }

    @Test("an error status fails the call before the body with an excerpt of it", arguments: TransportKind.allCases)
    func errorStatus(kind: TransportKind) async throws {
        let error = await #expect(throws: ServerAPIError.self) {
            try await manager(kind).stream(ServerAPI(url: try kind.fixture("/status/503")))
        }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 503)
        #expect(error?.bodyExcerpt?.isEmpty == false)
    }

    @Test("a body dropped mid-way ends the stream with a network error", arguments: TransportKind.allCases)
    func droppedMidBody(kind: TransportKind) async throws {
        let response = try await manager(kind).stream(
            ServerAPI(url: try kind.fixture("/close-mid-body?size=100000&after=1000")))
        let error = await #expect(throws: ServerAPIError.self) { try await response.body.collect(upTo: 1 << 20) }
        #expect(error?.kind == .network)
        #expect(error?.requestID == response.requestID)
    }

    /// Where a stream is cancelled.
    enum Point: String, CaseIterable, Sendable {
        /// The server has not answered yet: the call is waiting for the head.
        case beforeHead
        /// The head and a first chunk arrived; the server holds the rest back.
        case midBody
        /// The reader stopped reading; the transport paused on a full buffer.
        case whilePaused
        /// The reader left its `for try await` loop.
        case leavingTheLoop
    }

    /// How a stream is cancelled.
    enum Way: String, CaseIterable, Sendable {
        case tag, id, all, task, stream
    }

    /// Every transport at every point, except a paused URLSession stream: FoundationNetworking cannot pause a
    /// transfer (see `URLSessionStreamingTests.slowReaderIsNotBackpressured`, which pins what it does instead).
    static let cancellationCases: [(TransportKind, Point)] = TransportKind.allCases.flatMap { kind in
        Point.allCases.filter { kind.pausesStreams || $0 != .whilePaused }.map { (kind, $0) }
    }

    @Test("a cancelled stream ends with cancelled and closes its connection", arguments: cancellationCases)
    func cancellation(kind: TransportKind, point: Point) async throws {
        for way in Way.allCases where point != .leavingTheLoop || way == .stream {
            try await cancel(kind: kind, point: point, way: way)
        }
    }

    private func cancel(kind: TransportKind, point: Point, way: Way) async throws {
        let manager = manager(kind)
        let key = Self.key()
        let path: String
        switch point {
        case .beforeHead: path = "/hang"
        case .midBody, .leavingTheLoop: path = "/hold-body?key=\(key)"
        case .whilePaused: path = "/stream-bytes?size=1073741824&key=\(key)"
        }
        let api = ServerAPI(url: try kind.fixture(path)).tag(key)
        let label = "\(kind) \(point) \(way)"
        if point == .beforeHead {
            let task = Task { try await manager.stream(api) }
            try await poll("\(label): in flight", within: .seconds(20), every: .milliseconds(20)) {
                manager.inFlight.count == 1
            }
            switch way {
            case .tag: manager.cancel(tag: key)
            case .id: manager.cancel(id: api.id)
            case .all: manager.cancelAll()
            case .task, .stream: task.cancel()
            }
            let error = await #expect(throws: ServerAPIError.self) { try await task.value }
            #expect(error?.kind == .cancelled, "\(label)")
            #expect(manager.inFlight.isEmpty, "\(label)")
            return
        }
        let response = try await manager.stream(api)
        let firstChunk = EventCounter()
        // A paused reader does other work until the test lets it read again (or its task is cancelled).
        let readAgain = EventCounter()
        let reader = Task { () -> (Int, ServerAPIError?) in
            var bytes = 0
            do {
                for try await chunk in response.body {
                    bytes += chunk.count
                    firstChunk.fire()
                    if point == .leavingTheLoop { break }
                    if point == .whilePaused { await readAgain.wait() }
                }
                return (bytes, nil)
            } catch {
                return (bytes, ServerAPIError.wrap(error))
            }
        }
        await firstChunk.wait()
        if point == .whilePaused {
            // The server is held back: what it sent stops growing well short of the body.
            try await poll("\(label): server held back", within: .seconds(20), every: .milliseconds(20)) {
                let sent = try await sentBytes(kind, manager, key)
                let later = try await sentBytes(kind, manager, key, after: .milliseconds(300))
                return sent > 0 && sent == later
            }
            let sent = try await sentBytes(kind, manager, key)
            #expect(sent < 256 << 20, "\(label): the server sent \(sent) bytes")
        }
        if point != .leavingTheLoop {
            switch way {
            case .tag: #expect(manager.cancel(tag: key).count == 1, "\(label)")
            case .id: #expect(manager.cancel(id: api.id).count == 1, "\(label)")
            case .all: #expect(manager.cancelAll().count == 1, "\(label)")
            case .task: reader.cancel()
            case .stream: response.cancel()
            }
        }
        readAgain.fire()
        let (_, error) = await reader.value
        if point == .leavingTheLoop {
            #expect(error == nil, "\(label)")
        } else {
            #expect(error?.kind == .cancelled, "\(label)")
        }
        _ = await response.finalMetrics
        #expect(manager.inFlight.isEmpty, "\(label)")
        // The server saw the client leave: the connection was closed, not left to dangle.
        let state = point == .whilePaused ? "/stream-bytes/sent?key=\(key)" : "/hold-body/state?key=\(key)"
        try await poll("\(label): connection closed", within: .seconds(20), every: .milliseconds(20)) {
            (try await json(kind, manager, state) as? [String: Any])?["client_left"] as? Bool == true
        }
    }

    private func sentBytes(
        _ kind: TransportKind, _ manager: ServerAPIManager, _ key: String, after delay: Duration = .zero
    ) async throws -> Int {
        if delay > .zero { try await Task.sleep(for: delay) }
        return (try await json(kind, manager, "/stream-bytes/sent?key=\(key)") as? [String: Any])?["sent"] as? Int ?? -1
    }

    @Test(
        "a transport says whether it sends streamed request bodies, and the one that says so does",
        arguments: TransportKind.allCases)
    func streamedRequestBodies(kind: TransportKind) async throws {
        let transport = kind.make()
        #expect(transport.sendsStreamedRequestBodies == (kind != .urlsession))
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("ab".utf8))
            continuation.yield(Data("cd".utf8))
            continuation.finish()
        }
        var request = TransportRequest(
            url: try kind.fixture("/echo"), method: .post, body: .stream(RequestBodyStream(chunks, length: 4)))
        request.headers.add(name: "Content-Type", value: "text/plain")
        if transport.sendsStreamedRequestBodies {
            #expect(try Echo(try await transport.perform(request)).length == 4)
        } else {
            let error = await #expect(throws: ServerAPIError.self) { try await transport.perform(request) }
            #expect(error?.kind == .invalidRequest)
        }
    }
}
