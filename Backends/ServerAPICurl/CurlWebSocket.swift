internal import CCurl
@_spi(Backend) @_spi(Transport) import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One WebSocket on a transport's loop, as the core drives it (`WebSocketConnection`), from any thread.
///
/// The connection itself is a libcurl connection on the loop (`CurlWebSocketIO`, loop thread only): libcurl
/// connects it as for an HTTP transfer (`CURLOPT_CONNECT_ONLY`), the loop writes the handshake and moves the bytes
/// with `curl_easy_send` and `curl_easy_recv`, the core frames them (`WebSocketFrameCodec`) and runs the protocol.
///
/// Ownership: the core's calls change `state` under its lock and ask the loop to look at the socket
/// (`CurlLoop.resume(.webSocket(id))`), once until the loop has looked; the loop takes what is queued and hands
/// received frames back here. Waiters are resumed outside the lock. The socket keeps its transport alive until it
/// ends, as a streamed body does: a WebSocket lives on while its transport's owner lets go of the transport.
package final class CurlWebSocket: WebSocketConnection {
    /// Received bytes held for the core before the loop stops reading the socket (it reads again below half). The
    /// core's reader takes frames on the same loop, at its next turn, into the socket's own bounded buffer
    /// (`WebSocket.Configuration.receiveBufferSize`): this one only spans a turn, a few reads of the loop's 64 KiB.
    static let receiveBufferLimit = 256 << 10
    /// What a held frame counts for besides its payload (the frame and its place in the queue): a flood of tiny
    /// frames (compressed ones are a few bytes) stays within the limit's memory too.
    static let frameCost = 64
    /// Bytes queued to send before `send` waits for the loop to write some: memory stays bounded when the server
    /// reads slower than we send.
    static let sendBufferLimit = 1 << 20
    /// The most WebSockets a loop keeps in one libcurl multi handle (`CurlLoopRunner`): libcurl walks the multi
    /// handle's connections at each `curl_easy_send` and `curl_easy_recv`, and a multi handle is about 6 KB.
    package static let socketsPerMultiHandle = 32

    private struct State {
        /// Encoded frames the loop has not taken yet, each with who waits for it to be written (a close frame's
        /// sender).
        var outgoing: [(bytes: Data, written: CheckedContinuation<Void, any Error>?)] = []
        /// Bytes queued and not yet written, taken by the loop or not.
        var outgoingBytes = 0
        /// Senders waiting for `outgoingBytes` to fall to the limit.
        var sendWaiters: [CheckedContinuation<Void, any Error>] = []
        var frames: [WebSocketFrame] = []
        var frameHead = 0
        var bufferedBytes = 0
        var receiver: CheckedContinuation<WebSocketFrame?, any Error>?
        /// The connection ended: cleanly (`nil`) or with an error; frames held are still read first.
        var ended: ServerAPIError?? = nil
        /// The received bytes could not be framed: `receive()` throws this once the frames before it are read.
        var receiveFailure: ServerAPIError?
        var closeRequested = false
        /// The loop stopped reading the socket because the core is behind.
        var paused = false
        /// The loop has been asked to look at the socket and has not yet.
        var serviceRequested = false
        /// The transport, kept alive until the socket ends.
        var owner: CurlTransport?
    }

    private let state: Locked<State>
    /// The socket's id on its loop (its handshake's job id).
    let id: UInt64
    /// The loop the socket lives on.
    let loop: CurlLoop

    init(id: UInt64, loop: CurlLoop, owner: CurlTransport) {
        self.id = id
        self.loop = loop
        var initial = State()
        initial.owner = owner
        state = Locked(initial)
    }

    /// Whether the loop stopped reading because the core is behind, for tests.
    package var isReceivePaused: Bool { state.withLock { $0.paused } }

    /// The core's reader runs on the socket's loop: a frame read there is assembled and handed on there, with no
    /// other thread woken but the one of the task awaiting the message.
    package var receiveExecutor: (any TaskExecutor)? { loop }

    // MARK: WebSocketConnection

    /// Queues the frame and returns; waits only while more than `sendBufferLimit` bytes are queued. A failure to
    /// write it later ends the connection (`receive()` throws it). A close frame is waited for until it is written:
    /// the core closes the connection right after sending one.
    package func send(_ frame: WebSocketFrame) async throws {
        let bytes = WebSocketFrameCodec.encode(frame)
        if frame.opcode == .close {
            return try await withCheckedThrowingContinuation { (written: CheckedContinuation<Void, any Error>) in
                if let refusal = enqueue(bytes, written: written) { written.resume(throwing: refusal) }
            }
        }
        if let refusal = enqueue(bytes, written: nil) { throw refusal }
        guard state.withLock({ $0.outgoingBytes > Self.sendBufferLimit }) else { return }
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            let answer: Result<Void, ServerAPIError>? = state.withLock { state in
                if case .some(let end) = state.ended { return .failure(end ?? Self.closed) }
                guard state.outgoingBytes > Self.sendBufferLimit else { return .success(()) }
                state.sendWaiters.append(waiter)
                return nil
            }
            if let answer { waiter.resume(with: answer) }
        }
    }

    static let closed = ServerAPIError(.network, "the WebSocket is closed")

    /// Queues encoded bytes for the loop; the refusal when nothing may be sent.
    private func enqueue(_ bytes: Data, written: CheckedContinuation<Void, any Error>?) -> ServerAPIError? {
        let (refusal, service): (ServerAPIError?, Bool) = state.withLock { state in
            if state.closeRequested { return (Self.closed, false) }
            if case .some(let end) = state.ended { return (end ?? Self.closed, false) }
            state.outgoing.append((bytes, written))
            state.outgoingBytes += bytes.count
            return (nil, Self.needsService(&state))
        }
        if service { loop.resume(.webSocket(id)) }
        return refusal
    }

    package func receive() async throws -> WebSocketFrame? {
        // A frame held already is returned without a continuation.
        if let held = takeReadyFrame() { return held }
        return try await withCheckedThrowingContinuation {
            (receiver: CheckedContinuation<WebSocketFrame?, any Error>) in
            let (answer, service): (Result<WebSocketFrame?, ServerAPIError>?, Bool) = state.withLock { state in
                if let frame = Self.pop(&state) { return (.success(frame), Self.needsResuming(&state)) }
                if let failure = state.receiveFailure { return (.failure(failure), false) }
                if case .some(let end) = state.ended { return (end.map { .failure($0) } ?? .success(nil), false) }
                state.receiver = receiver
                return (nil, false)
            }
            if service { loop.resume(.webSocket(id)) }
            if let answer { receiver.resume(with: answer) }
        }
    }

    package func takeReadyFrame() -> WebSocketFrame? {
        let (held, resumeReading) = state.withLock { state -> (WebSocketFrame?, Bool) in
            guard let frame = Self.pop(&state) else { return (nil, false) }
            return (frame, Self.needsResuming(&state))
        }
        if resumeReading { loop.resume(.webSocket(id)) }
        return held
    }

    package func close() {
        let service = state.withLock { state in
            state.closeRequested = true
            return Self.needsService(&state)
        }
        if service { loop.resume(.webSocket(id)) }
    }

    // MARK: For the loop (its thread)

    /// What the loop does next: bytes to send, whether to close, whether to read again after a pause.
    func takeWork() -> (
        outgoing: [(bytes: Data, written: CheckedContinuation<Void, any Error>?)], close: Bool, resume: Bool
    ) {
        state.withLock { state in
            state.serviceRequested = false
            let outgoing = state.outgoing
            state.outgoing.removeAll()
            let resume = state.paused && state.bufferedBytes < Self.receiveBufferLimit / 2
            if resume { state.paused = false }
            return (outgoing, state.closeRequested, resume)
        }
    }

    /// `count` queued bytes were written: senders waiting for room go on once the queue is within its limit.
    func wrote(_ count: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.outgoingBytes -= count
            guard state.outgoingBytes <= Self.sendBufferLimit else { return [] }
            defer { state.sendWaiters.removeAll() }
            return state.sendWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Frames received, in order.
    /// - Returns: Whether the loop may read on; `false` once the core is `receiveBufferLimit` behind (the loop
    ///   stops reading until `takeWork` says to resume).
    func deliver(_ frames: [WebSocketFrame]) -> Bool {
        guard !frames.isEmpty else { return true }
        let (receiver, frame, readOn) = state.withLock {
            state -> (CheckedContinuation<WebSocketFrame?, any Error>?, WebSocketFrame?, Bool) in
            for frame in frames {
                state.frames.append(frame)
                state.bufferedBytes += frame.payload.count + Self.frameCost
            }
            let receiver = state.receiver.take()
            let frame = receiver == nil ? nil : Self.pop(&state)
            if state.bufferedBytes >= Self.receiveBufferLimit { state.paused = true }
            return (receiver, frame, !state.paused)
        }
        receiver?.resume(returning: frame)
        return readOn
    }

    /// The received bytes broke the framing rules: `receive()` throws `failure` after the frames before it.
    func failReceiving(_ failure: ServerAPIError) {
        let receiver = state.withLock { state in
            state.receiveFailure = failure
            return state.frameHead == state.frames.count ? state.receiver.take() : nil
        }
        receiver?.resume(throwing: failure)
    }

    /// The connection ended: cleanly (`nil`, the server closed it or the core did) or with `error`. Waiters are
    /// resumed; the transport is let go.
    func ended(_ error: ServerAPIError?) {
        let (receiver, frame, senders, owner) = state.withLock { state in
            if case .none = state.ended { state.ended = .some(error) }
            let receiver = state.receiver.take()
            let frame = receiver == nil ? nil : Self.pop(&state)
            let senders = state.sendWaiters + state.outgoing.compactMap(\.written)
            state.sendWaiters.removeAll()
            state.outgoing.removeAll()
            return (receiver, frame, senders, state.owner.take())
        }
        let failure = error ?? Self.closed
        for sender in senders { sender.resume(throwing: failure) }
        // Released outside the lock: the transport's deinit stops its loops.
        withExtendedLifetime(owner) {}
        guard let receiver else { return }
        if let frame {
            receiver.resume(returning: frame)
        } else if let receiveFailure = state.withLock({ $0.receiveFailure }) {
            receiver.resume(throwing: receiveFailure)
        } else if let error {
            receiver.resume(throwing: error)
        } else {
            receiver.resume(returning: nil)
        }
    }

    private static func pop(_ state: inout State) -> WebSocketFrame? {
        guard state.frameHead < state.frames.count else { return nil }
        let frame = state.frames[state.frameHead]
        state.frameHead += 1
        state.bufferedBytes -= frame.payload.count + frameCost
        if state.frameHead == state.frames.count {
            state.frames.removeAll(keepingCapacity: state.frames.count <= 16)
            state.frameHead = 0
        } else if state.frameHead >= 64, state.frameHead * 2 >= state.frames.count {
            state.frames.removeFirst(state.frameHead)
            state.frameHead = 0
        }
        return frame
    }

    /// Whether the loop must be asked to look at the socket; it is asked once until it has looked.
    private static func needsService(_ state: inout State) -> Bool {
        guard !state.serviceRequested, case .none = state.ended else { return false }
        state.serviceRequested = true
        return true
    }

    /// After a `pop`: whether the loop must be asked to read again.
    private static func needsResuming(_ state: inout State) -> Bool {
        guard state.paused, state.bufferedBytes < receiveBufferLimit / 2 else { return false }
        return needsService(&state)
    }
}

extension CurlWebSocket {
    /// The socket's half on its loop thread, once libcurl has connected it: the easy handle (still in the loop's
    /// WebSocket multi handle, where libcurl keeps the connection of a `CURLOPT_CONNECT_ONLY` handle), its
    /// descriptor, the handshake, the frame decoder and the bytes waiting to be written.
    ///
    /// Every call is non-blocking: `curl_easy_send` and `curl_easy_recv` go through TLS and a proxy's tunnel and say
    /// `CURLE_AGAIN` when the socket would block; what could not be written waits here, and the loop watches the
    /// descriptor for writing only then. So a slow server holds up no other socket or transfer of the loop.
    ///
    /// - Important: Loop thread only. `CurlLoopRunner` keeps it, watches its descriptor, and releases it (the easy
    ///   handle leaves the multi handle, which closes the connection) once `isFinished`.
    final class Wire {
        enum Phase {
            /// The upgrade request is being written and the answer's head read.
            case handshake
            /// The server refused the upgrade: its body is read, up to `refusalBodyLimit`, before it is answered.
            case refused(status: Int, headers: HTTPHeaders, bodyLength: Int)
            case open
            /// The core closed the connection: our side is shut for writing, and what the server still sends is
            /// read and dropped until it closes too (or the drain's deadline), so that the close frame written last
            /// is not lost to a reset (RFC 6455 §7.1.1).
            case closing
            case finished
        }

        let socket: CurlWebSocket
        /// The job's id.
        let id: UInt64
        /// The connection's handle.
        let easy: CurlEasyHandle
        /// The handshake's transfer: its request and job (whose continuation takes the answer). Let go once the
        /// handshake is answered (`handshakeDone`): an open socket keeps only its handle.
        private var handshake: CurlTransfer?
        let descriptor: Int32
        private(set) var phase = Phase.handshake
        /// The handshake's answer so far; then a refusal's body.
        private var head = Data()
        private var codec: WebSocketFrameCodec
        /// Bytes to write, in order, each with how much went out, whether it counts against the socket's send
        /// buffer (a frame; not the handshake's request), and who waits for it to be written.
        private var pending: [(bytes: Data, sent: Int, counted: Bool, written: CheckedContinuation<Void, any Error>?)] =
            []
        /// The core is behind: the socket is not read until it catches up.
        private(set) var readPaused = false
        /// The received bytes broke the framing: what arrives after is dropped.
        private var framingFailed = false
        /// When the handshake runs out of time (the request's timeout, from the call's start), then when a closing
        /// socket stops draining; `nil` while open.
        private(set) var deadline: ContinuousClock.Instant?
        /// What the loop's socket set watches the descriptor for now (`interest` when it last looked).
        var watched: Int32?

        /// The largest handshake answer head read.
        static let maxHeadSize = 64 << 10
        /// The most of a refusal's body kept.
        static let refusalBodyLimit = 4096
        /// How long a closed socket is drained for the server's end.
        static let drainTime = Duration.seconds(2)

        init(socket: CurlWebSocket, transfer: CurlTransfer, descriptor: Int32) {
            self.socket = socket
            id = transfer.job.id
            easy = transfer.easy
            handshake = transfer
            self.descriptor = descriptor
            codec = WebSocketFrameCodec(
                maxFramePayload: transfer.request.maxResponseSize.map { Int(clamping: $0) } ?? 16 << 20)
            deadline = transfer.started + transfer.request.timeout
        }

        var isFinished: Bool {
            if case .finished = phase { return true }
            return false
        }

        /// What the loop watches the descriptor for: `CURL_POLL_IN`, `_OUT`, `_INOUT`, or `nil` for nothing (reading
        /// paused, nothing to write: a level-triggered hang-up would otherwise wake the loop again and again).
        var interest: Int32? {
            let reading = !readPaused
            let writing = !pending.isEmpty
            switch (reading, writing) {
            case (true, true): return CURL_POLL_INOUT
            case (true, false): return CURL_POLL_IN
            case (false, true): return CURL_POLL_OUT
            case (false, false): return nil
            }
        }

        // MARK: Events

        /// libcurl connected: the upgrade request goes out.
        func start(scratch: UnsafeMutableRawBufferPointer) {
            pending.append((handshakeRequest(), 0, false, nil))
            flush()
            read(scratch)
        }

        /// The core queued frames, closed the socket, or caught up with reading.
        func service(scratch: UnsafeMutableRawBufferPointer) {
            let work = socket.takeWork()
            if case .open = phase {
                for item in work.outgoing { pending.append((item.bytes, 0, true, item.written)) }
            } else {
                for item in work.outgoing { item.written?.resume(throwing: CurlWebSocket.closed) }
            }
            if work.close {
                beginClosing()
            } else {
                flush()
            }
            if work.resume, readPaused {
                readPaused = false
                // TLS may hold decrypted bytes the descriptor does not show.
                read(scratch)
            }
        }

        /// The descriptor is ready (`CURL_CSELECT_IN`, `_OUT`, `_ERR`).
        func ready(_ mask: Int32, scratch: UnsafeMutableRawBufferPointer) {
            if mask & CURL_CSELECT_OUT != 0 { flush() }
            if mask & (CURL_CSELECT_IN | CURL_CSELECT_ERR) != 0 { read(scratch) }
        }

        /// Ends the socket with `error`: the handshake's caller gets it, or the core (`receive()` throws it).
        func fail(_ error: ServerAPIError) {
            switch phase {
            case .handshake, .refused:
                handshake?.report(error, metrics: nil)
                handshakeDone()
                socket.ended(error)
            case .open:
                socket.ended(error)
            case .closing, .finished:
                break
            }
            for item in pending { item.written?.resume(throwing: error) }
            pending.removeAll()
            phase = .finished
        }

        /// `deadline` passed: the handshake timed out, or the drain is over.
        func deadlinePassed() {
            switch phase {
            case .handshake, .refused: fail(.timedOut(after: handshake?.request.timeout ?? .zero))
            case .closing: phase = .finished
            case .open, .finished: break
            }
        }

        // MARK: Writing

        private func flush() {
            while !pending.isEmpty {
                let item = pending[0]
                var sent = 0
                let code = item.bytes.withUnsafeBytes { raw in
                    curl_easy_send(easy.raw, raw.baseAddress! + item.sent, item.bytes.count - item.sent, &sent)
                }
                if code == CURLE_AGAIN { return }
                guard code == CURLE_OK else {
                    return fail(.curl(code, detail: easy.errorMessage))
                }
                pending[0].sent += sent
                guard pending[0].sent == item.bytes.count else { continue }
                pending.removeFirst()
                if item.counted { socket.wrote(item.bytes.count) }
                item.written?.resume()
            }
        }

        // MARK: Reading

        /// Reads until the socket would block (TLS may hold more than one read), the core is behind, or it ends.
        private func read(_ scratch: UnsafeMutableRawBufferPointer) {
            while !readPaused {
                switch phase {
                case .finished: return
                case .handshake, .refused, .open, .closing: break
                }
                var count = 0
                let code = curl_easy_recv(easy.raw, scratch.baseAddress, scratch.count, &count)
                if code == CURLE_AGAIN { return }
                guard code == CURLE_OK else {
                    if case .closing = phase {
                        phase = .finished
                        return
                    }
                    return fail(.curl(code, detail: easy.errorMessage))
                }
                guard count > 0 else { return ended() }
                received(UnsafeRawBufferPointer(rebasing: scratch[..<count]))
            }
        }

        private func received(_ bytes: UnsafeRawBufferPointer) {
            switch phase {
            case .handshake:
                let searchFrom = max(0, head.count - 3)
                head.append(contentsOf: bytes)
                readHead(searchFrom: searchFrom)
            case .refused(let status, let headers, let bodyLength):
                head.append(contentsOf: bytes.prefix(Self.refusalBodyLimit - head.count))
                if head.count >= min(bodyLength, Self.refusalBodyLimit) { answerRefusal(status, headers) }
            case .open:
                decode(bytes)
            case .closing, .finished:
                break
            }
        }

        /// Reads the handshake's answer once its head is whole.
        private func readHead(searchFrom: Int) {
            var from = searchFrom
            while case .handshake = phase {
                guard let end = Self.headEnd(in: head, from: from) else {
                    if head.count > Self.maxHeadSize {
                        fail(
                            ServerAPIError(
                                .responseTooLarge,
                                "the WebSocket handshake's answer has a head of more than \(Self.maxHeadSize) bytes"))
                    }
                    return
                }
                let (status, headers) = Self.parseHead(head.prefix(end))
                let rest = Data(head[(head.startIndex + end)...])
                head = Data()
                switch status {
                case 101:
                    phase = .open
                    deadline = nil
                    answer(status: status, headers: headers, body: Data())
                    if !rest.isEmpty { rest.withUnsafeBytes { decode($0) } }
                case 0:
                    fail(ServerAPIError(.network, "the answer to the WebSocket handshake is not an HTTP response"))
                case 100..<200:
                    // An interim answer: the real one follows.
                    head = rest
                    from = 0
                    continue
                default:
                    let length = headers["Content-Length"].flatMap { Int($0) } ?? Self.refusalBodyLimit
                    phase = .refused(status: status, headers: headers, bodyLength: length)
                    head = Data(rest.prefix(Self.refusalBodyLimit))
                    if head.count >= min(length, Self.refusalBodyLimit) { answerRefusal(status, headers) }
                }
                return
            }
        }

        private func answerRefusal(_ status: Int, _ headers: HTTPHeaders) {
            answer(status: status, headers: headers, body: head)
            socket.ended(nil)
            phase = .finished
        }

        private func decode(_ bytes: UnsafeRawBufferPointer) {
            guard !framingFailed else { return }
            do {
                if !socket.deliver(try codec.decode(bytes)) { readPaused = true }
            } catch {
                // The connection stays up for the core's close frame with the failure's code; what arrives after
                // the failure is dropped (the decoder takes nothing more).
                framingFailed = true
                socket.failReceiving(
                    ServerAPIError(
                        error.code == .messageTooBig ? .responseTooLarge : .network,
                        "\(error.message) (closed with \(error.code))", underlying: error))
            }
        }

        /// The server closed the connection.
        private func ended() {
            switch phase {
            case .handshake:
                fail(
                    ServerAPIError(
                        .network, "the server closed the connection before answering the WebSocket handshake"))
            case .refused(let status, let headers, _):
                answerRefusal(status, headers)
            case .open:
                socket.ended(nil)
                phase = .finished
            case .closing, .finished:
                phase = .finished
            }
        }

        // MARK: Closing

        private func beginClosing() {
            switch phase {
            case .open: break
            case .handshake, .refused: return fail(.cancelled())
            case .closing, .finished: return
            }
            for item in pending { item.written?.resume(throwing: CurlWebSocket.closed) }
            pending.removeAll()
            socket.ended(nil)
            phase = .closing
            deadline = .now + Self.drainTime
            readPaused = false
            _ = shutdown(descriptor, Int32(SHUT_WR))
        }

        // MARK: The handshake

        /// Gives the handshake's caller the server's answer, and lets the handshake's transfer go.
        private func answer(status: Int, headers: HTTPHeaders, body: Data) {
            guard let handshake else { return }
            handshake.job.continuation.resume(
                returning: TransportResponse(
                    status: status, headers: headers, body: .data(body), url: handshake.request.url,
                    metrics: TransportMetrics(transport: "curl", total: ContinuousClock.now - handshake.started)))
            handshakeDone()
        }

        /// Lets the handshake's transfer go (its request, job and lists), once its caller has the answer: libcurl
        /// reads the lists only while it connects.
        func handshakeDone() {
            guard let handshake else { return }
            _ = ccurl_easy_setopt_slist(easy.raw, CURLOPT_HTTPHEADER, nil)
            _ = ccurl_easy_setopt_slist(easy.raw, CURLOPT_RESOLVE, nil)
            handshake.releaseRequestResources()
            self.handshake = nil
        }

        /// The upgrade request (RFC 6455 §4.1): the request line, `Host`, the upgrade's own fields, then the
        /// request's fields (the core's key, version, extensions and protocols, cookies), and what libcurl adds to an
        /// HTTP request: the user-info's Basic credentials and the default `User-Agent`.
        private func handshakeRequest() -> Data {
            guard let request = handshake?.request else { return Data() }
            let (authority, target) = Self.authorityAndTarget(request.url.absoluteString)
            var lines = ["GET \(target) HTTP/1.1"]
            let headers = request.headers
            if !headers.contains("Host") { lines.append("Host: \(authority)") }
            if !headers.contains("Upgrade") { lines.append("Upgrade: websocket") }
            if !headers.contains("Connection") { lines.append("Connection: Upgrade") }
            if !headers.contains("Sec-WebSocket-Version") { lines.append("Sec-WebSocket-Version: 13") }
            for field in headers { lines.append("\(field.name): \(field.value)") }
            if !headers.contains("Authorization"), let user = request.url.user, !user.isEmpty {
                let credentials = Data("\(user):\(request.url.password ?? "")".utf8).base64EncodedString()
                lines.append("Authorization: Basic \(credentials)")
            }
            if !headers.contains("User-Agent") { lines.append(CurlTransfer.defaultUserAgentLine) }
            return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        }

        /// A URL's authority without its user-info (for `Host`), and its path and query (the request target).
        static func authorityAndTarget(_ url: String) -> (authority: String, target: String) {
            var rest = Substring(url)
            if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
            if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            var authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
            var target = String(rest[authorityEnd...])
            if target.isEmpty || target.first == "?" { target = "/" + target }
            return (String(authority), target)
        }

        /// The offset just past the blank line that ends a head, searching from `from`; `nil` while it has not come.
        static func headEnd(in bytes: Data, from: Int) -> Int? {
            let start = bytes.startIndex
            var index = start + from
            while index + 3 < bytes.endIndex {
                if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                    return index + 4 - start
                }
                index += 1
            }
            return nil
        }

        /// A head's status and fields, read line by line as libcurl's header callback gives them (`CurlHeadLine`).
        static func parseHead(_ bytes: Data) -> (status: Int, headers: HTTPHeaders) {
            var status = 0
            var headers = HTTPHeaders(receiving: 8)
            bytes.withUnsafeBytes { raw in
                var lineStart = 0
                for index in 0..<raw.count where raw[index] == 10 {
                    switch CurlHeadLine(UnsafeRawBufferPointer(rebasing: raw[lineStart...index])) {
                    case .status(let code):
                        status = code
                    case .field(let name, let value):
                        headers.addReceived(name: name, value: value)
                    case .continuation(let text):
                        headers.continueLastField(with: text)
                    case .end, .ignored:
                        break
                    }
                    lineStart = index + 1
                }
            }
            return (status, headers)
        }
    }
}
