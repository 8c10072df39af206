import Foundation
import NIOCore
import NIOPosix
import Synchronization
import WebSocketKit

/// The reference client: vapor/websocket-kit over SwiftNIO, used as its users do. Messages arrive in its
/// `onBinary`/`onText` callbacks on the channel's event loop: the source's are counted right there (websocket-kit's
/// fastest way to consume), the echo's and the answers wait in a mailbox for the task that awaits them. Sends are
/// a `ByteBuffer` made once, each awaited through its write promise, as websocket-kit's own `async` sends do.
final class WebSocketKitSocket: BenchSocket {
    private let socket: WebSocketKit.WebSocket
    private let mailbox: Mailbox
    private let payload: ByteBuffer

    private init(socket: WebSocketKit.WebSocket, mailbox: Mailbox, payload: ByteBuffer) {
        self.socket = socket
        self.mailbox = mailbox
        self.payload = payload
    }

    /// Opens a connection to `url` on `group`.
    /// - Parameter payload: What `sendMessage()` sends: one buffer for every connection, as the bytes are not copied.
    static func open(url: URL, payload: ByteBuffer, group: any EventLoopGroup) async throws -> WebSocketKitSocket {
        let mailbox = Mailbox()
        let socket = try await withCheckedThrowingContinuation {
            (upgrade: CheckedContinuation<WebSocketKit.WebSocket, any Error>) in
            mailbox.awaitUpgrade(upgrade)
            // websocket-kit completes its future before it calls `onUpgrade`: the socket comes from `onUpgrade`.
            WebSocketKit.WebSocket.connect(
                to: url, configuration: .init(maxFrameSize: Wire.maxFrameSize), on: group
            ) { socket in
                socket.onBinary { _, buffer in mailbox.binary(buffer) }
                socket.onText { _, text in mailbox.deliver(.text(text)) }
                socket.onClose.whenComplete { _ in mailbox.closed() }
                mailbox.upgraded(socket)
            }.whenFailure { mailbox.failUpgrade($0) }
        }
        return WebSocketKitSocket(socket: socket, mailbox: mailbox, payload: payload)
    }

    func sendMessage() async throws {
        let promise = socket.eventLoop.makePromise(of: Void.self)
        socket.send(payload, opcode: .binary, fin: true, promise: promise)
        try await promise.futureResult.get()
    }

    func sendText(_ text: String) async throws {
        let promise = socket.eventLoop.makePromise(of: Void.self)
        socket.send(text, promise: promise)
        try await promise.futureResult.get()
    }

    func receive() async throws -> Incoming {
        try await mailbox.next()
    }

    func countUntilText(size: Int) async throws -> Tally {
        mailbox.startCounting(size: size)
        while true {
            if case .text(let text) = try await mailbox.next() {
                var tally = mailbox.stopCounting()
                tally.text = text
                return tally
            }
        }
    }

    func close() async throws {
        try await socket.close(code: .normalClosure)
        try await socket.onClose.get()
    }
}

/// Where websocket-kit's callbacks leave what arrives, for the task that awaits it.
private final class Mailbox: Sendable {
    private struct State {
        var upgrade: CheckedContinuation<WebSocketKit.WebSocket, any Error>?
        var queue: [Incoming] = []
        var waiter: CheckedContinuation<Incoming, any Error>?
        /// While the source's messages are counted: the tally so far.
        var counting: Tally?
        var countingSize = 0
        var closed = false
    }

    private let state = Mutex(State())

    func awaitUpgrade(_ upgrade: CheckedContinuation<WebSocketKit.WebSocket, any Error>) {
        state.withLock { $0.upgrade = upgrade }
    }

    func upgraded(_ socket: WebSocketKit.WebSocket) {
        state.withLock { $0.upgrade.take() }?.resume(returning: socket)
    }

    func failUpgrade(_ error: any Error) {
        state.withLock { $0.upgrade.take() }?.resume(throwing: error)
    }

    /// A binary message, from the event loop: counted while counting, else delivered.
    func binary(_ buffer: ByteBuffer) {
        let count = buffer.readableBytes
        let counted = state.withLock { state in
            guard state.counting != nil else { return false }
            state.counting!.messages += 1
            state.counting!.bytes += count
            if count != state.countingSize { state.counting!.wrongSize += 1 }
            return true
        }
        if counted { return }
        let intact =
            count > 0 && buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) == Wire.fill
            && buffer.getInteger(at: buffer.readerIndex + count - 1, as: UInt8.self) == Wire.fill
        deliver(.binary(count: count, intact: intact))
    }

    func deliver(_ message: Incoming) {
        let waiter = state.withLock { state in
            guard let waiter = state.waiter.take() else {
                state.queue.append(message)
                return nil as CheckedContinuation<Incoming, any Error>?
            }
            return waiter
        }
        waiter?.resume(returning: message)
    }

    func closed() {
        let (upgrade, waiter) = state.withLock { state in
            state.closed = true
            return (state.upgrade.take(), state.waiter.take())
        }
        upgrade?.resume(throwing: BenchFailure("the connection closed during the upgrade"))
        waiter?.resume(throwing: BenchFailure("the server closed the connection"))
    }

    func next() async throws -> Incoming {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Incoming, any Error>) in
            let answer: Result<Incoming, BenchFailure>? = state.withLock { state in
                if !state.queue.isEmpty { return .success(state.queue.removeFirst()) }
                if state.closed { return .failure(BenchFailure("the server closed the connection")) }
                state.waiter = waiter
                return nil
            }
            if let answer { waiter.resume(with: answer) }
        }
    }

    /// Counts binary messages from now on, and those already waiting; text messages still wait for `next()`.
    func startCounting(size: Int) {
        state.withLock { state in
            var tally = Tally()
            var kept: [Incoming] = []
            for message in state.queue {
                if case .binary(let count, _) = message {
                    tally.messages += 1
                    tally.bytes += count
                    if count != size { tally.wrongSize += 1 }
                } else {
                    kept.append(message)
                }
            }
            state.queue = kept
            state.counting = tally
            state.countingSize = size
        }
    }

    func stopCounting() -> Tally {
        state.withLock { state in
            defer { state.counting = nil }
            return state.counting ?? Tally()
        }
    }
}
