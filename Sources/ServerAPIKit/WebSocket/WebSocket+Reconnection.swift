#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension WebSocket {
    /// How a WebSocket reconnects when its connection drops: opt in with
    /// `ServerAPIManager.webSocket(_:configuration:reconnection:)`.
    ///
    /// ```swift
    /// let socket = try await manager.webSocket(api, reconnection: .init { socket in
    ///     try await socket.send(.text(#"{"subscribe":"prices"}"#))   // again, on every new connection
    /// })
    /// ```
    /// The socket reconnects after a connection that **dropped**: it broke without a close frame, the network
    /// failed, a keep-alive ping went unanswered or the idle timeout passed; or the server closed it with a code
    /// that asks to come back (1001 going away, 1011 internal error, 1012 service restart, 1013 try again later,
    /// 1014 bad gateway). It does not reconnect after a close with any other code (1000 means the server is done),
    /// after a protocol violation (1002, 1007, 1009: the server would send it again), after `close(code:reason:)`,
    /// or when the call is cancelled. The first connection is not retried: `webSocket` throws its failure.
    ///
    /// Meanwhile `messages` goes on across connections (what arrived before the drop is still read first);
    /// `send` and `ping` wait for the new connection; the call stays in `inFlight` under its id and tag, so
    /// `cancel(tag:)` ends the socket while it waits too. Each wait is `retry` the first time and
    /// `backoffMultiplier` times longer after each handshake that fails, up to `maximumRetry`, give or take
    /// `jitter`. A handshake that fails with a status other than 408, 429 or 5xx, with TLS or an invalid request,
    /// ends the socket with that failure, as does the `maximumReconnects`-th failed handshake in a row.
    ///
    /// - Important: A message handed to `send` just before the connection dropped may be lost: WebSockets do not
    ///   acknowledge messages. Resend what your protocol needs in `onReconnect`.
    public struct Reconnection: Sendable {
        /// The wait before the first attempt after a drop (1 second by default).
        public var retry: Duration
        /// The longest wait (30 seconds by default).
        public var maximumRetry: Duration
        /// How much longer each wait is than the one before, after a failed handshake (2 by default).
        public var backoffMultiplier: Double
        /// The fraction of each wait added or taken away at random (0.2 by default; 0 for exact waits), so that
        /// clients dropped together do not all come back at once.
        public var jitter: Double
        /// Failed handshakes in a row after which the socket gives up with the last failure (10 by default);
        /// `nil` never gives up.
        public var maximumReconnects: Int?
        /// Runs on each new connection, before `messages` goes on and before waiting `send`s go out: send what
        /// the server needs again (a subscription, a login). It may send, not read `messages`. Throwing ends the
        /// socket with that error.
        public var onReconnect: (@Sendable (WebSocket) async throws -> Void)?

        /// Creates a reconnection policy.
        public init(
            retry: Duration = .seconds(1), maximumRetry: Duration = .seconds(30), backoffMultiplier: Double = 2,
            jitter: Double = 0.2, maximumReconnects: Int? = 10,
            onReconnect: (@Sendable (WebSocket) async throws -> Void)? = nil
        ) {
            self.retry = retry
            self.maximumRetry = maximumRetry
            self.backoffMultiplier = backoffMultiplier
            self.jitter = jitter
            self.maximumReconnects = maximumReconnects
            self.onReconnect = onReconnect
        }

        /// The wait before an attempt, after `failures` failed handshakes in a row.
        /// - Parameter random: A number in 0...1 that picks the jitter.
        package func delay(afterFailures failures: Int, random: Double = .random(in: 0...1)) -> Duration {
            Backoff(initial: retry, multiplier: backoffMultiplier, maximum: maximumRetry, jitter: jitter)
                .delay(afterSteps: failures, random: random)
        }

        /// Whether a server's close code asks the client to come back later.
        package static func reconnects(afterClose code: WebSocketCloseCode?) -> Bool {
            guard let code else { return false }
            return [.goingAway, .internalError, .serviceRestart, .tryAgainLater, .badGateway].contains(code)
        }

        /// Whether a failed handshake is worth another: the network, a timeout, or a status that says "later".
        package static func reconnects(afterHandshake error: ServerAPIError) -> Bool {
            switch error.kind {
            case .network, .cannotConnect, .timedOut: return true
            case .httpStatus:
                guard let status = error.status else { return false }
                return status == 408 || status == 429 || status >= 500
            default: return false
            }
        }
    }
}
