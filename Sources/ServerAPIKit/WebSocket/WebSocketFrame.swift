#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One WebSocket frame, as a transport hands it to the core and takes it from the core.
///
/// The core reassembles fragmented messages, checks UTF-8 and sizes, answers pings and runs the close
/// handshake (`WebSocketMessageAssembler`); a transport only moves frames (see `WebSocketConnection`).
///
/// In the `Transport` SPI (`@_spi(Transport) import ServerAPIKit`): for writing a transport, not for its callers.
@_spi(Transport) public struct WebSocketFrame: Sendable, Hashable {
    /// The frame's opcode (RFC 6455 §5.2).
    public struct Opcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 0x0: a continuation of a fragmented message.
        public static let continuation = Opcode(rawValue: 0x0)
        /// 0x1: a text message (or its first fragment).
        public static let text = Opcode(rawValue: 0x1)
        /// 0x2: a binary message (or its first fragment).
        public static let binary = Opcode(rawValue: 0x2)
        /// 0x8: close.
        public static let close = Opcode(rawValue: 0x8)
        /// 0x9: ping.
        public static let ping = Opcode(rawValue: 0x9)
        /// 0xA: pong.
        public static let pong = Opcode(rawValue: 0xA)

        /// Whether this is a control opcode (close, ping, pong and the reserved 0xB–0xF).
        public var isControl: Bool { rawValue & 0x8 != 0 }

        public var description: String {
            switch self {
            case .continuation: "continuation"
            case .text: "text"
            case .binary: "binary"
            case .close: "close"
            case .ping: "ping"
            case .pong: "pong"
            default: "opcode \(rawValue)"
            }
        }
    }

    /// The opcode.
    public var opcode: Opcode
    /// Whether this is the last frame of its message (FIN).
    public var isFinal: Bool
    /// The RSV1 bit, which permessage-deflate (RFC 7692) sets on the first frame of a compressed message; `false`
    /// by default.
    ///
    /// A transport that moves raw frames carries it both ways, as it is, and says so with
    /// `RequestPerforming.carriesWebSocketExtensions`: the core then offers compression and checks the bit (on a
    /// connection that did not agree on compression, or on a control or continuation frame, it is a protocol
    /// error).
    public var rsv1: Bool
    /// The payload, unmasked.
    public var payload: Data

    /// Creates a frame.
    /// - Parameters:
    ///   - opcode: The opcode.
    ///   - payload: The payload, unmasked.
    ///   - isFinal: The FIN bit.
    ///   - rsv1: The RSV1 bit: `true` for the first frame of a message compressed with permessage-deflate.
    public init(_ opcode: Opcode, payload: Data = Data(), isFinal: Bool = true, rsv1: Bool = false) {
        self.opcode = opcode
        self.payload = payload
        self.isFinal = isFinal
        self.rsv1 = rsv1
    }

    /// A whole message as one frame.
    public init(_ message: WebSocketMessage) {
        switch message {
        case .text(let text): self.init(.text, payload: Data(text.utf8))
        case .binary(let data): self.init(.binary, payload: data)
        }
    }

    /// A close frame with a code and a reason (the reason cut to fit a control frame's 125 bytes).
    public static func close(_ code: WebSocketCloseCode?, reason: String = "") -> WebSocketFrame {
        guard let code else { return WebSocketFrame(.close) }
        var payload = Data([UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)])
        var reasonBytes = Array(reason.utf8.prefix(123))
        // A cut must not split a UTF-8 sequence: drop continuation bytes left over at the end.
        while let last = reasonBytes.last, String(validating: reasonBytes, as: UTF8.self) == nil,
            last & 0xC0 == 0x80
                || last & 0xC0 == 0xC0
        {
            reasonBytes.removeLast()
        }
        payload.append(contentsOf: reasonBytes)
        return WebSocketFrame(.close, payload: payload)
    }
}
