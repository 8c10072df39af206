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
/// - Important: A connection stays open until the server closes it, `close(code:reason:)` closes it, the
///   call is cancelled (by id, tag, first, last, all, or the task reading `messages`), or the manager shuts down
///   (`ServerAPIManager.shutdown(gracePeriod:)` closes it with 1001, going away): dropping the `WebSocket` does
///   not close it.
public final class WebSocket: Sendable {
    private enum Phase {
        case open
        /// The connection dropped; a new one is being made (see `Reconnection`).
        case reconnecting
        /// A close frame was sent; the server's is awaited.
        case closing
        case ended
    }

    /// One connection of the socket: the transport's, with the handshake that opened it and the end of its call.
    package struct Link: Sendable {
        var connection: any WebSocketConnection
        var response: TransportResponse
        var subprotocol: String?
        /// The call the handshake made, in the in-flight registry while the connection is open.
        var call: Call?
        /// What the handshake agreed for permessage-deflate; `nil` when it agreed on none.
        var deflate: WebSocketDeflateParameters? = nil
        /// Sends messages compressed, in order, when the handshake agreed on permessage-deflate.
        var compressor: WebSocketCompressingSender? = nil
        /// Ends the call (plugins' `didComplete`), once, with the connection's failure or `nil`.
        var end: @Sendable (ServerAPIError?) -> Void
    }

    /// How the socket makes a new connection: the policy, the manager's handshake, and its registered wait.
    package struct Reconnector: Sendable {
        var policy: Reconnection
        var open: @Sendable () async throws -> Link
        var wait: @Sendable (Duration) async throws -> Void
    }

    /// How a connection ended, as the reader saw it.
    private indirect enum LinkEnd {
        /// The server sent a close frame (answered already).
        case closedByPeer(WebSocketCloseCode?)
        /// Our close frame was sent and the connection ended.
        case closedLocally
        /// The connection broke (`retryable`) or broke a rule (closed with `code`).
        case failed(ServerAPIError, closing: WebSocketCloseCode?, retryable: Bool)

        /// Whether a socket that can reconnect does.
        var reconnects: Bool {
            switch self {
            case .closedLocally: false
            case .closedByPeer(let code): Reconnection.reconnects(afterClose: code)
            case .failed(_, _, let retryable): retryable
            }
        }

        /// The error the socket ends with, when it does.
        var failure: ServerAPIError? {
            if case .failed(let error, _, _) = self { return error }
            return nil
        }

        /// The close code sent as it ends.
        var closingCode: WebSocketCloseCode? {
            if case .failed(_, let code, _) = self { return code }
            return nil
        }
    }

    private struct State {
        var phase = Phase.open
        var link: Link
        /// Whether `link.end` has not run yet.
        var linkOpen = true
        /// Why the connection is being torn down, when the keep-alive or the idle check did it.
        var linkFailure: ServerAPIError?
        var peerClose: (code: WebSocketCloseCode?, reason: String)?
        var failure: ServerAPIError?
        var pings: [UInt64: (waiter: CheckedContinuation<Void, any Error>, timer: Task<Void, Never>)] = [:]
        var nextPing: UInt64 = 0
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        /// `send`s and `ping`s waiting for a new connection.
        var linkWaiters: [CheckedContinuation<Link, any Error>] = []
        var tasks: [Task<Void, Never>] = []
        /// Whether a frame arrived since the idle check last looked.
        var receivedSinceCheck = false
        var reconnects = 0
    }

    /// The connection's limits and keep-alive.
    public let configuration: Configuration

    private let clock: any Clock<Duration>
    private let state: Locked<State>
    private let inbox: WebSocketInbox
    private let reconnector: Reconnector?

    /// Wraps an open connection and starts reading from it.
    /// - Parameters:
    ///   - link: The first connection.
    ///   - configuration: Limits and keep-alive.
    ///   - clock: The clock pings, the idle timeout and the close handshake are timed on.
    ///   - reconnector: How to make a new connection when this one drops; `nil` never reconnects.
    package init(
        link: Link, configuration: Configuration, clock: any Clock<Duration>, reconnector: Reconnector? = nil
    ) {
        self.configuration = configuration
        self.clock = clock
        self.reconnector = reconnector
        state = Locked(State(link: link))
        let cancel = Locked<(@Sendable () -> Void)?>(nil)
        inbox = WebSocketInbox(capacity: configuration.receiveBufferSize) { cancel.withLock { $0 }?() }
        cancel.withLock { $0 = { [weak self] in self?.cancel() } }
        link.call?.onCancel { [weak self] in self?.cancel() }
        link.call?.onDrain { [weak self] in self?.goAway() }
        start()
    }

    /// The subprotocol the server chose from those the call offered (`Sec-WebSocket-Protocol`), if any.
    public var subprotocol: String? { state.withLock { $0.link.subprotocol } }
    /// The handshake's response headers (of the latest connection).
    public var headers: HTTPHeaders { state.withLock { $0.link.response.headers } }
    /// The URL the connection was opened to (`http`/`https`, as it was sent).
    public var url: URL { state.withLock { $0.link.response.url } }

    /// The messages the server sends, whole, in order, as it sends them; across connections when the socket
    /// reconnects.
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

    /// The state of the current connection's call, for tests and diagnostics: open, closing, then ended.
    var callState: CallStateMachine.State? { state.withLock { $0.link.call?.state } }

    /// How many times the socket has reconnected (see `Reconnection`).
    public var reconnects: Int { state.withLock { $0.reconnects } }

    /// How many `send`s and `ping`s wait for a new connection (for tests).
    package var waitingForConnection: Int { state.withLock { $0.linkWaiters.count } }

    /// The transport's connection, for a transport's own tests.
    package var transportConnection: any WebSocketConnection { state.withLock { $0.link.connection } }

    /// What the connection agreed for permessage-deflate (RFC 7692); `nil` when it agreed on none (for tests).
    package var compression: WebSocketDeflateParameters? { state.withLock { $0.link.deflate } }

    /// Sends a message, whole, as one frame: compressed when the connection agreed on permessage-deflate and the
    /// message is at least `Compression.minimumSize` bytes long.
    ///
    /// Returns once the transport has the frame (a transport may queue it, boundedly), not once the server has it: a
    /// frame that cannot be written later ends the connection. While the socket reconnects, waits for the new
    /// connection.
    /// - Throws: `ServerAPIError`: the connection's failure, or `network` once it is closed.
    public func send(_ message: WebSocketMessage) async throws {
        let link = try await openLink()
        do {
            if let compressor = link.compressor {
                try await compressor.send(message, on: link.connection)
            } else {
                try await link.connection.send(WebSocketFrame(message))
            }
        } catch {
            throw state.withLock { $0.failure } ?? ServerAPIError.wrap(error)
        }
    }

    /// Sends a ping and waits for the server's pong.
    /// - Parameter timeout: How long to wait for the pong, on the manager's clock.
    /// - Throws: `timedOut` when no pong came in time (the connection stays open); the connection's failure,
    ///   or `network` once it is closed or when it drops before the pong; `cancelled` when the calling task is
    ///   cancelled.
    public func ping(timeout: Duration = .seconds(10)) async throws {
        let connection = try await openLink().connection
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
    /// While the socket waits to reconnect, it stops. Does nothing once the connection has ended.
    /// - Parameters:
    ///   - code: The code to send (1000, normal closure, by default); one that may not be sent becomes 1000.
    ///   - reason: A short reason (at most 123 bytes of UTF-8 are sent).
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") async {
        let (phase, connection, call) = state.withLock { state in
            let phase = state.phase
            if phase == .open { state.phase = .closing }
            return (phase, state.link.connection, state.link.call)
        }
        switch phase {
        case .open:
            call?.webSocketClosing()
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
        case .reconnecting:
            finish(nil)
        case .closing, .ended:
            await ended()
        }
    }

    /// Cancels the connection: `messages` and pending pings end with `cancelled`, and a close frame (1001)
    /// is sent on the way out when the connection still can.
    package func cancel() {
        finish(.cancelled("the WebSocket was cancelled"), closing: .goingAway, discarding: true)
    }

    /// The manager is shutting down (`ServerAPIManager.shutdown(gracePeriod:)`): closes the connection with 1001
    /// (going away), as `close(code:reason:)` does; what is left of it when the grace period ends is cancelled.
    private func goAway() {
        Task { await self.close(code: .goingAway, reason: "the client is shutting down") }
    }

    // MARK: - Internals

    private static let closedError = ServerAPIError(.network, "the WebSocket is closed")

    /// The open connection; while the socket reconnects, the next one.
    private func openLink() async throws -> Link {
        enum Answer {
            case link(Link)
            case closed(ServerAPIError)
            case wait
        }
        let answer: Answer = state.withLock { state in
            switch state.phase {
            case .open: return .link(state.link)
            case .reconnecting: return .wait
            case .closing: return .closed(Self.closedError)
            case .ended: return .closed(state.failure ?? Self.closedError)
            }
        }
        switch answer {
        case .link(let link): return link
        case .closed(let error): throw error
        case .wait:
            return try await withCheckedThrowingContinuation { waiter in
                let answer: Answer = state.withLock { state in
                    switch state.phase {
                    case .open: return .link(state.link)
                    case .reconnecting:
                        state.linkWaiters.append(waiter)
                        return .wait
                    case .closing: return .closed(Self.closedError)
                    case .ended: return .closed(state.failure ?? Self.closedError)
                    }
                }
                switch answer {
                case .link(let link): waiter.resume(returning: link)
                case .closed(let error): waiter.resume(throwing: error)
                case .wait: break
                }
            }
        }
    }

    private func start() {
        // The reader is a suspended task for every open socket, and its frames are all it holds while idle: it prefers
        // the first connection's executor from the start (no frames of a nested preference), and what follows a
        // connection's end (`reconnect`) has frames only once it does.
        let (connection, deflate) = state.withLock { ($0.link.connection, $0.link.deflate) }
        let reader = Task(executorPreference: connection.receiveExecutor) {
            await self.afterConnection(self.read(connection, deflate))
        }
        var tasks = [reader]
        if let interval = configuration.pingInterval {
            let clock = self.clock
            tasks.append(
                Task { [weak self] in
                    while true {
                        do { try await clock.sleep(for: interval) } catch { return }
                        guard let self else { return }
                        // Between connections there is nothing to keep alive; the next one starts afresh.
                        guard self.state.withLock({ $0.phase == .open }) else { continue }
                        do {
                            try await self.ping(timeout: interval)
                        } catch let error as ServerAPIError where error.kind == .timedOut {
                            self.linkFailed(
                                ServerAPIError(
                                    .timedOut, "the server did not answer a keep-alive ping within \(interval)"))
                        } catch {
                            continue
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
                        let idled = self.state.withLock { state in
                            defer { state.receivedSinceCheck = false }
                            return state.phase == .open && !state.receivedSinceCheck
                        }
                        if idled { self.linkFailed(ServerAPIError(.timedOut, "the server sent nothing for \(idle)")) }
                    }
                })
        }
        let ended = state.withLock { state in
            state.tasks = tasks
            return state.phase == .ended
        }
        if ended { for task in tasks { task.cancel() } }
    }

    /// After a connection ended: reconnects and reads each next connection until one ends for good, or ends the
    /// socket. Never inlined into the reader's first frame, which every open socket keeps for its life.
    @inline(never)
    private func afterConnection(_ first: LinkEnd) async {
        var end = first
        while true {
            // Without reconnecting, `read(_:_:)` ended the socket.
            guard let reconnector, end.reconnects else { return }
            guard await reconnect(reconnector, after: end.failure) else {
                // `reconnect` ended the socket, unless it found it closing (`finish` ends a socket once).
                return finish(end.failure, closing: end.closingCode)
            }
            let (connection, deflate) = state.withLock { ($0.link.connection, $0.link.deflate) }
            end = await withTaskExecutorPreference(connection.receiveExecutor) { await read(connection, deflate) }
        }
    }

    /// Reads one connection's frames until it ends, on the connection's executor; ends the socket there unless
    /// it reconnects, so that a failure's close frame goes out without waiting for a thread of the global executor,
    /// which may be busy.
    private func read(_ connection: any WebSocketConnection, _ deflate: WebSocketDeflateParameters?) async -> LinkEnd {
        let end = await readFrames(connection, reading: FrameReading(deflate: deflate, configuration))
        if reconnector == nil || !end.reconnects { finish(end.failure, closing: end.closingCode) }
        return end
    }

    /// `read(_:deflate:)`'s loop: each frame through `reading` (the RSV1 check and inflater, then the assembler),
    /// and what it makes of the frame done here.
    ///
    /// What is kept across the waits is small (the frame's state is `reading`'s, an object, and `Step` and `LinkEnd`
    /// are boxed): the reader is a suspended task for every open socket, and its frames are all it holds while idle.
    private func readFrames(_ connection: any WebSocketConnection, reading: FrameReading) async -> LinkEnd {
        // Messages pushed while a frame was ready may be held for the application's task (`offer(_:more:)`): they
        // are handed over before the reader waits for the connection, and when it stops.
        var holding = false
        defer { if holding { inbox.handOver() } }
        // The frames of one read are taken without a suspension each (`takeReadyFrame()`); the reader awaits
        // `receive()` only when none is ready.
        var ready: WebSocketFrame? = nil
        while true {
            let step: Step
            if let frame = ready.take() {
                step = self.step(after: frame, reading)
            } else {
                do {
                    step = self.step(after: try await connection.receive(), reading)
                } catch {
                    step = .end(receiveFailed(error))
                }
            }
            switch step {
            case .message(let message):
                ready = connection.takeReadyFrame()
                let more = ready != nil
                if inbox.offer(message, more: more) { await inbox.waitForRoom() }
                holding = more
                continue
            case .none:
                break
            case .pong(let payload):
                try? await connection.send(WebSocketFrame(.pong, payload: payload))
            case .close(let code):
                // RFC 6455 §5.5.1: answer with a close frame, echoing the code.
                try? await connection.send(.close(code))
                return state.withLock { $0.phase == .closing } ? .closedLocally : .closedByPeer(code)
            case .end(let end):
                return end
            }
            // A frame that made no message (a fragment, a ping, a pong): unless another is ready, what is held goes
            // to the application's task before the reader waits.
            ready = connection.takeReadyFrame()
            if holding, ready == nil {
                inbox.handOver()
                holding = false
            }
        }
    }

    /// What the reader does after a frame (`nil`: the connection ended).
    private indirect enum Step {
        case none
        case message(WebSocketMessage)
        /// Answer a ping.
        case pong(Data)
        /// The server closed: echo its code (the connection ends after).
        case close(WebSocketCloseCode?)
        case end(LinkEnd)
    }

    /// A connection's frame state: the inflater and the assembler.
    private final class FrameReading {
        var inflater: WebSocketDeflateReceiver
        var assembler: WebSocketMessageAssembler

        init(deflate: WebSocketDeflateParameters?, _ configuration: Configuration) {
            inflater = WebSocketDeflateReceiver(parameters: deflate, maxMessageSize: configuration.maxMessageSize)
            assembler = WebSocketMessageAssembler(maxMessageSize: configuration.maxMessageSize)
        }
    }

    /// Takes one received frame (`nil`: the connection ended) through `reading`: what the reader does next.
    private func step(after received: WebSocketFrame?, _ reading: FrameReading) -> Step {
        guard let received else {
            if state.withLock({ $0.phase == .closing }) { return .end(.closedLocally) }
            return .end(
                linkEnd(
                    ServerAPIError(.network, "the server closed the connection without a close frame (1006)"),
                    closing: nil, retryable: true))
        }
        if configuration.idleTimeout != nil { state.withLock { $0.receivedSinceCheck = true } }
        let frame: WebSocketFrame
        switch reading.inflater.receive(received) {
        case .success(let inflated): frame = inflated
        case .failure(let failure): return .end(Self.failed(failure))
        }
        switch reading.assembler.receive(frame) {
        case nil:
            return .none
        case .message(let message)?:
            return .message(message)
        case .ping(let payload)?:
            return .pong(payload)
        case .pong(let payload)?:
            if payload.count == 8 { answerPing(payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, with: nil) }
            return .none
        case .close(let code, let reason)?:
            let echo = state.withLock { state in
                state.peerClose = (code, reason)
                return state.phase == .open
            }
            if echo { return .close(code) }
            return .end(state.withLock { $0.phase == .closing } ? .closedLocally : .closedByPeer(code))
        case .fail(let failure)?:
            return .end(Self.failed(failure))
        }
    }

    /// How a connection whose `receive()` threw ended: a transport that frames bytes itself reports a framing
    /// failure with the code to close with.
    private func receiveFailed(_ error: any Error) -> LinkEnd {
        let failure = ServerAPIError.wrap(error)
        let code = (failure.underlying as? WebSocketFrameCodec.Failure)?.code
        return linkEnd(failure, closing: code, retryable: code == nil)
    }

    /// A connection that broke a rule: closed with the rule's code, `responseTooLarge` for a message over the
    /// limit (1009), `network` otherwise.
    private static func failed(_ failure: WebSocketFrameCodec.Failure) -> LinkEnd {
        let kind: ServerAPIError.Kind = failure.code == .messageTooBig ? .responseTooLarge : .network
        return .failed(
            ServerAPIError(kind, "\(failure.message) (closed with \(failure.code))"), closing: failure.code,
            retryable: false)
    }

    /// How a connection that ended with `error` ended: with the keep-alive's or idle check's failure when one of
    /// them tore it down.
    private func linkEnd(_ error: ServerAPIError, closing code: WebSocketCloseCode?, retryable: Bool) -> LinkEnd {
        if let failure = state.withLock({ $0.linkFailure.take() }) {
            return .failed(failure, closing: nil, retryable: true)
        }
        return .failed(error, closing: code, retryable: retryable)
    }

    /// The keep-alive or the idle check found the connection dead: without a way to reconnect the socket fails;
    /// with one, the connection is torn down (1001) and the reader reconnects.
    private func linkFailed(_ error: ServerAPIError) {
        guard reconnector != nil else { return finish(error, closing: .goingAway) }
        let connection: (any WebSocketConnection)? = state.withLock { state in
            guard state.phase == .open, state.linkFailure == nil else { return nil }
            state.linkFailure = error
            return state.link.connection
        }
        guard let connection else { return }
        Task {
            try? await connection.send(.close(.goingAway))
            connection.close()
        }
    }

    /// Makes a new connection after the current one ended, waiting between attempts.
    /// - Returns: `true` once a new connection is open; `false` when the socket ended instead (it is finished).
    private func reconnect(_ reconnector: Reconnector, after error: ServerAPIError?) async -> Bool {
        let old:
            (link: Link, pings: [UInt64: (waiter: CheckedContinuation<Void, any Error>, timer: Task<Void, Never>)])? =
                state.withLock { state in
                    guard state.phase == .open else { return nil }
                    state.phase = .reconnecting
                    state.linkOpen = false
                    state.linkFailure = nil
                    return (state.link, state.pings.take())
                }
        guard let old else { return false }
        old.link.connection.close()
        old.link.end(error)
        let dropped = error ?? ServerAPIError(.network, "the connection dropped")
        for (_, entry) in old.pings {
            entry.timer.cancel()
            entry.waiter.resume(throwing: dropped)
        }
        var failures = 0
        while true {
            do {
                try await reconnector.wait(reconnector.policy.delay(afterFailures: failures))
            } catch {
                finish(.cancelled("the WebSocket was cancelled while waiting to reconnect"))
                return false
            }
            let link: Link
            do {
                link = try await reconnector.open()
            } catch {
                let failure = ServerAPIError.wrap(error)
                failures += 1
                let more = reconnector.policy.maximumReconnects.map { failures < $0 } ?? true
                guard failure.kind != .cancelled, Reconnection.reconnects(afterHandshake: failure), more else {
                    finish(failure)
                    return false
                }
                continue
            }
            let adopted = state.withLock { state in
                guard state.phase == .reconnecting else { return false }
                state.link = link
                state.linkOpen = true
                state.peerClose = nil
                state.receivedSinceCheck = true
                state.reconnects += 1
                return true
            }
            guard adopted else {
                link.connection.close()
                link.end(.cancelled("the WebSocket was closed while reconnecting"))
                return false
            }
            link.call?.onCancel { [weak self] in self?.cancel() }
            link.call?.onDrain { [weak self] in self?.goAway() }
            if let onReconnect = reconnector.policy.onReconnect {
                // The hook's sends go out first, before those that waited for this connection.
                state.withLock { $0.phase = .open }
                do {
                    try await onReconnect(self)
                } catch {
                    finish(ServerAPIError.wrap(error), closing: .normalClosure)
                    return false
                }
            }
            let waiters = state.withLock { state in
                if state.phase == .reconnecting { state.phase = .open }
                return state.linkWaiters.take()
            }
            for waiter in waiters { waiter.resume(returning: link) }
            return true
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

    /// Ends the socket, once: with `error` (or cleanly), sending a close frame with `code` first when the
    /// connection was open.
    private func finish(_ error: ServerAPIError?, closing code: WebSocketCloseCode? = nil, discarding: Bool = false) {
        struct Taken {
            var pings: [UInt64: (waiter: CheckedContinuation<Void, any Error>, timer: Task<Void, Never>)]
            var endWaiters: [CheckedContinuation<Void, Never>]
            var linkWaiters: [CheckedContinuation<Link, any Error>]
            var tasks: [Task<Void, Never>]
            var link: Link
            var linkOpen: Bool
            var wasOpen: Bool
        }
        let taken: Taken? = state.withLock { state in
            guard state.phase != .ended else { return nil }
            let wasOpen = state.phase == .open
            state.phase = .ended
            state.failure = error
            defer { state.linkOpen = false }
            return Taken(
                pings: state.pings.take(), endWaiters: state.endWaiters.take(),
                linkWaiters: state.linkWaiters.take(), tasks: state.tasks.take(), link: state.link,
                linkOpen: state.linkOpen, wasOpen: wasOpen)
        }
        guard let taken else { return }
        inbox.finish(error, discarding: discarding)
        let closed = error ?? Self.closedError
        for (_, entry) in taken.pings {
            entry.timer.cancel()
            entry.waiter.resume(throwing: closed)
        }
        for waiter in taken.linkWaiters { waiter.resume(throwing: closed) }
        for task in taken.tasks { task.cancel() }
        if taken.linkOpen {
            let connection = taken.link.connection
            if let code, taken.wasOpen {
                // On the connection's executor, as its reader: the close frame goes out without waiting for a
                // thread of the global executor, which may be busy.
                Task(executorPreference: connection.receiveExecutor) {
                    try? await connection.send(.close(code))
                    connection.close()
                }
            } else {
                connection.close()
            }
            taken.link.end(error)
        }
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

extension Array {
    /// Empties the array and returns what it held.
    fileprivate mutating func take() -> [Element] {
        defer { self = [] }
        return self
    }
}

extension Dictionary {
    /// Empties the dictionary and returns what it held.
    fileprivate mutating func take() -> [Key: Value] {
        defer { self = [:] }
        return self
    }
}
