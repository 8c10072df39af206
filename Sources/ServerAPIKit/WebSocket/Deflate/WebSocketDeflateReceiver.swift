#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The receiving side of permessage-deflate (RFC 7692 §6, §7.2.2) and of the RSV1 bit, between the frames a
/// transport hands over and `WebSocketMessageAssembler`: frames in, the same frames inflated out.
///
/// RSV1 marks the first frame of a compressed message. It is a protocol error (1002) on a connection that did not
/// agree on permessage-deflate, on a control frame and on a continuation frame. A compressed message is inflated
/// frame by frame as it arrives (so the assembler checks UTF-8 and the size as it grows), the empty block's tail
/// 0x00 0x00 0xFF 0xFF appended after its last frame; what it inflates to is held to the message limit step by
/// step, whatever its frames declare: a message that inflates past it fails with 1009 before more than the limit
/// and one 16 KiB step are held. Data that is not DEFLATE fails with 1007. A message whose DEFLATE stream ends with a
/// final block (BFINAL) ends there, and the next one starts a new stream.
///
/// Pure but for zlib's state: `WebSocket`'s reader keeps one per connection, and a recording or a mock server one
/// per direction it reads.
package struct WebSocketDeflateReceiver {
    /// The compressed message being received.
    private struct Message {
        /// The bytes inflated so far.
        var inflated = 0
        /// The DEFLATE stream ended with a final block (BFINAL, RFC 7692 §7.2.3.4): what follows in the message is
        /// the padding that lets a receiver append the tail, and is not read.
        var ended = false
    }

    /// The window of the stream read (2^bits bytes) and whether the peer compresses each message on its own;
    /// `nil` when the connection did not agree on permessage-deflate.
    private let window: (bits: Int, noContextTakeover: Bool)?
    /// The largest message, inflated, in bytes.
    package var maxMessageSize: Int
    /// Made at the first compressed message: a connection that never receives one keeps no zlib state.
    private var inflater: ZlibInflater?
    /// The compressed message in progress; `nil` between messages and within an uncompressed one.
    private var message: Message?

    /// Creates the receiving side of a connection.
    /// - Parameters:
    ///   - parameters: What the connection agreed; `nil` for none.
    ///   - maxMessageSize: The largest message, inflated.
    package init(parameters: WebSocketDeflateParameters?, maxMessageSize: Int) {
        window = parameters.map { ($0.serverMaxWindowBits, $0.serverNoContextTakeover) }
        self.maxMessageSize = maxMessageSize
    }

    /// Creates a reader of either direction's stream: a recording's, a replay's or a mock server's.
    /// - Parameters:
    ///   - windowBits: The window the peer compresses with at most (15 reads any stream); `nil` when the connection
    ///     did not agree on permessage-deflate.
    ///   - noContextTakeover: Whether the peer compresses each message on its own.
    ///   - maxMessageSize: The largest message, inflated.
    package init(windowBits: Int?, noContextTakeover: Bool = false, maxMessageSize: Int) {
        window = windowBits.map { ($0, noContextTakeover) }
        self.maxMessageSize = maxMessageSize
    }

    /// Takes a received frame; returns it inflated, or the failure to close the connection with.
    package mutating func receive(_ frame: WebSocketFrame) -> Result<WebSocketFrame, WebSocketFrameCodec.Failure> {
        if frame.opcode.isControl {
            guard !frame.rsv1 else {
                return .failure(.init(code: .protocolError, message: "the server set RSV1 on a \(frame.opcode) frame"))
            }
            return .success(frame)
        }
        if frame.rsv1 {
            guard window != nil else {
                return .failure(
                    .init(
                        code: .protocolError,
                        message: "the server set a reserved bit no extension was negotiated for (RSV1)"))
            }
            guard frame.opcode != .continuation else {
                return .failure(.init(code: .protocolError, message: "the server set RSV1 on a continuation frame"))
            }
            message = Message()
        } else if frame.opcode != .continuation {
            // A new uncompressed message (or a frame the assembler rejects: it fails the connection).
            message = nil
        }
        guard var current = message else { return .success(frame) }
        let inflated = inflate(frame, &current)
        message = frame.isFinal ? nil : current
        return inflated
    }

    private mutating func inflate(
        _ frame: WebSocketFrame, _ current: inout Message
    ) -> Result<WebSocketFrame, WebSocketFrameCodec.Failure> {
        guard let window else { return .success(frame) }
        let inflater: ZlibInflater
        if let made = self.inflater {
            inflater = made
        } else {
            do {
                inflater = try ZlibInflater(windowBits: window.bits)
            } catch {
                return .failure(.init(code: .internalError, message: error.message))
            }
            self.inflater = inflater
        }
        var output = Data()
        let limit = maxMessageSize - current.inflated
        func feed(_ bytes: UnsafeRawBufferPointer) -> WebSocketFrameCodec.Failure? {
            guard !bytes.isEmpty, !current.ended else { return nil }
            switch inflater.inflate(bytes, into: &output, limit: limit) {
            case .consumed: return nil
            case .ended:
                current.ended = true
                return nil
            case .overLimit:
                return .init(
                    code: .messageTooBig,
                    message: "the server sent a compressed message that inflates to more than the limit of "
                        + "\(maxMessageSize) bytes")
            case .invalid(let reason):
                return .init(
                    code: .invalidPayload,
                    message: "the server sent a compressed message that does not inflate (\(reason))")
            }
        }
        var failure = frame.payload.withUnsafeBytes { feed($0) }
        if failure == nil, frame.isFinal, !current.ended {
            // RFC 7692 §7.2.2: the tail the sender removed.
            failure = withUnsafeBytes(of: (UInt8(0), UInt8(0), UInt8(0xFF), UInt8(0xFF))) { feed($0) }
        }
        if let failure {
            // The stream is unusable; the connection fails.
            self.inflater = nil
            return .failure(failure)
        }
        current.inflated += output.count
        if frame.isFinal, current.ended || window.noContextTakeover { inflater.reset() }
        return .success(WebSocketFrame(frame.opcode, payload: output, isFinal: frame.isFinal))
    }
}
