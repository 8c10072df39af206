@_spi(Backend) @_spi(Transport) import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Frames travelling one way between the client and `MockTransport`'s scripted server: a queue that a
/// reader waits on, ended by either side.
final class MockFrameQueue: Sendable {
    private struct State {
        var frames: [WebSocketFrame] = []
        var ended = false
        var reader: CheckedContinuation<WebSocketFrame?, Never>?
    }

    private let state = Locked(State())

    /// Adds a frame; `false` once the queue ended.
    @discardableResult
    func push(_ frame: WebSocketFrame) -> Bool {
        let (accepted, reader) = state.withLock { state -> (Bool, CheckedContinuation<WebSocketFrame?, Never>?) in
            guard !state.ended else { return (false, nil) }
            if let reader = state.reader.take() { return (true, reader) }
            state.frames.append(frame)
            return (true, nil)
        }
        reader?.resume(returning: frame)
        return accepted
    }

    /// The next frame; `nil` once the queue ended and is empty.
    func next() async -> WebSocketFrame? {
        await withCheckedContinuation { (reader: CheckedContinuation<WebSocketFrame?, Never>) in
            let answer = state.withLock { state -> WebSocketFrame?? in
                if !state.frames.isEmpty { return .some(state.frames.removeFirst()) }
                if state.ended { return .some(nil) }
                state.reader = reader
                return nil
            }
            if let answer { reader.resume(returning: answer) }
        }
    }

    /// Ends the queue; `discarding` drops the frames not read yet (a broken connection).
    func end(discarding: Bool = false) {
        let reader = state.withLock { state in
            state.ended = true
            if discarding { state.frames.removeAll() }
            return state.reader.take()
        }
        reader?.resume(returning: nil)
    }
}

/// The client's side of a `MockTransport` WebSocket: frames to and from the scripted server.
final class MockWebSocketConnection: WebSocketConnection {
    let toClient = MockFrameQueue()
    let toServer = MockFrameQueue()

    func send(_ frame: WebSocketFrame) async throws {
        guard toServer.push(frame) else { throw ServerAPIError(.network, "the mock WebSocket is closed") }
    }

    func receive() async throws -> WebSocketFrame? {
        await toClient.next()
    }

    /// Frames sent before the close still reach the server, as bytes written before a socket closes do.
    func close() {
        toClient.end(discarding: true)
        toServer.end()
    }
}

/// Plays a `MockWebSocketScript` as the server of a `MockWebSocketConnection`.
struct MockWebSocketServer: Sendable {
    let connection: MockWebSocketConnection
    let script: MockWebSocketScript
    /// What the handshake agreed for permessage-deflate; `nil` for none.
    let deflate: WebSocketDeflateParameters?
    let clock: any Clock<Duration>
    let mismatch: @Sendable (String) -> Void
    let closed: @Sendable (WebSocketCloseCode?) -> Void

    /// Plays the script, then answers pings and the client's close until the connection ends.
    func run() async {
        // A server that agreed on compression compresses every message it sends, as the agreement says.
        var sender = deflate.map {
            WebSocketDeflateSender(windowBits: $0.serverMaxWindowBits, noContextTakeover: $0.serverNoContextTakeover)
        }
        var receiver = WebSocketDeflateReceiver(
            windowBits: deflate?.clientMaxWindowBits, noContextTakeover: deflate?.clientNoContextTakeover ?? false,
            maxMessageSize: .max)
        func frame(_ message: WebSocketMessage) -> WebSocketFrame {
            (try? sender?.frame(for: message)) ?? WebSocketFrame(message)
        }
        for step in script.steps {
            switch step {
            case .send(let message):
                connection.toClient.push(frame(message))
            case .sendFrame(let frame):
                connection.toClient.push(frame)
            case .expect(let expected):
                guard let message = await nextMessage(&receiver) else { return }
                if message != expected {
                    mismatch("expected \(expected), the client sent \(message)")
                    connection.toClient.push(.close(.policyViolation, reason: "unexpected message"))
                    connection.toClient.end()
                    return
                }
            case .echo(let count):
                for _ in 0..<count {
                    guard let message = await nextMessage(&receiver) else { return }
                    connection.toClient.push(frame(message))
                }
            case .wait(let duration):
                do { try await clock.sleep(for: duration) } catch { return }
            case .close(let code, let reason):
                connection.toClient.push(.close(code, reason: reason))
                // The client answers with its close frame: then the server ends the connection.
                while let frame = await connection.toServer.next() {
                    guard frame.opcode == .close else { continue }
                    closed(Self.code(frame.payload))
                    break
                }
                connection.toClient.end()
                return
            case .drop:
                connection.toClient.end()
                connection.toServer.end(discarding: true)
                return
            }
        }
        while await nextMessage(&receiver) != nil {}
    }

    private static func code(_ payload: Data) -> WebSocketCloseCode? {
        guard payload.count >= 2 else { return nil }
        return WebSocketCloseCode(UInt16(payload[payload.startIndex]) << 8 | UInt16(payload[payload.startIndex + 1]))
    }

    /// The client's next message (inflated when it came compressed); pings are answered, and a close frame is
    /// answered and ends the session. Each message is one frame: the core sends no fragments.
    private func nextMessage(_ receiver: inout WebSocketDeflateReceiver) async -> WebSocketMessage? {
        while let received = await connection.toServer.next() {
            guard case .success(let frame) = receiver.receive(received) else {
                connection.toClient.push(.close(.protocolError, reason: "a frame that does not inflate"))
                connection.toClient.end()
                return nil
            }
            switch frame.opcode {
            case .ping: connection.toClient.push(WebSocketFrame(.pong, payload: frame.payload))
            case .close:
                closed(Self.code(frame.payload))
                connection.toClient.push(WebSocketFrame(.close, payload: frame.payload.prefix(2)))
                connection.toClient.end()
                return nil
            case .text: return .text(String(decoding: frame.payload, as: UTF8.self))
            case .binary: return .binary(frame.payload)
            default: continue
            }
        }
        return nil
    }
}
