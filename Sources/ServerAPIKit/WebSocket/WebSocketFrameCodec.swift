#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The WebSocket wire format (RFC 6455 §5.2) for a transport that moves raw bytes: frames a client sends
/// (always masked) and the frames read from what a server sent.
///
/// Pure: a transport feeds it bytes as they arrive and sends the bytes it encodes. `CurlTransport` uses it on the
/// connections libcurl makes, so that framing, masking and limits are ours and the same on every libcurl version.
package struct WebSocketFrameCodec: Sendable {
    /// A framing failure: the close code to send and what happened.
    package struct Failure: Error, Sendable, Hashable {
        package var code: WebSocketCloseCode
        package var message: String
    }

    /// The largest payload one frame may declare; a larger one fails with 1009 before any of it is buffered.
    package var maxFramePayload: Int
    /// Bytes received and not yet handed out: a header in part, or a control frame's payload in part.
    private var buffer = Data()
    /// The data frame whose payload is arriving, handed out in pieces as it does.
    private var current: (opcode: WebSocketFrame.Opcode, isFinal: Bool, rsv1: Bool, remaining: Int, started: Bool)?
    private var failed = false

    /// Creates a decoder.
    /// - Parameter maxFramePayload: The largest payload one frame may declare.
    package init(maxFramePayload: Int) {
        self.maxFramePayload = maxFramePayload
    }

    /// The bytes received but not yet handed out.
    package var bufferedCount: Int { buffer.count }

    /// Adds received bytes and returns the frames they complete, in order.
    ///
    /// A data frame whose payload arrives over several reads is handed out as it arrives, as fragments of its
    /// message: its first piece with its opcode, the others as continuations, the last with its FIN bit. The
    /// message is the same (RFC 6455 §5.4 lets any intermediary fragment so), its bytes are not held twice, and
    /// the checks on a message (UTF-8, its size) run as it arrives rather than once it is whole. Each payload byte
    /// is copied once, from `bytes` into its frame; only a header or a control frame cut by the end of a read waits
    /// here for the next.
    /// - Throws: `Failure` for a frame a client must reject: masked, with RSV2 or RSV3 or reserved opcodes, a control
    ///   frame that is fragmented or longer than 125 bytes, a non-minimal or oversized length.
    package mutating func decode(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [WebSocketFrame] {
        if failed { return [] }
        guard !buffer.isEmpty else { return try parse(bytes) }
        // A header or a control frame was cut by the end of the last read: it is at most 139 bytes.
        var joined = buffer
        joined.append(contentsOf: bytes)
        buffer = Data()
        var result: Result<[WebSocketFrame], Failure> = .success([])
        joined.withUnsafeBytes { raw in result = Result { () throws(Failure) in try parse(raw) } }
        return try result.get()
    }

    /// Adds received bytes: see `decode(_:)` on a buffer.
    package mutating func decode(_ bytes: Data) throws(Failure) -> [WebSocketFrame] {
        var result: Result<[WebSocketFrame], Failure> = .success([])
        bytes.withUnsafeBytes { raw in result = Result { () throws(Failure) in try decode(raw) } }
        return try result.get()
    }

    private mutating func parse(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> [WebSocketFrame] {
        var frames: [WebSocketFrame] = []
        var start = 0
        let end = bytes.count
        func payload(_ from: Int, _ count: Int) -> Data {
            Data(UnsafeRawBufferPointer(rebasing: bytes[from..<from + count]))
        }
        do {
            while true {
                if let frame = current {
                    let count = min(frame.remaining, end - start)
                    guard count > 0 else { break }
                    let remaining = frame.remaining - count
                    // RSV1 belongs to the message's first frame (RFC 7692 §6): the first piece keeps it.
                    frames.append(
                        WebSocketFrame(
                            frame.started ? .continuation : frame.opcode, payload: payload(start, count),
                            isFinal: remaining == 0 && frame.isFinal, rsv1: frame.rsv1 && !frame.started))
                    start += count
                    current = remaining == 0 ? nil : (frame.opcode, frame.isFinal, frame.rsv1, remaining, true)
                    continue
                }
                guard let header = try Self.header(in: bytes, at: start, maxPayload: maxFramePayload) else { break }
                let payloadStart = start + header.length
                let available = end - payloadStart
                if available >= header.payload {
                    frames.append(
                        WebSocketFrame(
                            header.opcode, payload: payload(payloadStart, header.payload), isFinal: header.isFinal,
                            rsv1: header.rsv1))
                    start = payloadStart + header.payload
                } else if header.opcode.isControl {
                    break
                } else {
                    current = (header.opcode, header.isFinal, header.rsv1, header.payload, false)
                    start = payloadStart
                }
            }
        } catch {
            failed = true
            buffer = Data()
            throw error
        }
        if start < end { buffer = payload(start, end - start) }
        return frames
    }

    /// The header of the frame that starts at `start`: its opcode, FIN bit, own length and payload length;
    /// `nil` when more bytes are needed.
    private static func header(
        in data: UnsafeRawBufferPointer, at start: Int, maxPayload: Int
    ) throws(Failure) -> (opcode: WebSocketFrame.Opcode, isFinal: Bool, rsv1: Bool, length: Int, payload: Int)? {
        let available = data.count - start
        guard available >= 2 else { return nil }
        let first = data[start]
        let second = data[start + 1]
        // RSV1 is handed on, for the core to judge (permessage-deflate uses it: WebSocketDeflateReceiver); no
        // extension uses RSV2 or RSV3.
        guard first & 0x30 == 0 else {
            throw Failure(
                code: .protocolError, message: "the server set a reserved bit no extension was negotiated for")
        }
        let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F)
        let isFinal = first & 0x80 != 0
        switch opcode {
        case .continuation, .text, .binary, .close, .ping, .pong: break
        default: throw Failure(code: .protocolError, message: "the server sent a reserved \(opcode)")
        }
        guard second & 0x80 == 0 else {
            throw Failure(code: .protocolError, message: "the server sent a masked frame")
        }
        var length = UInt64(second & 0x7F)
        var headerLength = 2
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(data[start + 2]) << 8 | UInt64(data[start + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for index in 0..<8 { length = length << 8 | UInt64(data[start + 2 + index]) }
            headerLength = 10
            guard length >> 63 == 0 else {
                throw Failure(code: .protocolError, message: "the server sent a frame length with its top bit set")
            }
        }
        if opcode.isControl {
            guard isFinal else { throw Failure(code: .protocolError, message: "the server fragmented a control frame") }
            guard length <= 125 else {
                throw Failure(code: .protocolError, message: "the server sent a control frame longer than 125 bytes")
            }
        }
        guard length <= UInt64(maxPayload) else {
            throw Failure(
                code: .messageTooBig,
                message: "the server sent a frame of \(length) bytes, more than the limit of \(maxPayload)")
        }
        return (opcode, isFinal, first & 0x40 != 0, headerLength, Int(length))
    }

    /// The bytes a client sends for `frame`: masked with `mask` (a fresh random key unless a test gives one).
    package static func encode(_ frame: WebSocketFrame, mask: UInt32 = .random(in: .min ... .max)) -> Data {
        let count = frame.payload.count
        var bytes = Data()
        bytes.reserveCapacity(count + 14)
        bytes.append((frame.isFinal ? 0x80 : 0) | (frame.rsv1 ? 0x40 : 0) | frame.opcode.rawValue)
        if count < 126 {
            bytes.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            bytes.append(0x80 | 126)
            bytes.append(UInt8(count >> 8))
            bytes.append(UInt8(count & 0xFF))
        } else {
            bytes.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8((UInt64(count) >> UInt64(shift)) & 0xFF))
            }
        }
        let key = [UInt8(mask >> 24), UInt8((mask >> 16) & 0xFF), UInt8((mask >> 8) & 0xFF), UInt8(mask & 0xFF)]
        bytes.append(contentsOf: key)
        let payloadStart = bytes.count
        bytes.append(frame.payload)
        bytes.withUnsafeMutableBytes { raw in
            let payload = UnsafeMutableRawBufferPointer(rebasing: raw[payloadStart...])
            // Eight bytes at a time: the key four times over, in memory order, then the last bytes one by one.
            var word: UInt64 = 0
            withUnsafeMutableBytes(of: &word) { for index in 0..<8 { $0[index] = key[index & 3] } }
            var index = 0
            while index + 8 <= payload.count {
                let masked = payload.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ word
                payload.storeBytes(of: masked, toByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < payload.count {
                payload[index] ^= key[index & 3]
                index += 1
            }
        }
        return bytes
    }
}
