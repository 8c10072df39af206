extension WebSocket {
    /// A connection's limits and keep-alive.
    public struct Configuration: Sendable, Hashable {
        /// The largest message received, whole, in bytes (16 MiB by default). A larger one closes the
        /// connection with 1009 and ends `messages` with `responseTooLarge`, before it is buffered; a compressed one
        /// is held to it as it inflates, whatever its compressed size.
        public var maxMessageSize: Int
        /// The bytes of received messages held for a reader that is behind (1 MiB by default; one message
        /// is always held, whatever its size). When it is full, the connection stops reading from the socket.
        public var receiveBufferSize: Int
        /// How often to ping the server while the connection is open; `nil` (the default) sends no pings.
        /// A ping unanswered within the interval fails the connection with `timedOut`.
        public var pingInterval: Duration?
        /// How long the connection may receive nothing before it is closed (1001) and fails with `timedOut`;
        /// `nil` (the default) waits for ever. Checked once per interval: an idle connection ends after
        /// between one and two intervals.
        public var idleTimeout: Duration?
        /// How long `close(code:reason:)` waits for the server's close frame (5 seconds by default).
        public var closeTimeout: Duration
        /// The permessage-deflate compression the client offers (RFC 7692): `.default` by default; `nil` offers none,
        /// and every message then goes uncompressed. See `Compression`.
        public var compression: Compression?

        /// Creates a configuration.
        /// - Parameters:
        ///   - maxMessageSize: The largest message received, whole (inflated), in bytes.
        ///   - receiveBufferSize: The bytes of received messages held for a reader that is behind.
        ///   - pingInterval: How often to ping the server; `nil` sends no pings.
        ///   - idleTimeout: How long the connection may receive nothing; `nil` waits for ever.
        ///   - closeTimeout: How long `close(code:reason:)` waits for the server's close frame.
        ///   - compression: The compression offered; `nil` offers none.
        public init(
            maxMessageSize: Int = 16 << 20, receiveBufferSize: Int = 1 << 20, pingInterval: Duration? = nil,
            idleTimeout: Duration? = nil, closeTimeout: Duration = .seconds(5), compression: Compression? = .default
        ) {
            self.compression = compression
            self.maxMessageSize = maxMessageSize
            self.receiveBufferSize = receiveBufferSize
            self.pingInterval = pingInterval
            self.idleTimeout = idleTimeout
            self.closeTimeout = closeTimeout
        }
    }
}
