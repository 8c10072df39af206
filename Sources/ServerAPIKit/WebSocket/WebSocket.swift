#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An open WebSocket connection, made by `ServerAPIManager.webSocket(_:configuration:)`.
///
/// ```swift
/// let socket = try await manager.webSocket(ServerAPI(url: URL(string: "wss://chat.example/room")!))
/// try await socket.send(.text("hello"))
/// for try await message in socket.messages { print(message) }
/// print(socket.closeCode ?? "no close code")
/// ```
/// `messages` yields whole messages (fragments reassembled) and ends when the server closes; it throws when
/// the connection fails: `network` for a broken connection or a protocol violation (the connection is closed
/// with the code RFC 6455 asks for: 1002, or 1007 for text that is not UTF-8), `responseTooLarge` for a
/// message over `Configuration.maxMessageSize` (1009), `timedOut` for a missed keep-alive ping or the idle
/// timeout, `cancelled` when the call is cancelled. Pings from the server are answered for you.
///
/// - Important: A connection stays open until the server closes it, `close(code:reason:)` closes it, or the
///   call is cancelled (by id, tag, first, last, all, or the task reading `messages`): dropping the
///   `WebSocket` does not close it.
public final class WebSocket: Sendable {
    private enum Phase {
        case open
        /// A close frame was sent; the server's is awaited.
        case closing
        case ended
    }

    private struct State {
        var phase = Phase.open
        var peerClose: (code: WebSocketCloseCode?, reason: String)?
        var failure: ServerAPIError?
        var pings: [UInt64: (waiter: CheckedContinuation<Void, any Error>, timer: Task<Void, Never>)] = [:]
        var nextPing: UInt64 = 0
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        var tasks: [Task<Void, Never>] = []
        /// Whether a frame arrived since the idle check last looked.
        var receivedSinceCheck = false
        var onEnd: (@Sendable (ServerAPIError?) -> Void)?
    }

    /// The subprotocol the server chose from those the call offered (`Sec-WebSocket-Protocol`), if any.
    public let subprotocol: String?
    /// The handshake's response headers.
    public let headers: HTTPHeaders
    /// The URL the connection was opened to (`http`/`https`, as it was sent).
    public let url: URL
    /// The connection's limits and keep-alive.
    public let configuration: Configuration

    private let connection: any WebSocketConnection
    private let clock: any Clock<Duration>
    private let state = Locked(State())
    private let inbox: WebSocketInbox

    /// Wraps an open connection and starts reading from it.
    /// - Parameters:
    ///   - connection: The transport's connection.
    ///   - response: The handshake's response.
    ///   - subprotocol: The subprotocol the server chose.
    ///   - configuration: Limits and keep-alive.
    ///   - clock: The clock pings, the idle timeout and the close handshake are timed on.
    ///   - onEnd: Runs once when the connection ends, with its failure (`nil` for a clean close).
    package init(
        connection: any WebSocketConnection, response: TransportResponse, subprotocol: String?,
        configuration: Configuration, clock: any Clock<Duration>, onEnd: (@Sendable (ServerAPIError?) -> Void)? = nil
    ) {
        self.connection = connection
        self.configuration = configuration
        self.clock = clock
        self.headers = response.headers
        self.url = response.url
        self.subprotocol = subprotocol
        let cancel = Locked<(@Sendable () -> Void)?>(nil)
        inbox = WebSocketInbox(capacity: configuration.receiveBufferSize) { cancel.withLock { $0 }?() }
        state.withLock { $0.onEnd = onEnd }
        cancel.withLock { $0 = { [weak self] in self?.cancel() } }
        start()
    }

    /// The messages the server sends, whole, in order, as it sends them.
    ///
    /// The connection reads from the socket while fewer than `Configuration.receiveBufferSize` bytes wait
    /// here. One task reads at a time; cancelling it cancels the connection.
    public var messages: Messages { Messages(inbox: inbox) }

    /// The close code the server sent; `nil` while open, or when it closed without one.
    public var closeCode: WebSocketCloseCode? { state.withLock { $0.peerClose?.code } }

    /// The close reason the server sent; `nil` while open.
    public var closeReason: String? { state.withLock { $0.peerClose?.reason } }

    /// Whether the connection has ended.
    public var isClosed: Bool { state.withLock { $0.phase == .ended } }

    /// The transport's connection, for a transport's own tests.
    package var transportConnection: any WebSocketConnection { connection }

    /// Sends a message, whole, as one frame.
    /// - Throws: `ServerAPIError`: the connection's failure, or `network` once it is closed.
    public func send(_ message: WebSocketMessage) async throws {
        try checkOpen()
        do {
            try await connection.send(WebSocketFrame(message))
        } catch {
            throw state.withLock { $0.failure } ?? ServerAPIError.wrap(error)
        }
    }

    /// Sends a ping and waits for the server's pong.
    /// - Parameter timeout: How long to wait for the pong, on the manager's clock.
    /// - Throws: `timedOut` when no pong came in time (the connection stays open); the connection's failure,
    ///   or `network` once it is closed; `cancelled` when the calling task is cancelled.
    public func ping(timeout: Duration = .seconds(10)) async throws {
        try checkOpen()
        let id = state.withLock { state in
            state.nextPing += 1
            return state.nextPing
        }
        var payload = Data(count: 8)
        for index in 0..<8 { payload[index] = UInt8((id >> UInt64(56 - 8 * index)) & 0xFF) }
        let frame = WebSocketFrame(.ping, payload: payload)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                let clock = self.clock
                let timer = Task { [weak self] in
                    do { try await clock.sleep(for: timeout) } catch { return }
                    self?.answerPing(
                        id, with: ServerAPIError(.timedOut, "the server did not answer a ping within \(timeout)"))
                }
                let closed: ServerAPIError? = state.withLock { state in
                    guard state.phase == .open else { return state.failure ?? Self.closedError }
                    state.pings[id] = (waiter, timer)
                    return nil
                }
                if let closed {
                    timer.cancel()
                    return waiter.resume(throwing: closed)
                }
                // A cancel whose handler ran before the waiter was registered found nothing to answer.
                if Task.isCancelled { return answerPing(id, with: .cancelled("the ping was cancelled")) }
                let connection = self.connection
                Task { [weak self] in
                    do { try await connection.send(frame) } catch {
                        self?.answerPing(id, with: ServerAPIError.wrap(error))
                    }
                }
            }
        } onCancel: {
            answerPing(id, with: .cancelled("the ping was cancelled"))
        }
    }

    /// Closes the connection: sends a close frame and waits for the server's (at most
    /// `Configuration.closeTimeout`). Messages that arrive meanwhile are dropped; `messages` then ends.
    /// Does nothing once the connection has ended.
    /// - Parameters:
    ///   - code: The code to send (1000, normal closure, by default); one that may not be sent becomes 1000.
    ///   - reason: A short reason (at most 123 bytes of UTF-8 are sent).
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") async {
        let first = state.withLock { state in
            guard state.phase == .open else { return false }
            state.phase = .closing
            return true
        }
        if first {
            inbox.stopAccepting()
            do {
                try await connection.send(.close(code.isSendable ? code : .normalClosure, reason: reason))
            } catch {
                finish(nil)
            }
            let clock = self.clock
            let timeout = configuration.closeTimeout
            let timer = Task { [weak self] in
                do { try await clock.sleep(for: timeout) } catch { return }
                self?.finish(nil)
            }
            await ended()
            timer.cancel()
        } else {
            await ended()
        }
    }

    /// Cancels the connection: `messages` and pending pings end with `cancelled`, and a close frame (1001)
    /// is sent on the way out when the connection still can.
    package func cancel() {
        finish(.cancelled("the WebSocket was cancelled"), closing: .goingAway, discarding: true)
    }

    // MARK: - Internals

    private static let closedError = ServerAPIError(.network, "the WebSocket is closed")

    private func checkOpen() throws {
        try state.withLock { state in
            switch state.phase {
            case .open: return
            case .closing: throw Self.closedError
            case .ended: throw state.failure ?? Self.closedError
            }
        }
    }

    private func start() {
        let reader = Task { await self.read() }
        var tasks = [reader]
        if let interval = configuration.pingInterval {
            let clock = self.clock
            tasks.append(
                Task { [weak self] in
                    while true {
                        do { try await clock.sleep(for: interval) } catch { return }
                        guard let self else { return }
                        do {
                            try await self.ping(timeout: interval)
                        } catch let error as ServerAPIError where error.kind == .timedOut {
                            self.finish(
                                ServerAPIError(
                                    .timedOut, "the server did not answer a keep-alive ping within \(interval)"),
                                closing: .goingAway)
                            return
                        } catch {
                            return
                        }
                    }
                })
        }
        if let idle = configuration.idleTimeout {
            let clock = self.clock
            tasks.append(
                Task { [weak self] in
                    while true {
                        do { try await clock.sleep(for: idle) } catch { return }
                        guard let self else { return }
                        let received = self.state.withLock { state in
                            defer { state.receivedSinceCheck = false }
                            return state.receivedSinceCheck
                        }
                        if !received {
                            self.finish(
                                ServerAPIError(.timedOut, "the server sent nothing for \(idle)"), closing: .goingAway)
                            return
                        }
                    }
                })
        }
        let ended = state.withLock { state in
            state.tasks = tasks
            return state.phase == .ended
        }
        if ended { for task in tasks { task.cancel() } }
    }

    /// Reads frames until the connection ends, and acts on what the assembler makes of them.
    private func read() async {
        var assembler = WebSocketMessageAssembler(maxMessageSize: configuration.maxMessageSize)
        while true {
            let frame: WebSocketFrame?
            do {
                frame = try await connection.receive()
            } catch {
                // A transport that frames bytes itself reports a framing failure with the code to close with.
                let failure = ServerAPIError.wrap(error)
                return finish(failure, closing: (failure.underlying as? WebSocketFrameCodec.Failure)?.code)
            }
            guard let frame else {
                let closing = state.withLock { $0.phase == .closing }
                if closing { return finish(nil) }
                return finish(
                    ServerAPIError(.network, "the server closed the connection without a close frame (1006)"))
            }
            state.withLock { $0.receivedSinceCheck = true }
            switch assembler.receive(frame) {
            case nil: break
            case .message(let message)?:
                await inbox.push(message)
            case .ping(let payload)?:
                try? await connection.send(WebSocketFrame(.pong, payload: payload))
            case .pong(let payload)?:
                guard payload.count == 8 else { break }
                let id = payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                answerPing(id, with: nil)
            case .close(let code, let reason)?:
                let echo = state.withLock { state in
                    state.peerClose = (code, reason)
                    return state.phase == .open
                }
                // RFC 6455 §5.5.1: answer with a close frame, echoing the code.
                if echo { try? await connection.send(.close(code)) }
                return finish(nil)
            case .fail(let failure)?:
                let kind: ServerAPIError.Kind = failure.code == .messageTooBig ? .responseTooLarge : .network
                return finish(
                    ServerAPIError(kind, "\(failure.message) (closed with \(failure.code))"), closing: failure.code)
            }
        }
    }

    private func answerPing(_ id: UInt64, with error: ServerAPIError?) {
        guard let entry = state.withLock({ $0.pings.removeValue(forKey: id) }) else { return }
        entry.timer.cancel()
        if let error { entry.waiter.resume(throwing: error) } else { entry.waiter.resume() }
    }

    /// Waits until the connection has ended.
    private func ended() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                guard state.phase != .ended else { return true }
                state.endWaiters.append(waiter)
                return false
            }
            if done { waiter.resume() }
        }
    }

    /// Ends the connection, once: with `error` (or cleanly), sending a close frame with `code` first when the
    /// connection was open.
    private func finish(_ error: ServerAPIError?, closing code: WebSocketCloseCode? = nil, discarding: Bool = false) {
        let ended = state.withLock { state -> (State, Bool)? in
            guard state.phase != .ended else { return nil }
            let wasOpen = state.phase == .open
            state.phase = .ended
            state.failure = error
            var taken = State()
            swap(&taken.pings, &state.pings)
            swap(&taken.endWaiters, &state.endWaiters)
            swap(&taken.tasks, &state.tasks)
            taken.onEnd = state.onEnd.take()
            return (taken, wasOpen)
        }
        guard let (taken, wasOpen) = ended else { return }
        inbox.finish(error, discarding: discarding)
        let closed = error ?? Self.closedError
        for (_, entry) in taken.pings {
            entry.timer.cancel()
            entry.waiter.resume(throwing: closed)
        }
        for task in taken.tasks { task.cancel() }
        let connection = self.connection
        if let code, wasOpen {
            Task {
                try? await connection.send(.close(code))
                connection.close()
            }
        } else {
            connection.close()
        }
        taken.onEnd?(error)
        for waiter in taken.endWaiters { waiter.resume() }
    }
}

extension WebSocket {
    /// A connection's received messages, as an `AsyncSequence`: see `WebSocket.messages`.
    public struct Messages: AsyncSequence, Sendable {
        public typealias Element = WebSocketMessage
        let inbox: WebSocketInbox

        /// Reads the messages one at a time.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let inbox: WebSocketInbox

            /// The next message; `nil` once the server closed the connection.
            /// - Throws: `ServerAPIError`, when the connection failed or was cancelled.
            public mutating func next() async throws -> WebSocketMessage? {
                try await inbox.next()
            }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inbox: inbox) }
    }
}
