extension WebSocket {
    /// permessage-deflate (RFC 7692) as the client offers it: messages compressed with DEFLATE, both ways.
    ///
    /// `WebSocket.Configuration.compression` holds it: offered by default, `nil` to offer nothing. The server
    /// decides: when it accepts, messages of at least `minimumSize` bytes are sent compressed and compressed messages
    /// are received; when it declines (or the transport cannot carry compressed frames: see
    /// `RequestPerforming.carriesWebSocketExtensions`), messages go uncompressed. The parameters say what the client
    /// offers; the server's answer may lower them, and the connection then uses what it answered.
    ///
    /// A received message is inflated as it arrives, in bounded steps, and held to
    /// `WebSocket.Configuration.maxMessageSize` whatever its compressed size: a message that inflates to more closes
    /// the connection with 1009 and ends `messages` with `responseTooLarge`.
    public struct Compression: Sendable, Hashable {
        /// The largest window the client compresses with, as a power of two: 9 to 15 (512 bytes to 32 KiB; 15 by
        /// default). A smaller window keeps less memory per connection and compresses less. The client offers
        /// `client_max_window_bits` (with this value when it is under 15), so that the server may ask for a smaller
        /// one; when the server asks for 8, which zlib cannot compress with, messages are sent uncompressed.
        public var clientMaxWindowBits: Int
        /// The largest window the server may compress with, 8 to 15 (`server_max_window_bits`); `nil` (the
        /// default) leaves it to the server. A smaller window keeps less memory per connection for inflating.
        public var serverMaxWindowBits: Int?
        /// Whether the client compresses each message on its own (`client_no_context_takeover`): less memory kept
        /// between messages, less compression. `false` by default; the server may ask for it.
        public var clientNoContextTakeover: Bool
        /// Whether to ask the server to compress each message on its own (`server_no_context_takeover`). `false` by
        /// default.
        public var serverNoContextTakeover: Bool
        /// Messages shorter than this, in bytes, are sent uncompressed (64 by default): DEFLATE gains nothing on
        /// them.
        public var minimumSize: Int
        /// The zlib compression level, 1 (fastest) to 9 (smallest); 6 by default, zlib's own default.
        public var level: Int

        /// Creates an offer.
        /// - Parameters:
        ///   - clientMaxWindowBits: The client's window, 9–15.
        ///   - serverMaxWindowBits: The window the server may use at most, 8–15; `nil` leaves it to the server.
        ///   - clientNoContextTakeover: Whether the client compresses each message on its own.
        ///   - serverNoContextTakeover: Whether to ask the server to compress each message on its own.
        ///   - minimumSize: The size below which a message is sent uncompressed.
        ///   - level: The compression level, 1–9.
        public init(
            clientMaxWindowBits: Int = 15, serverMaxWindowBits: Int? = nil, clientNoContextTakeover: Bool = false,
            serverNoContextTakeover: Bool = false, minimumSize: Int = 64, level: Int = 6
        ) {
            self.clientMaxWindowBits = clientMaxWindowBits
            self.serverMaxWindowBits = serverMaxWindowBits
            self.clientNoContextTakeover = clientNoContextTakeover
            self.serverNoContextTakeover = serverNoContextTakeover
            self.minimumSize = minimumSize
            self.level = level
        }

        /// The default offer: windows of 32 KiB, context kept between messages, messages of 64 bytes and more
        /// compressed.
        public static let `default` = Compression()
    }
}
