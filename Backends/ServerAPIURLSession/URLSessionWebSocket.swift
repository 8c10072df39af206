import Foundation
@_spi(Backend) @_spi(Transport) import ServerAPIKit

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// One WebSocket over a `URLSessionWebSocketTask`: the handshake, then the core's frames mapped onto the task's
/// messages.
///
/// URLSession works in messages, not frames, and runs the protocol's control frames itself, so this connection
/// translates:
/// - a text or binary frame is sent as one message (fragments are joined first: URLSession sends a message whole);
/// - a ping is sent with `sendPing`, and its pong comes back to the core as a pong frame with the ping's payload,
///   which URLSession does not put on the wire (it sends its own);
/// - a pong is not sent: URLSession answers the server's pings itself and never hands them over;
/// - a close frame closes the task with its code and reason (a code URLSession's `CloseCode` does not name goes
///   out as 1000 where Foundation's enum is closed, on Linux);
/// - a message received is one final frame; the server's close arrives as a close frame with the task's
///   `closeCode` and `closeReason`, then the end.
///
/// Backpressure: the task is asked for a message only when the core asks for a frame, so at most one message
/// is taken from URLSession at a time; URLSession itself buffers what the socket received.
///
/// Ownership: the delegate routes the task's open and completion here by task identifier; the state is under a
/// lock; the task is created, resumed and cancelled on the transport's control queue (see `CallbackQueue`).
final class URLSessionWebSocket: WebSocketConnection {
    private struct State {
        var handshake: CheckedContinuation<WebSocketUpgrade, any Error>?
        var task: URLSessionWebSocketTask?
        var opened = false
        /// Frames made here (pongs, the server's close) and messages received, waiting for `receive()`.
        var frames: [WebSocketFrame] = []
        var receiver: CheckedContinuation<WebSocketFrame?, any Error>?
        /// A `URLSessionWebSocketTask.receive` is outstanding.
        var receiving = false
        /// The connection ended: cleanly (`nil`) or with an error.
        var ended: ServerAPIError??
        /// A close frame was sent, or `close()` was called: the task's end is then clean.
        var closing = false
        /// The fragments of a message being sent.
        var fragments: (opcode: WebSocketFrame.Opcode, payload: Data)?
    }

    private let state = Locked(State())
    let request: TransportRequest
    private let transport: URLSessionTransport

    init(request: TransportRequest, transport: URLSessionTransport) {
        self.request = request
        self.transport = transport
    }

    // MARK: The handshake

    /// Creates the task and starts it; `handshake` resumes with the server's answer or the failure.
    func start(_ handshake: CheckedContinuation<WebSocketUpgrade, any Error>) {
        let urlRequest = Self.urlRequest(for: request, configuration: transport.configuration)
        let closed = state.withLock { state in
            if state.closing { return true }
            state.handshake = handshake
            return false
        }
        if closed { return handshake.resume(throwing: ServerAPIError.cancelled()) }
        let transport = self.transport
        let limit = request.maxResponseSize
        transport.control.async { [self] in
            // On the control queue, as the invalidation is: no task is made on an invalidated session.
            if transport.delegate.isInvalidated { return close() }
            let task = transport.session.webSocketTask(with: urlRequest)
            if let limit { task.maximumMessageSize = Int(clamping: limit) }
            transport.delegate.register(task, for: self)
            let live = state.withLock { state -> Bool in
                guard !state.closing else { return false }
                state.task = task
                return true
            }
            if live {
                task.resume()
            } else {
                transport.delegate.unregister(task.taskIdentifier)
                task.cancel()
            }
        }
    }

    /// The handshake's request: the call's headers (the subprotocols among them) on its `ws`/`wss` URL.
    static func urlRequest(for request: TransportRequest, configuration: URLSessionTransport.Configuration)
        -> URLRequest
    {
        // URLSession makes a WebSocket task for the ws and wss schemes.
        let url = WebSocketHandshakeRule.webSocketForm(of: request.url.absoluteString).flatMap(URL.init(string:))
        var urlRequest = URLRequest(url: url ?? request.url)
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.httpShouldHandleCookies = configuration.handlesCookies
        // The handshake's limit is the manager's (the call's timeout); this one only keeps the session's default
        // inactivity timer from ending a quiet connection.
        urlRequest.timeoutInterval = TimeInterval(URLSessionTransport.resourceTimeout)
        RequestConversion.setHeaders(request.headers, on: &urlRequest, configuration: configuration)
        return urlRequest
    }

    /// The delegate's `didOpenWithProtocol`: the server switched protocols.
    func opened(_ task: URLSessionWebSocketTask, subprotocol: String?) {
        let handshake = state.withLock { state in
            state.opened = true
            return state.handshake.take()
        }
        var headers = HTTPHeaders()
        var status = 101
        if let response = task.response as? HTTPURLResponse {
            headers = RequestConversion.headers(of: response)
            status = response.statusCode
        }
        if let subprotocol, !subprotocol.isEmpty, !headers.contains("Sec-WebSocket-Protocol") {
            headers.add(name: "Sec-WebSocket-Protocol", value: subprotocol)
        }
        let response = TransportResponse(
            status: status, headers: headers, body: .data(Data()), url: request.url,
            metrics: TransportMetrics(transport: transport.name))
        // Apple's URLSession sends a key of its own and checks the answer before it opens; FoundationNetworking
        // leaves the request's key to libcurl, which sends it and checks nothing, so the core checks the answer.
        #if canImport(FoundationNetworking)
            let verified = false
        #else
            let verified = true
        #endif
        handshake?.resume(
            returning: WebSocketUpgrade(response: response, connection: self, handshakeVerified: verified))
    }

    /// The delegate's `didCompleteWithError`: before the open, the handshake's failure or refusal; after it, the
    /// connection's end.
    func completed(_ task: URLSessionTask, error: (any Error)?) {
        let (handshake, closing) = state.withLock { ($0.handshake.take(), $0.closing) }
        if let handshake {
            if closing { return handshake.resume(throwing: ServerAPIError.cancelled()) }
            if let response = task.response as? HTTPURLResponse, response.statusCode != 101 {
                // A refused upgrade: its status and head (URLSession does not hand over the body).
                let refusal = TransportResponse(
                    status: response.statusCode, headers: RequestConversion.headers(of: response),
                    body: .data(Data()), url: request.url, metrics: TransportMetrics(transport: transport.name))
                return handshake.resume(returning: WebSocketUpgrade(response: refusal, connection: nil))
            }
            return handshake.resume(throwing: failure(error))
        }
        end(closing || error == nil ? nil : failure(error))
    }

    /// What a task's error means for this connection: FoundationNetworking built without WebSockets refuses the
    /// `ws` URL itself (`unsupportedURL`, "WebSockets not supported by libcurl"), which is `unsupported`.
    private func failure(_ error: (any Error)?) -> ServerAPIError {
        guard let error else { return ServerAPIError(.network, "the WebSocket closed before it opened") }
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain, nsError.code == URLError.Code.unsupportedURL.rawValue {
            return URLSessionTransport.webSocketRefusal.with(requestID: request.id, url: request.url)
        }
        return URLErrorMapping.map(error, request: request)
    }

    // MARK: WebSocketConnection

    func send(_ frame: WebSocketFrame) async throws {
        guard let task = try sendingTask() else { return }
        switch frame.opcode {
        case .text, .binary, .continuation:
            guard let message = try joined(frame) else { return }
            try await withCheckedThrowingContinuation { (sent: CheckedContinuation<Void, any Error>) in
                task.send(message) { [self] error in
                    if let error { sent.resume(throwing: failure(error)) } else { sent.resume() }
                }
            }
        case .ping:
            let payload = frame.payload
            task.sendPing { [weak self] error in
                // No error: the pong arrived. An error ends the task, and with it the connection.
                if error == nil { self?.deliver(WebSocketFrame(.pong, payload: payload)) }
            }
        case .close:
            let (code, reason) = Self.closePayload(frame.payload)
            state.withLock { $0.closing = true }
            transport.control.async { task.cancel(with: code, reason: reason) }
        default:
            // Pongs are URLSession's own (it answers pings and never hands them over); other opcodes it cannot send.
            break
        }
    }

    func receive() async throws -> WebSocketFrame? {
        try await withCheckedThrowingContinuation { (receiver: CheckedContinuation<WebSocketFrame?, any Error>) in
            enum Answer {
                case frame(WebSocketFrame?)
                case failure(ServerAPIError)
                case ask(URLSessionWebSocketTask)
                case wait
            }
            let answer: Answer = state.withLock { state in
                if !state.frames.isEmpty { return .frame(state.frames.removeFirst()) }
                if case .some(let end) = state.ended { return end.map { .failure($0) } ?? .frame(nil) }
                state.receiver = receiver
                guard !state.receiving, let task = state.task else { return .wait }
                state.receiving = true
                return .ask(task)
            }
            switch answer {
            case .frame(let frame): receiver.resume(returning: frame)
            case .failure(let error): receiver.resume(throwing: error)
            case .ask(let task): askForMessage(task)
            case .wait: break
            }
        }
    }

    func close() {
        let (task, handshake) = state.withLock { state in
            state.closing = true
            return (state.task, state.handshake.take())
        }
        handshake?.resume(throwing: ServerAPIError.cancelled())
        end(nil)
        guard let task else { return }
        transport.delegate.unregister(task.taskIdentifier)
        transport.control.async { task.cancel() }
    }

    // MARK: Internals

    /// Takes one message from the task for the waiting receiver.
    private func askForMessage(_ task: URLSessionWebSocketTask) {
        task.receive { [weak self] result in
            guard let self else { return }
            state.withLock { $0.receiving = false }
            switch result {
            case .success(let message):
                deliver(Self.frame(of: message))
            case .failure(let error):
                if task.closeCode != .invalid {
                    // The server closed: its close frame, as the core reads one, then the end.
                    var payload = Data()
                    let code = task.closeCode.rawValue
                    payload.append(contentsOf: [UInt8(truncatingIfNeeded: code >> 8), UInt8(truncatingIfNeeded: code)])
                    payload.append(task.closeReason ?? Data())
                    deliver(WebSocketFrame(.close, payload: payload))
                    end(nil)
                } else {
                    let closing = state.withLock { $0.closing }
                    end(closing ? nil : failure(error))
                }
            }
        }
    }

    /// A message received, as one final frame.
    private static func frame(of message: URLSessionWebSocketTask.Message) -> WebSocketFrame {
        // `if case` rather than `switch`: Apple's enum is open (`@unknown default`), Linux's is not.
        if case .string(let text) = message { return WebSocketFrame(.text, payload: Data(text.utf8)) }
        if case .data(let data) = message { return WebSocketFrame(.binary, payload: data) }
        return WebSocketFrame(.binary, payload: Data())
    }

    /// Hands a frame to the waiting receiver, or keeps it for the next `receive()`.
    private func deliver(_ frame: WebSocketFrame) {
        let receiver = state.withLock { state -> CheckedContinuation<WebSocketFrame?, any Error>? in
            if let receiver = state.receiver.take() { return receiver }
            state.frames.append(frame)
            return nil
        }
        receiver?.resume(returning: frame)
    }

    /// Ends the connection once: a waiting receiver gets the frames held first, then the end.
    private func end(_ error: ServerAPIError?) {
        let receiver = state.withLock { state -> CheckedContinuation<WebSocketFrame?, any Error>? in
            if case .none = state.ended { state.ended = .some(error) }
            guard state.frames.isEmpty else { return nil }
            return state.receiver.take()
        }
        guard let receiver else { return }
        if let error { receiver.resume(throwing: error) } else { receiver.resume(returning: nil) }
    }

    /// The task to send on; `nil` when nothing may be sent any more.
    private func sendingTask() throws -> URLSessionWebSocketTask? {
        try state.withLock { state in
            if case .some(let end) = state.ended { throw end ?? ServerAPIError(.network, "the WebSocket is closed") }
            guard let task = state.task else { throw ServerAPIError(.network, "the WebSocket is not open") }
            return task
        }
    }

    /// The message a data frame completes, joining fragments; `nil` while a fragmented message is incomplete.
    private func joined(_ frame: WebSocketFrame) throws -> URLSessionWebSocketTask.Message? {
        let whole: (WebSocketFrame.Opcode, Data)? = try state.withLock { state in
            if frame.opcode == .continuation {
                guard var fragments = state.fragments else {
                    throw ServerAPIError(.invalidRequest, "a continuation frame without a message to continue")
                }
                fragments.payload.append(frame.payload)
                state.fragments = frame.isFinal ? nil : fragments
                return frame.isFinal ? (fragments.opcode, fragments.payload) : nil
            }
            guard frame.isFinal else {
                state.fragments = (frame.opcode, frame.payload)
                return nil
            }
            return (frame.opcode, frame.payload)
        }
        guard let (opcode, payload) = whole else { return nil }
        if opcode == .binary { return .data(payload) }
        guard let text = String(validating: payload, as: UTF8.self) else {
            throw ServerAPIError(.invalidRequest, "a text message that is not UTF-8")
        }
        return .string(text)
    }

    /// A close frame's code and reason, as URLSession takes them.
    static func closePayload(_ payload: Data) -> (URLSessionWebSocketTask.CloseCode, Data?) {
        guard payload.count >= 2 else { return (.normalClosure, nil) }
        let raw = Int(payload[payload.startIndex]) << 8 | Int(payload[payload.startIndex + 1])
        let reason = payload.dropFirst(2)
        return (URLSessionWebSocketTask.CloseCode(rawValue: raw) ?? .normalClosure, reason.isEmpty ? nil : Data(reason))
    }
}
