import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPITesting

/// WebSockets in HAR: `RecordingTransport` records `MockTransport`'s scripted sessions, `ReplayingTransport` plays
/// them back through a `ServerAPIManager`, and a browser's export replays too.
@Suite("HAR: WebSocket sessions recorded and replayed", .timeLimit(.minutes(1)))
struct HARWebSocketTests {
    static let chat = ServerAPI(host: "ws://api.test", path: "/chat")

    /// The mock server of most tests: a greeting, a text question and its answer, a binary one and its answer,
    /// then a close with 4000 "bye".
    static let script: [MockWebSocketScript.Step] = [
        .send(.text("welcome")),
        .expect(.text("hello")),
        .send(.text("hi there")),
        .expect(.binary(Data([1, 2, 3]))),
        .send(.binary(Data([0, 255, 7]))),
        .close(WebSocketCloseCode(4000), reason: "bye"),
    ]

    /// What a client saw of a session: the messages, then how it ended.
    struct Session: Hashable, CustomStringConvertible {
        var received: [WebSocketMessage]
        var end: String

        var description: String { "\(received) then \(end)" }
    }

    /// Reads the greeting, asks in text and in binary (each after the answer before), then reads to the end.
    static func converse(_ socket: WebSocket) async -> Session {
        var received: [WebSocketMessage] = []
        var iterator = socket.messages.makeAsyncIterator()
        do {
            if let greeting = try await iterator.next() { received.append(greeting) }
            try await socket.send(.text("hello"))
            if let answer = try await iterator.next() { received.append(answer) }
            try await socket.send(.binary(Data([1, 2, 3])))
            while let message = try await iterator.next() { received.append(message) }
            return Session(
                received: received,
                end: "closed \(socket.closeCode.map(String.init(describing:)) ?? "-") \(socket.closeReason ?? "-")")
        } catch {
            let failure = ServerAPIError.wrap(error)
            return Session(received: received, end: "failed \(failure.kind.rawValue): \(failure.message)")
        }
    }

    /// Records `script` at /chat through a mock into `file`, with the entries' times on a `TestClock`.
    static func record(
        _ file: URL, _ script: [MockWebSocketScript.Step], api: ServerAPI = chat,
        redaction: HARRedaction = .default, client: (WebSocket) async -> Session
    ) async throws -> (Session, MockTransport) {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket(script))
        let recording = RecordingTransport(
            upstream: mock, recorder: HARRecorder(file: file), redaction: redaction, now: TestClock().dateSource)
        let socket = try await ServerAPIManager(transport: recording).webSocket(api)
        let session = await client(socket)
        return (session, mock)
    }

    @Test("a recorded session is saved as Chrome writes one, loaded, and replayed with the same messages and close")
    func recordSaveLoadReplay() async throws {
        let scratch = try Scratch()
        let file = scratch.file("chat.har")
        let (live, mock) = try await Self.record(file, Self.script, client: Self.converse)
        #expect(
            live
                == Session(
                    received: [.text("welcome"), .text("hi there"), .binary(Data([0, 255, 7]))], end: "closed 4000 bye")
        )
        #expect(mock.webSocketMismatches.isEmpty)

        // The file, as JSON: what a browser's HAR viewer reads.
        let data = try Data(contentsOf: file)
        #expect(HARValidator.problems(data) == [])
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try #require((json["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry["_resourceType"] as? String == "websocket")
        #expect((entry["request"] as? [String: Any])?["url"] as? String == "ws://api.test/chat")
        #expect((entry["response"] as? [String: Any])?["status"] as? Int == 101)
        let messages = try #require(entry["_webSocketMessages"] as? [[String: Any]])
        #expect(messages.map { $0["type"] as? String } == ["receive", "send", "receive", "send", "receive"])
        #expect(messages.map { $0["opcode"] as? Int } == [1, 1, 1, 2, 2])
        #expect(messages.map { $0["data"] as? String } == ["welcome", "hello", "hi there", "AQID", "AP8H"])
        let start = TestClock.startDate.timeIntervalSince1970
        #expect(messages.map { $0["time"] as? Double } == Array(repeating: start, count: 5))
        let close = try #require(entry["_webSocketClose"] as? [String: Any])
        #expect(close["type"] as? String == "receive")
        #expect(close["code"] as? Int == 4000)
        #expect(close["reason"] as? String == "bye")
        #expect(close["dropped"] as? Bool == false)

        let replay = try ReplayingTransport(file: file)
        let socket = try await ServerAPIManager(transport: replay).webSocket(Self.chat)
        #expect(await Self.converse(socket) == live)
        #expect(replay.unusedEntries.isEmpty)
    }

    @Test(
        """
        a compressed session (permessage-deflate) is recorded as the application saw it, inflated, and replays to a \
        client with compression on or off
        """)
    func compressedSession() async throws {
        let scratch = try Scratch()
        let file = scratch.file("chat.har")
        let long = String(repeating: "a long answer that compresses well; ", count: 20)
        let script: [MockWebSocketScript.Step] = [
            .send(.text("welcome")), .expect(.text("hello")), .send(.text(long)), .expect(.binary(Data([1, 2, 3]))),
            .send(.binary(Data(count: 4096))), .close(WebSocketCloseCode(4000), reason: "bye"),
        ]
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket(script, compression: "permessage-deflate"))
        let recording = RecordingTransport(
            upstream: mock, recorder: HARRecorder(file: file), now: TestClock().dateSource)
        let socket = try await ServerAPIManager(transport: recording).webSocket(Self.chat)
        #expect(socket.compression != nil, "the live session is compressed")
        let live = await Self.converse(socket)
        #expect(
            live
                == Session(
                    received: [.text("welcome"), .text(long), .binary(Data(count: 4096))], end: "closed 4000 bye"))
        #expect(mock.webSocketMismatches.isEmpty)

        let data = try Data(contentsOf: file)
        #expect(HARValidator.problems(data) == [])
        let json = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entry = try #require(((json["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
        let messages = try #require(entry["_webSocketMessages"] as? [[String: Any]])
        #expect(
            messages.map { $0["data"] as? String } == [
                "welcome", "hello", long, "AQID", Data(count: 4096).base64EncodedString(),
            ])

        // Compression on: the recorded agreement is replayed, and the client's compressed messages are inflated to
        // be compared.
        let replay = try ReplayingTransport(file: file)
        let compressed = try await ServerAPIManager(transport: replay).webSocket(Self.chat)
        #expect(compressed.compression != nil)
        #expect(await Self.converse(compressed) == live)
        // Compression off: the replayed server declines it, as a live one would.
        let plain = try await ServerAPIManager(transport: try ReplayingTransport(file: file)).webSocket(
            Self.chat, configuration: .init(compression: nil))
        #expect(plain.compression == nil)
        #expect(plain.headers["Sec-WebSocket-Extensions"] == nil)
        #expect(await Self.converse(plain) == live)
    }

    @Test("a client message that differs from the recording throws notRecorded and the replay closes with 1008")
    func mismatch() async throws {
        let scratch = try Scratch()
        let file = scratch.file("chat.har")
        _ = try await Self.record(file, Self.script, client: Self.converse)

        let socket = try await ServerAPIManager(transport: try ReplayingTransport(file: file)).webSocket(Self.chat)
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("welcome"))
        let error = await expectError { try await socket.send(.text("hola")) }
        #expect(error?.kind == .notRecorded)
        #expect(
            error?.message
                == "the WebSocket of entry 1 of 1 in chat.har (GET ws://api.test/chat) did not record the client's "
                + #"message 1: it sent text "hola", where the recording has text "hello". The replayed server closed "#
                + "the connection with 1008. Record the session again with the mode .recordAll and an upstream "
                + "transport.")
        #expect(try await iterator.next() == nil)
        #expect(socket.closeCode == .policyViolation)
        #expect(socket.closeReason == "not recorded: message 1 differs")
        #expect(socket.isClosed)
    }

    @Test("a message past the end of what the client sent is not recorded either")
    func messagePastTheRecording() async throws {
        let scratch = try Scratch()
        let file = scratch.file("chat.har")
        // The client closes first: the replay then stays open until it closes.
        _ = try await Self.record(file, [.send(.text("welcome")), .echo(1)]) { socket in
            var iterator = socket.messages.makeAsyncIterator()
            _ = try? await iterator.next()
            try? await socket.send(.text("one"))
            _ = try? await iterator.next()
            await socket.close(code: WebSocketCloseCode(4001), reason: "done")
            return Session(received: [], end: "")
        }
        let archive = try HARArchive(contentsOf: file)
        #expect(archive.entries.first?.webSocketClose?.type == .send)
        #expect(archive.entries.first?.webSocketClose?.code == 4001)
        // The mock server answers with the code alone.
        #expect(archive.entries.first?.webSocketClose?.answer == HARArchive.RecordedClose.Answer(code: 4001))

        let socket = try await ServerAPIManager(transport: try ReplayingTransport(file: file)).webSocket(Self.chat)
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("welcome"))
        try await socket.send(.text("one"))
        #expect(try await iterator.next() == .text("one"))
        let error = await expectError { try await socket.send(.binary(Data([9]))) }
        // Were the message taken, the connection would stay open: close it rather than wait on it.
        guard error != nil else { return await socket.close() }
        #expect(error?.kind == .notRecorded)
        #expect(
            error?.message.contains(
                "message 2: it sent binary (1 bytes), where the recording has no more messages from the client") == true
        )
        #expect(try await iterator.next() == nil)
        #expect(socket.closeCode == .policyViolation)
    }

    @Test("a refused handshake is recorded with its status and body, and replays as the same httpStatus error")
    func refusal() async throws {
        let scratch = try Scratch()
        let file = scratch.file("refused.har")
        let mock = MockTransport()
        mock.stub(.get, "/chat", .text("sign in first", status: 401))
        let recording = RecordingTransport(recording: mock, to: file)
        let live = await expectError { try await ServerAPIManager(transport: recording).webSocket(Self.chat) }
        #expect(live?.kind == .httpStatus)
        #expect(live?.status == 401)

        let entry = try #require(try HARArchive(contentsOf: file).entries.first)
        #expect(entry.resourceType == "websocket")
        #expect(entry.request.url == "ws://api.test/chat")
        #expect(entry.response.status == 401)
        #expect(entry.response.content.text == "sign in first")
        #expect(entry.webSocketClose == nil)

        let replayed = await expectError {
            try await ServerAPIManager(transport: try ReplayingTransport(file: file)).webSocket(Self.chat)
        }
        #expect(replayed?.kind == .httpStatus)
        #expect(replayed?.status == 401)
        #expect(replayed?.message == live?.message)
        #expect(replayed?.bodyExcerpt == "sign in first")
        #expect(replayed?.bodyExcerpt == live?.bodyExcerpt)
    }

    @Test("a connection dropped without a close frame replays as the same network failure")
    func dropped() async throws {
        let scratch = try Scratch()
        let file = scratch.file("dropped.har")
        let (live, _) = try await Self.record(file, [.send(.text("welcome")), .expect(.text("hello")), .drop]) {
            await Self.converse($0)
        }
        #expect(live.received == [.text("welcome")])
        #expect(live.end.hasPrefix("failed network: ") && live.end.contains("without a close frame (1006)"))
        let close = try #require(try HARArchive(contentsOf: file).entries.first?.webSocketClose)
        #expect(close.type == .receive)
        #expect(close.dropped)
        #expect(close.code == nil)

        let socket = try await ServerAPIManager(transport: try ReplayingTransport(file: file)).webSocket(Self.chat)
        #expect(await Self.converse(socket) == live)
    }

    @Test(
        "the handshake's Authorization is redacted, and so is the token wherever a message carries it; replay matches")
    func redaction() async throws {
        let scratch = try Scratch()
        let file = scratch.file("secret.har")
        let token = "s3cr3t-token-value"
        let api = Self.chat.header("Authorization", "Bearer \(token)")
        let script: [MockWebSocketScript.Step] = [
            .expect(.text("login \(token)")),
            .send(.text("welcome, holder of \(token)")),
            .expect(.text(#"{"password":"hunter22","user":"ada"}"#)),
            .send(.text("ok")),
            .close(.normalClosure),
        ]
        let client = { (socket: WebSocket) -> Session in
            var received: [WebSocketMessage] = []
            var iterator = socket.messages.makeAsyncIterator()
            do {
                try await socket.send(.text("login \(token)"))
                if let message = try await iterator.next() { received.append(message) }
                try await socket.send(.text(#"{"password":"hunter22","user":"ada"}"#))
                while let message = try await iterator.next() { received.append(message) }
                return Session(received: received, end: "closed \(socket.closeCode.map(\.description) ?? "-")")
            } catch {
                return Session(received: received, end: "failed \(error)")
            }
        }
        let (live, mock) = try await Self.record(
            file, script, api: api, redaction: HARRedaction(jsonFields: ["password"]), client: client)
        #expect(mock.webSocketMismatches.isEmpty)
        #expect(live.end == "closed 1000")

        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains(token))
        #expect(!text.contains("hunter22"))
        let entry = try #require(try HARArchive(contentsOf: file).entries.first)
        #expect(entry.request.headers.first { $0.name == "Authorization" }?.value == "Bearer REDACTED")
        #expect(
            entry.webSocketMessages?.map(\.data) == [
                "login REDACTED", "welcome, holder of REDACTED", #"{"password":"REDACTED","user":"ada"}"#, "ok",
            ])

        // The replay redacts what the client sends before comparing, with the same redaction.
        let replay = try ReplayingTransport(
            file: file, configuration: .init(redaction: HARRedaction(jsonFields: ["password"])))
        let socket = try await ServerAPIManager(transport: replay).webSocket(api)
        let replayed = await client(socket)
        #expect(replayed == Session(received: [.text("welcome, holder of REDACTED"), .text("ok")], end: "closed 1000"))
    }

    @Test("a file written while a socket is open holds its messages so far, replays them, and stays open")
    func savedWhileOpen() async throws {
        let scratch = try Scratch()
        let file = scratch.file("open.har")
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.send(.text("welcome")), .echo(5)]))
        mock.stub(.get, "/status", .text("up"))
        let manager = ServerAPIManager(transport: RecordingTransport(recording: mock, to: file))
        let socket = try await manager.webSocket(Self.chat)
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("welcome"))
        try await socket.send(.text("one"))
        #expect(try await iterator.next() == .text("one"))
        // Another exchange writes the file while the socket is open.
        _ = try await manager.send(ServerAPI(host: "https://api.test", path: "/status").format(.string))
        let saved = scratch.file("saved.har")
        try FileManager.default.copyItem(at: file, to: saved)
        let open = try #require(try HARArchive(contentsOf: saved).entries.first)
        #expect(open.webSocketMessages?.map(\.data) == ["welcome", "one", "one"])
        #expect(open.webSocketClose == nil)

        await socket.close(code: .normalClosure)
        let closed = try #require(try HARArchive(contentsOf: file).entries.first)
        #expect(closed.webSocketClose?.type == .send)
        #expect(closed.webSocketClose?.code == 1000)

        // The saved file has no end: the replay plays what it has, then stays open until the client closes.
        let replayed = try await ServerAPIManager(transport: try ReplayingTransport(file: saved)).webSocket(Self.chat)
        var replayedIterator = replayed.messages.makeAsyncIterator()
        #expect(try await replayedIterator.next() == .text("welcome"))
        try await replayed.send(.text("one"))
        #expect(try await replayedIterator.next() == .text("one"))
        try await replayed.ping(timeout: .seconds(10))
        #expect(!replayed.isClosed)
        await replayed.close()
        #expect(try await replayedIterator.next() == nil)
        #expect(replayed.isClosed)
    }

    /// A browser's export, written by hand in Chrome's format: a `wss://` URL, `_resourceType`, text and binary
    /// messages (base64), no close for the first socket; for the second an "error" row, a ping and a close frame.
    static let browser = #"""
        {"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"pages":[],"entries":[
          {"startedDateTime":"2026-03-01T10:00:00.000Z","time":5021.3,
           "request":{"method":"GET","url":"wss://stream.example/live?room=7","httpVersion":"HTTP/1.1",
             "headers":[{"name":"Upgrade","value":"websocket"},{"name":"Sec-WebSocket-Version","value":"13"},
               {"name":"Sec-WebSocket-Key","value":"dGhlIHNhbXBsZSBub25jZQ=="}],
             "queryString":[{"name":"room","value":"7"}],"cookies":[],"headersSize":412,"bodySize":0},
           "response":{"status":101,"statusText":"Switching Protocols","httpVersion":"HTTP/1.1",
             "headers":[{"name":"Upgrade","value":"websocket"},{"name":"Connection","value":"Upgrade"},
               {"name":"Sec-WebSocket-Accept","value":"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="}],
             "cookies":[],"content":{"size":0,"mimeType":"x-unknown","compression":129},"redirectURL":"",
             "headersSize":129,"bodySize":-129,"_transferSize":0},
           "cache":{},"timings":{"blocked":-1,"dns":-1,"ssl":-1,"connect":-1,"send":0,"wait":5021.3,"receive":0,
             "_blocked_queueing":-1},
           "serverIPAddress":"","_initiator":{"type":"script"},"_priority":null,"_resourceType":"websocket",
           "_webSocketMessages":[
             {"type":"receive","time":1772359200.101,"opcode":1,"data":"{\"hello\":\"stream\"}"},
             {"type":"send","time":1772359200.25,"opcode":1,"data":"subscribe prices"},
             {"type":"receive","time":1772359200.252,"opcode":1,"data":"subscribed"},
             {"type":"receive","time":1772359200.301,"opcode":2,"data":"AAEC/w=="},
             {"type":"send","time":1772359201.004,"opcode":2,"data":"3q2+7w=="},
             {"type":"receive","time":1772359201.007,"opcode":2,"data":"3q2+7w=="}]},
          {"startedDateTime":"2026-03-01T10:00:06.000Z","time":120,
           "request":{"method":"GET","url":"wss://stream.example/once","httpVersion":"HTTP/1.1",
             "headers":[{"name":"sec-websocket-key","value":"AQIDBAUGBwgJCgsMDQ4PEA=="}],
             "queryString":[],"cookies":[],"headersSize":300,"bodySize":0},
           "response":{"status":101,"statusText":"Switching Protocols","httpVersion":"HTTP/1.1",
             "headers":[{"name":"upgrade","value":"websocket"},{"name":"connection","value":"Upgrade"},
               {"name":"sec-websocket-accept","value":"\#(WebSocketHandshakeRule.accept(forKey: "AQIDBAUGBwgJCgsMDQ4PEA=="))"}],
             "cookies":[],"content":{"size":0,"mimeType":"x-unknown"},"redirectURL":"","headersSize":129,
             "bodySize":-129},
           "cache":{},"timings":{"send":0,"wait":120,"receive":0},"_resourceType":"websocket",
           "_webSocketMessages":[
             {"type":"receive","time":1772359206.01,"opcode":1,"data":"only"},
             {"type":"error","time":1772359206.02,"opcode":-1,"data":"net::ERR_WS_PROTOCOL_ERROR"},
             {"type":"receive","time":1772359206.03,"opcode":9,"data":""},
             {"type":"receive","time":1772359206.04,"opcode":8,"data":"D6BieWU="}]}
        ]}}
        """#

    @Test("a browser's export replays: wss:// URL, text and base64 binary messages, Chrome's close frame")
    func browserArchive() async throws {
        #expect(HARValidator.problems(Data(Self.browser.utf8)) == [])
        let archive = try HARArchive(data: Data(Self.browser.utf8), name: "chrome.har")
        let manager = ServerAPIManager(transport: try ReplayingTransport(archive: archive))

        let socket = try await manager.webSocket(ServerAPI(url: URL(string: "wss://stream.example/live?room=7")!))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text(#"{"hello":"stream"}"#))
        try await socket.send(.text("subscribe prices"))
        #expect(try await iterator.next() == .text("subscribed"))
        #expect(try await iterator.next() == .binary(Data([0, 1, 2, 255])))
        try await socket.send(.binary(Data([0xDE, 0xAD, 0xBE, 0xEF])))
        #expect(try await iterator.next() == .binary(Data([0xDE, 0xAD, 0xBE, 0xEF])))
        // No close in the file: the connection stays open, and answers a ping, until the client closes it.
        try await socket.ping(timeout: .seconds(10))
        #expect(!socket.isClosed)
        await socket.close()
        #expect(try await iterator.next() == nil)

        let once = try await manager.webSocket(ServerAPI(url: URL(string: "wss://stream.example/once")!))
        var onceIterator = once.messages.makeAsyncIterator()
        #expect(try await onceIterator.next() == .text("only"))
        #expect(try await onceIterator.next() == nil)
        #expect(once.closeCode == WebSocketCloseCode(4000))
        #expect(once.closeReason == "bye")
        #expect(manager.inFlight.isEmpty)
    }

    @Test("the client's close is answered as the server answered it in the recording")
    func recordedAnswer() async throws {
        let key = WebSocketHandshakeRule.newKey()
        var entry = HARArchive.Entry(
            startedDateTime: "2026-03-01T10:00:00.000Z", time: 1,
            request: HARArchive.Request(
                method: "GET", url: "ws://api.test/chat", headers: [.init(name: "Sec-WebSocket-Key", value: key)]),
            response: HARArchive.Response(
                status: 101,
                headers: [
                    .init(name: "Upgrade", value: "websocket"), .init(name: "Connection", value: "Upgrade"),
                    .init(name: "Sec-WebSocket-Accept", value: WebSocketHandshakeRule.accept(forKey: key)),
                ]),
            timings: HARArchive.Timings())
        entry.resourceType = "websocket"
        entry.webSocketMessages = [HARArchive.RecordedMessage(.text("welcome"), type: .receive, time: 1)]
        entry.webSocketClose = HARArchive.RecordedClose(
            type: .send, time: 2, code: 1000, answer: HARArchive.RecordedClose.Answer(code: 4002, reason: "see you"))
        let manager = ServerAPIManager(transport: try ReplayingTransport(archive: HARArchive(entries: [entry])))
        let socket = try await manager.webSocket(Self.chat)
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("welcome"))
        await socket.close()
        #expect(try await iterator.next() == nil)
        #expect(socket.closeCode == WebSocketCloseCode(4002))
        #expect(socket.closeReason == "see you")
    }

    @Test(
        "a recorded 101 whose accept does not match its recorded key, or that has no key to match, fails the handshake")
    func unprovenRecordedUpgrade() async throws {
        for change in ["accept", "key"] {
            var archive = try HARArchive(data: Data(Self.browser.utf8))
            if change == "accept" {
                archive.entries[0].response.headers[2].value = "AAAAAAAAAAAAAAAAAAAAAAAAAAA="
            } else {
                archive.entries[0].request.headers.removeAll { $0.name == "Sec-WebSocket-Key" }
            }
            let manager = ServerAPIManager(transport: try ReplayingTransport(archive: archive))
            let error = await expectError {
                try await manager.webSocket(ServerAPI(url: URL(string: "wss://stream.example/live?room=7")!))
            }
            #expect(error?.kind == .network, "\(change)")
            #expect(
                error?.message
                    == "the WebSocket handshake's answer has a Sec-WebSocket-Accept that does not match the request's "
                    + "key (RFC 6455 §4.1)", "\(change)")
            #expect(manager.inFlight.isEmpty)
        }
    }

    @Test("a binary message whose data is not base64 is refused with the archive, naming the entry and the message")
    func badBinary() async throws {
        var archive = try HARArchive(data: Data(Self.browser.utf8))
        archive.entries[0].webSocketMessages?[3].data = "not base64!"
        let error = await expectError { try ReplayingTransport(archive: archive) }
        #expect(error?.kind == .decoding)
        #expect(
            error?.message
                == "entry 1 of 2 in the HAR archive: the data of message 4 in _webSocketMessages is not base64, as its "
                + "opcode 2 says it is")
    }
}
