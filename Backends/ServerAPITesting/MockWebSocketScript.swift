import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a `MockTransport` WebSocket server does once it accepted the handshake: a script of steps, played
/// in order.
///
/// ```swift
/// mock.stub(.get, "/chat", .webSocket([
///     .send(.text("welcome")),
///     .expect(.text("hello")),
///     .echo(2),
///     .close(.normalClosure, reason: "bye"),
/// ]))
/// ```
/// Throughout, the mock server answers the client's pings with pongs and its close frame with a close frame
/// (echoing the code), as a real server does. Once the steps are played, it keeps the connection open until
/// the client closes it. A message that does not match an `expect` step is recorded in
/// `MockTransport.webSocketMismatches` and closes the connection with 1008.
public struct MockWebSocketScript: Sendable {
    /// One step of the script.
    public enum Step: Sendable {
        /// The server sends a message, whole, as one frame.
        case send(WebSocketMessage)
        /// The server sends a frame as it is: a fragment, a ping, a close, or bytes a client must reject.
        case sendFrame(WebSocketFrame)
        /// The server waits for the client's next message, which should be this one.
        case expect(WebSocketMessage)
        /// The server echoes the client's next `count` messages.
        case echo(Int)
        /// The server waits on the mock's clock.
        case wait(Duration)
        /// The server closes with a code (`nil`: a close frame without one) and a reason, and waits for the
        /// client's close frame.
        case close(WebSocketCloseCode?, reason: String = "")
        /// The connection breaks: no close frame, no more frames.
        case drop
    }

    /// The steps, in order.
    public var steps: [Step]
    /// The subprotocol the server accepts, sent back in `Sec-WebSocket-Protocol`.
    public var subprotocol: String?

    /// Creates a script.
    public init(_ steps: [Step], subprotocol: String? = nil) {
        self.steps = steps
        self.subprotocol = subprotocol
    }
}

extension MockStub {
    /// Accepts a WebSocket handshake (status 101) and plays `steps`.
    /// - Parameters:
    ///   - steps: The server's script.
    ///   - subprotocol: The subprotocol the server chooses, if any.
    ///   - delay: How long the handshake takes, on the mock's clock.
    public static func webSocket(
        _ steps: [MockWebSocketScript.Step], subprotocol: String? = nil, delay: Duration = .zero
    ) -> MockStub {
        var headers: HTTPHeaders = ["Upgrade": "websocket", "Connection": "Upgrade"]
        if let subprotocol { headers.add(name: "Sec-WebSocket-Protocol", value: subprotocol) }
        var stub = MockStub(.response(status: 101, headers: headers, body: Data()), delay: delay)
        stub.webSocket = MockWebSocketScript(steps, subprotocol: subprotocol)
        return stub
    }
}
