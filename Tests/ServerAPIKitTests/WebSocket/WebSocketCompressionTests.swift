import Foundation
import ServerAPITestSupport
@_spi(Transport) import ServerAPITesting
import Testing

@_spi(Backend) @_spi(Transport) @testable import ServerAPIKit

@Suite("WebSocket compression through the manager (permessage-deflate over MockTransport)")
struct WebSocketCompressionTests {
    private static let chat = ServerAPI(host: "ws://api.test", path: "/chat")
    private static let long = String(repeating: "a compressible line of text, ", count: 40)

    @Test("offered by default and agreed: messages go both ways compressed and arrive as they were sent")
    func agreed() async throws {
        let mock = MockTransport()
        mock.stub(
            .get, "/chat",
            .webSocket(
                [.send(.text(Self.long)), .expect(.binary(Data(count: 5000))), .echo(2)],
                compression: "permessage-deflate"))
        let manager = ServerAPIManager(transport: mock)
        let socket = try await manager.webSocket(Self.chat)
        #expect(socket.compression == WebSocketDeflateParameters())
        #expect(socket.headers["Sec-WebSocket-Extensions"] == "permessage-deflate")
        #expect(
            mock.requests.first?.headers["Sec-WebSocket-Extensions"] == "permessage-deflate; client_max_window_bits")
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text(Self.long))
        try await socket.send(.binary(Data(count: 5000)))
        try await socket.send(.text(Self.long))
        try await socket.send(.text("short"))
        #expect(try await iterator.next() == .text(Self.long))
        #expect(try await iterator.next() == .text("short"))
        await socket.close()
        #expect(try await iterator.next() == nil)
        #expect(mock.webSocketMismatches.isEmpty)
        #expect(mock.webSocketClosesReceived == [.normalClosure])
    }

    @Test("compression off: nothing is offered, and a server that would compress sends plain messages")
    func off() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.send(.text(Self.long)), .echo(1)], compression: "permessage-deflate"))
        let socket = try await ServerAPIManager(transport: mock).webSocket(
            Self.chat, configuration: .init(compression: nil))
        #expect(socket.compression == nil)
        #expect(mock.requests.first?.headers["Sec-WebSocket-Extensions"] == nil)
        #expect(socket.headers["Sec-WebSocket-Extensions"] == nil)
        try await socket.send(.text(Self.long))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text(Self.long))
        #expect(try await iterator.next() == .text(Self.long))
        await socket.close()
    }

    @Test("the server's parameters are honoured: context takeover off both ways, a 9-bit client window")
    func parameters() async throws {
        let mock = MockTransport()
        let answer =
            "permessage-deflate; client_no_context_takeover; server_no_context_takeover; client_max_window_bits=9"
        mock.stub(.get, "/chat", .webSocket([.echo(4)], compression: answer))
        let socket = try await ServerAPIManager(transport: mock).webSocket(Self.chat)
        #expect(
            socket.compression
                == WebSocketDeflateParameters(
                    clientMaxWindowBits: 9, clientNoContextTakeover: true, serverNoContextTakeover: true))
        var iterator = socket.messages.makeAsyncIterator()
        for index in 0..<4 {
            try await socket.send(.text(Self.long + "\(index)"))
            #expect(try await iterator.next() == .text(Self.long + "\(index)"))
        }
        await socket.close()
        #expect(mock.webSocketMismatches.isEmpty)
    }

    @Test("answers the client must refuse fail the handshake with network, naming why, and leave nothing in flight")
    func refusedAnswers() async throws {
        typealias Failure = WebSocketDeflateNegotiation.Failure
        let cases: [(String, Failure)] = [
            ("permessage-deflate; mystery=1", .unknownParameter("mystery")),
            (
                "permessage-deflate; server_max_window_bits=16",
                .invalidValue(parameter: "server_max_window_bits", value: "16")
            ),
            (
                "permessage-deflate; client_no_context_takeover; client_no_context_takeover",
                .repeatedParameter("client_no_context_takeover")
            ),
            ("permessage-deflate, permessage-deflate", .repeatedExtension),
        ]
        for (answer, expected) in cases {
            let mock = MockTransport()
            mock.stub(.get, "/chat", .webSocket([], compression: answer))
            let manager = ServerAPIManager(transport: mock)
            let error = await expectError { try await manager.webSocket(Self.chat) }
            #expect(error?.kind == .network, "\(answer)")
            #expect(error?.underlying as? Failure == expected, "\(answer): \(String(describing: error))")
            #expect(error?.message.contains("RFC 7692") == true)
            #expect(manager.inFlight.isEmpty)
        }
        // A window the client asked the server to stay under, answered above it.
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([], compression: "permessage-deflate; server_max_window_bits=15"))
        let error = await expectError {
            try await ServerAPIManager(transport: mock).webSocket(
                Self.chat, configuration: .init(compression: .init(serverMaxWindowBits: 10)))
        }
        #expect(error?.underlying as? Failure == .serverWindowNotHonoured(asked: 10, answered: 15))
        #expect(
            mock.requests.first?.headers["Sec-WebSocket-Extensions"]
                == "permessage-deflate; client_max_window_bits; server_max_window_bits=10")
    }

    @Test("a configuration out of range fails before any handshake, as an invalid request")
    func invalidConfiguration() async {
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([]))
        let error = await expectError {
            try await ServerAPIManager(transport: mock).webSocket(
                Self.chat, configuration: .init(compression: .init(clientMaxWindowBits: 20)))
        }
        #expect(error?.kind == .invalidRequest)
        #expect(mock.requests.isEmpty)
    }

    @Test("an inflate bomb closes with 1009 and fails with responseTooLarge")
    func bomb() async throws {
        var server = WebSocketDeflateSender(windowBits: 15, noContextTakeover: false)
        let bomb = try server.frame(for: .binary(Data(count: 32 << 20)))
        let mock = MockTransport()
        mock.stub(.get, "/chat", .webSocket([.sendFrame(bomb), .echo(1)], compression: "permessage-deflate"))
        let socket = try await ServerAPIManager(transport: mock).webSocket(
            Self.chat, configuration: .init(maxMessageSize: 1 << 20))
        let (messages, error) = await socket.collectMessages()
        #expect(messages.isEmpty)
        #expect(error?.kind == .responseTooLarge)
        try await poll("the client's close frame") { !mock.webSocketClosesReceived.isEmpty }
        #expect(mock.webSocketClosesReceived == [.messageTooBig])
    }

    @Test("RSV1 from a server that did not agree on compression closes with 1002")
    func unagreedRSV1() async throws {
        let mock = MockTransport()
        let frame = WebSocketFrame(.text, payload: Data([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]), rsv1: true)
        mock.stub(.get, "/chat", .webSocket([.sendFrame(frame), .echo(1)]))
        let socket = try await ServerAPIManager(transport: mock).webSocket(Self.chat)
        #expect(socket.compression == nil)
        let (messages, error) = await socket.collectMessages()
        #expect(messages.isEmpty)
        #expect(error?.kind == .network)
        try await poll("the client's close frame") { !mock.webSocketClosesReceived.isEmpty }
        #expect(mock.webSocketClosesReceived == [.protocolError])
    }

    /// A transport whose connection keeps every frame the client sends, behind a 101 that agrees on compression.
    private final class Capturing: RequestPerforming, WebSocketConnection {
        let frames = Locked<[WebSocketFrame]>([])
        var name: String { "capturing" }
        var carriesWebSocketExtensions: Bool { true }

        func perform(_ request: TransportRequest) async throws -> TransportResponse {
            throw ServerAPIError(.network, "unused")
        }

        func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade {
            var headers: HTTPHeaders = ["Upgrade": "websocket", "Connection": "Upgrade"]
            headers.add(
                name: "Sec-WebSocket-Accept",
                value: WebSocketHandshakeRule.accept(forKey: request.headers["Sec-WebSocket-Key"] ?? ""))
            headers.add(name: "Sec-WebSocket-Extensions", value: "permessage-deflate")
            return WebSocketUpgrade(
                response: TransportResponse(status: 101, headers: headers, body: .data(Data()), url: request.url),
                connection: self)
        }

        func send(_ frame: WebSocketFrame) async throws {
            // A transport that yields between taking the frame and writing it: frames must still leave in order.
            await Task.yield()
            frames.withLock { $0.append(frame) }
        }

        /// Nothing arrives: the reader waits until the connection is closed or its task cancelled.
        private let silence = AsyncStream<Never>.makeStream()

        func receive() async throws -> WebSocketFrame? {
            for await _ in silence.stream {}
            return nil
        }

        func close() { silence.continuation.finish() }
    }

    @Test("on the wire: RSV1 on messages of the minimum size and more only, and concurrent sends inflate in order")
    func wire() async throws {
        let transport = Capturing()
        let socket = try await ServerAPIManager(transport: transport).webSocket(Self.chat)
        try await socket.send(.text(String(repeating: "x", count: 63)))
        try await socket.send(.text(String(repeating: "x", count: 64)))
        let sizes = transport.frames.withLock { $0.map { ($0.rsv1, $0.payload.count) } }
        #expect(sizes.map(\.0) == [false, true])
        #expect(sizes[0].1 == 63)
        #expect(sizes[1].1 < 64)
        // Context takeover: each compressed message may refer to the ones before it. Sent from many tasks at once,
        // they must reach the transport in the order they were compressed, or the server could not inflate them.
        let messages = (0..<40).map { WebSocketMessage.text(Self.long + "\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for message in messages { group.addTask { try await socket.send(message) } }
            try await group.waitForAll()
        }
        var server = WebSocketDeflateReceiver(windowBits: 15, maxMessageSize: 1 << 20)
        var received: [WebSocketMessage] = []
        for frame in transport.frames.withLock({ $0 }) {
            guard case .success(let inflated) = server.receive(frame) else {
                Issue.record("a frame did not inflate in the order it was sent")
                break
            }
            received.append(.text(String(decoding: inflated.payload, as: UTF8.self)))
        }
        #expect(Set(received.dropFirst(2)) == Set(messages))
        socket.cancel()
    }
}
