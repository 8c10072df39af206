#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The receiving side's rules of RFC 6455, once for every transport: frames in, what they mean out.
///
/// Reassembles fragmented messages, holds a message to the size limit as it grows (a typed failure, not
/// memory growth), checks that text is UTF-8 (§8.1: 1007), that fragments come in order and that a close
/// frame is well formed (§5.5.1, §7.4). Pure: `WebSocket` feeds it the transport's frames and acts on the
/// events, and the tests feed it frames directly.
package struct WebSocketMessageAssembler: Sendable {
    /// What a received frame means.
    package enum Event: Sendable, Hashable {
        /// A whole message.
        case message(WebSocketMessage)
        /// A ping: answer with a pong carrying the same payload.
        case ping(Data)
        /// A pong, with the payload of the ping it answers.
        case pong(Data)
        /// The peer closes, with its code (`nil` when it sent none) and reason: answer with a close frame.
        case close(WebSocketCloseCode?, reason: String)
        /// The peer broke a rule: close with this code and fail the connection.
        case fail(WebSocketFrameCodec.Failure)
    }

    /// The largest message, whole, in bytes.
    package var maxMessageSize: Int
    private var partial: (opcode: WebSocketFrame.Opcode, payload: Data)?
    /// The UTF-8 check of the text message being reassembled, run on each fragment as it arrives.
    private var utf8 = UTF8Validator()

    /// Creates an assembler.
    /// - Parameter maxMessageSize: The largest message, whole, in bytes.
    package init(maxMessageSize: Int) {
        self.maxMessageSize = maxMessageSize
    }

    /// Whether a fragmented message is partly received.
    package var isAssembling: Bool { partial != nil }

    /// Takes the next frame; returns what it means, or `nil` for a fragment that completes nothing yet.
    package mutating func receive(_ frame: WebSocketFrame) -> Event? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return Self.close(frame.payload)
        case .text, .binary:
            guard partial == nil else {
                return fail(.protocolError, "the server started a new message before finishing a fragmented one")
            }
            guard frame.payload.count <= maxMessageSize else { return tooBig(frame.payload.count) }
            guard frame.isFinal else {
                if frame.opcode == .text {
                    utf8 = UTF8Validator()
                    guard utf8.feed(frame.payload) else { return invalidText() }
                }
                partial = (frame.opcode, frame.payload)
                return nil
            }
            return message(frame.opcode, frame.payload)
        case .continuation:
            // Taken out, so that the append below grows the one copy of the message in place.
            guard var current = partial.take() else {
                return fail(.protocolError, "the server sent a continuation frame outside a fragmented message")
            }
            guard current.payload.count + frame.payload.count <= maxMessageSize else {
                return tooBig(current.payload.count + frame.payload.count)
            }
            if current.opcode == .text {
                guard utf8.feed(frame.payload), !frame.isFinal || utf8.isComplete else { return invalidText() }
            }
            current.payload.append(frame.payload)
            guard frame.isFinal else {
                partial = current
                return nil
            }
            guard current.opcode == .text else { return .message(.binary(current.payload)) }
            // Checked fragment by fragment above.
            return .message(.text(String(decoding: current.payload, as: UTF8.self)))
        default:
            return fail(.protocolError, "the server sent a reserved \(frame.opcode)")
        }
    }

    private func message(_ opcode: WebSocketFrame.Opcode, _ payload: Data) -> Event {
        guard opcode == .text else { return .message(.binary(payload)) }
        guard let text = String(validating: payload, as: UTF8.self) else { return invalidText() }
        return .message(.text(text))
    }

    private func invalidText() -> Event {
        .fail(.init(code: .invalidPayload, message: "the server sent a text message that is not valid UTF-8"))
    }

    private func tooBig(_ count: Int) -> Event {
        .fail(
            .init(
                code: .messageTooBig,
                message: "the server sent a message of \(count) bytes or more, more than the limit of \(maxMessageSize)"
            ))
    }

    private mutating func fail(_ code: WebSocketCloseCode, _ message: String) -> Event {
        partial = nil
        return .fail(.init(code: code, message: message))
    }

    /// A close frame's payload: empty, or a code that may be sent and a UTF-8 reason.
    private static func close(_ payload: Data) -> Event {
        guard !payload.isEmpty else { return .close(nil, reason: "") }
        guard payload.count >= 2 else {
            return .fail(.init(code: .protocolError, message: "the server sent a close frame of one byte"))
        }
        let start = payload.startIndex
        let code = WebSocketCloseCode(UInt16(payload[start]) << 8 | UInt16(payload[start + 1]))
        guard code.isSendable else {
            return .fail(
                .init(code: .protocolError, message: "the server closed with code \(code), which may not be sent"))
        }
        guard let reason = String(validating: payload.dropFirst(2), as: UTF8.self) else {
            return .fail(.init(code: .invalidPayload, message: "the server's close reason is not valid UTF-8"))
        }
        return .close(code, reason: reason)
    }
}
