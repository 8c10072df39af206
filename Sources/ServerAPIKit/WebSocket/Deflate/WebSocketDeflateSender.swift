#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The sending side of permessage-deflate (RFC 7692 §7.2.1): a message in, the frame that carries it out,
/// compressed (RSV1 set, the 0x00 0x00 0xFF 0xFF tail removed) when it is long enough and the window allows.
///
/// Pure but for zlib's state, which is made at the first compressed message. With context takeover a message may
/// refer to the ones compressed before it, so frames must go out in the order they were made: `WebSocket` sends
/// through `WebSocketCompressingSender`, which keeps that order.
package struct WebSocketDeflateSender {
    /// The window the sender compresses with, 8–15; 8 sends every message uncompressed (zlib cannot make it).
    package let windowBits: Int
    /// Whether each message is compressed on its own.
    package let noContextTakeover: Bool
    /// The zlib level, 1–9.
    package let level: Int
    /// Messages shorter than this go uncompressed.
    package let minimumSize: Int
    private var deflater: ZlibDeflater?

    /// Creates the sending side.
    package init(windowBits: Int, noContextTakeover: Bool, level: Int = 6, minimumSize: Int = 0) {
        self.windowBits = windowBits
        self.noContextTakeover = noContextTakeover
        self.level = level
        self.minimumSize = minimumSize
    }

    /// The client's side of an agreement, with the client's level and threshold.
    package init(client parameters: WebSocketDeflateParameters, compression: WebSocket.Compression) {
        self.init(
            windowBits: parameters.clientMaxWindowBits, noContextTakeover: parameters.clientNoContextTakeover,
            level: compression.level, minimumSize: compression.minimumSize)
    }

    /// The frame that carries `message`, whole.
    /// - Throws: `ServerAPIError` when zlib fails (out of memory).
    package mutating func frame(for message: WebSocketMessage) throws(ServerAPIError) -> WebSocketFrame {
        let frame = WebSocketFrame(message)
        guard frame.payload.count >= minimumSize, windowBits >= 9 else { return frame }
        let deflater: ZlibDeflater
        if let made = self.deflater {
            deflater = made
        } else {
            // Hash tables sized to the window (2^(bits + 1) entries, zlib's default at 15 bits): a small window with
            // zlib's default tables compresses several times slower, and holds memory it cannot use.
            deflater = try ZlibDeflater(level: level, windowBits: windowBits, memoryLevel: min(8, windowBits - 6))
            self.deflater = deflater
        }
        var compressed = try deflater.compress(frame.payload)
        if noContextTakeover { deflater.reset() }
        if compressed.count >= 4, compressed.suffix(4).elementsEqual([0x00, 0x00, 0xFF, 0xFF]) {
            compressed.removeLast(4)
        }
        // An empty message compresses to nothing once the tail is gone: RFC 7692 §7.2.3.6 sends one 0x00 byte.
        if compressed.isEmpty { compressed = Data([0x00]) }
        var result = WebSocketFrame(frame.opcode, payload: compressed)
        result.rsv1 = true
        return result
    }
}

/// Sends a connection's messages through its `WebSocketDeflateSender`, one at a time, in the order they were
/// compressed: a frame that refers to the one before it cannot overtake it on the way to the transport.
final class WebSocketCompressingSender: Sendable {
    private struct Gate {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let sender: Locked<WebSocketDeflateSender>
    private let gate = Locked(Gate())

    init(_ sender: consuming sending WebSocketDeflateSender) {
        self.sender = Locked(sender)
    }

    /// Compresses `message` and hands its frame to `connection`, after the messages sent before it.
    func send(_ message: WebSocketMessage, on connection: any WebSocketConnection) async throws {
        await enter()
        defer { leave() }
        let frame = try sender.withLock { sender throws(ServerAPIError) in try sender.frame(for: message) }
        try await connection.send(frame)
    }

    private func enter() async {
        let entered = gate.withLock { gate in
            guard !gate.busy else { return false }
            gate.busy = true
            return true
        }
        if entered { return }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = gate.withLock { gate in
                guard gate.busy else {
                    gate.busy = true
                    return true
                }
                gate.waiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }

    /// Lets the next sender in (it holds the gate from here), or opens it.
    private func leave() {
        let next = gate.withLock { gate -> CheckedContinuation<Void, Never>? in
            guard !gate.waiters.isEmpty else {
                gate.busy = false
                return nil
            }
            return gate.waiters.removeFirst()
        }
        next?.resume()
    }
}
