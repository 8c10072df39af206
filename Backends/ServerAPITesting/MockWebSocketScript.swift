@_spi(Transport) import ServerAPIKit

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
/// (echoing the code), as a real server does. With `compression`, it accepts the client's permessage-deflate offer
/// with that answer, compresses every message it sends and inflates those the client compresses. Once the steps are played, it keeps the connection open until
/// the client closes it. A message that does not match an `expect` step is recorded in
/// `MockTransport.webSocketMismatches` and closes the connection with 1008.
public struct MockWebSocketScript: Sendable {
    /// One step of the script.
    public enum Step: Sendable {
        /// The server sends a message, whole, as one frame.
        case send(WebSocketMessage)
        /// The server sends a frame as it is: a fragment, a ping, a close, or bytes a client must reject.
        ///
        /// Frames are the `Transport` SPI's (`@_spi(Transport) import ServerAPIKit`): a test of the WebSocket
        /// protocol itself, below the messages an app sends and receives, imports it.
        @_spi(Transport) case sendFrame(WebSocketFrame)
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
    /// The `Sec-WebSocket-Extensions` the server answers a permessage-deflate offer with, such as
    /// `"permessage-deflate"` or `"permessage-deflate; server_no_context_takeover"`; `nil` (the default) declines
    /// compression, as does a handshake that offers none. Sent as it is: an answer a client must refuse (RFC 7692
    /// §7.1) tests that it does.
    public var compression: String?

    /// Creates a script.
    /// - Parameters:
    ///   - steps: The steps, in order.
    ///   - subprotocol: The subprotocol the server accepts.
    ///   - compression: The answer to a permessage-deflate offer; `nil` declines it.
    public init(_ steps: [Step], subprotocol: String? = nil, compression: String? = nil) {
        self.steps = steps
        self.subprotocol = subprotocol
        self.compression = compression
    }
}

extension MockStub {
    /// Accepts a WebSocket handshake (status 101) and plays `steps`.
    /// - Parameters:
    ///   - steps: The server's script.
    ///   - subprotocol: The subprotocol the server chooses, if any.
    ///   - compression: The answer to the client's permessage-deflate offer (`"permessage-deflate"` accepts it);
    ///     `nil` declines it.
    ///   - delay: How long the handshake takes, on the mock's clock.
    public static func webSocket(
        _ steps: [MockWebSocketScript.Step], subprotocol: String? = nil, compression: String? = nil,
        delay: Duration = .zero
    ) -> MockStub {
        var headers: HTTPHeaders = ["Upgrade": "websocket", "Connection": "Upgrade"]
        if let subprotocol { headers.add(name: "Sec-WebSocket-Protocol", value: subprotocol) }
        var stub = MockStub(.response(status: 101, headers: headers, body: Data()), delay: delay)
        stub.webSocket = MockWebSocketScript(steps, subprotocol: subprotocol, compression: compression)
        return stub
    }
}
