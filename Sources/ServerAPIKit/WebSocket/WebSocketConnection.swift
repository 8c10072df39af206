#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An open WebSocket connection as a transport gives it to the core: it moves frames, nothing more.
///
/// The core (`WebSocket`) drives it: it sends frames, reads them one at a time, and closes it. Reassembly,
/// UTF-8, limits, pings, pongs and the close handshake are the core's: a transport never answers a ping or a
/// close frame by itself, and hands every frame it receives to `receive()` in order.
///
/// To write a conformer:
/// - `send(_:)` sends one frame, whole, and returns once it is handed to the connection (it may queue it, within a
///   bound, and return before it is written; a close frame it returns after writing, as the core tears the
///   connection down next); calls may overlap (the core's reader answers pings while the user sends), and each
///   frame goes out whole, in call order.
/// - `receive()` returns the next frame, waiting for one; `nil` once the connection ended without more
///   frames. Hold at most a bounded amount of received data: stop reading from the socket while the core does
///   not call `receive()`, so that a slow reader pushes back on the server.
/// - `close()` tears the connection down at once, from any thread: pending and later `send` and `receive`
///   calls end (`receive` with `nil`, `send` with `ServerAPIError`).
/// - Throw only `ServerAPIError`.
///
/// In the `Transport` SPI (`@_spi(Transport) import ServerAPIKit`): for writing a transport, not for its callers.
@_spi(Transport) public protocol WebSocketConnection: Sendable {
    /// Sends one frame.
    /// - Throws: `ServerAPIError` when the connection is closed or broke.
    func send(_ frame: WebSocketFrame) async throws

    /// The next frame received; `nil` when the connection ended.
    /// - Throws: `ServerAPIError` when the connection broke (a TLS or network error).
    func receive() async throws -> WebSocketFrame?

    /// Tears the connection down at once.
    func close()

    /// Where the core's reader of this connection runs (it calls `receive()`, reassembles messages and hands them
    /// on): the connection's own thread, for a transport that has one, so that a frame received there is read
    /// without waking another thread; `nil` (the default) for the global executor. The reader's jobs run outside
    /// every lock of the transport, and may call `send`, `receive` and `close`.
    var receiveExecutor: (any TaskExecutor)? { get }

    /// The next received frame when one is ready, taken as `receive()` would return it, without waiting; `nil`
    /// when none is. The core's reader takes the frames of one read through here, with no suspension per frame,
    /// and while one is ready it holds the messages it assembles and hands them to the application's task
    /// together, with one wake-up for them all instead of one each. `nil` (the default): the reader awaits
    /// `receive()` for every frame, and each message is handed over as it is made.
    func takeReadyFrame() -> WebSocketFrame?
}

extension WebSocketConnection {
    /// `nil`: the core's reader runs on the global executor.
    public var receiveExecutor: (any TaskExecutor)? { nil }

    /// `nil`: every frame through `receive()`, each message handed over as it is made.
    public func takeReadyFrame() -> WebSocketFrame? { nil }
}

/// A transport's answer to a WebSocket handshake: the response head and, when the server switched
/// protocols, the open connection.
///
/// A transport makes one with the `Transport` SPI (`@_spi(Transport) import ServerAPIKit`), which holds its
/// initializer and its connection.
public struct WebSocketUpgrade: Sendable {
    /// The handshake's response: status 101 and its headers when accepted; the status, headers and body
    /// of a refusal otherwise.
    public var response: TransportResponse
    /// The open connection; `nil` when the server refused the upgrade.
    @_spi(Transport) public var connection: (any WebSocketConnection)?
    /// The transport ran the handshake's proof itself: it sent a `Sec-WebSocket-Key` of its own, not the
    /// request's, and checked the answer's `Upgrade`, `Connection` and `Sec-WebSocket-Accept` (Apple's URLSession
    /// does). `false` (the default) when it sent the request's key: the core then checks the answer (RFC 6455 §4.1).
    @_spi(Transport) public var handshakeVerified: Bool

    /// Creates an answer.
    /// - Parameters:
    ///   - response: The handshake's response.
    ///   - connection: The open connection; `nil` for a refusal.
    ///   - handshakeVerified: Whether the transport checked the answer against a key of its own.
    @_spi(Transport) public init(
        response: TransportResponse, connection: (any WebSocketConnection)?, handshakeVerified: Bool = false
    ) {
        self.response = response
        self.connection = connection
        self.handshakeVerified = handshakeVerified
    }
}

extension RequestPerforming {
    /// Throws `unsupported`, "this transport has no WebSockets": what a transport without them answers.
    public func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade {
        throw ServerAPIError(
            .unsupported, "this transport (\(name)) has no WebSockets", requestID: request.id, url: request.url)
    }
}
