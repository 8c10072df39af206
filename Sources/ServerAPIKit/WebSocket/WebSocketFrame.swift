#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One WebSocket frame, as a transport hands it to the core and takes it from the core.
///
/// The core reassembles fragmented messages, checks UTF-8 and sizes, answers pings and runs the close
/// handshake (`WebSocketMessageAssembler`); a transport only moves frames (see `WebSocketConnection`).
public struct WebSocketFrame: Sendable, Hashable {
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
    /// The payload, unmasked.
    public var payload: Data

    /// Creates a frame.
    public init(_ opcode: Opcode, payload: Data = Data(), isFinal: Bool = true) {
        self.opcode = opcode
        self.payload = payload
        self.isFinal = isFinal
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
