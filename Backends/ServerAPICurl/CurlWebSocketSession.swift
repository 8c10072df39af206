internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One WebSocket over libcurl: the handshake, then the connection's bytes both ways, in raw mode
/// (`CURLWS_RAW_MODE`), with the framing done by the core's `WebSocketFrameCodec`.
///
/// Why raw mode: libcurl 8.14's frame mode answers pings inside a partly sent frame (fixed in 8.16), mishandles
/// zero-length frames (8.16) and joins frames delivered to a paused write callback (8.22). In raw mode libcurl
/// only does the handshake and moves bytes, so none of these can happen, pings, pongs and the close handshake
/// are the core's (`WebSocket`), and every libcurl from 8.11 behaves alike.
///
/// Ownership: this object is the `WebSocketConnection` the core drives from any thread; its state is under a
/// lock. The handles live on a thread of the session's own (`CurlWebSocketDriver`), which takes sends and the
/// close from here through the state and a `curl_multi_wakeup`. A connection of its own, not a transfer on the
/// transport's loops, because those loops run whole exchanges (a job, its completion, its cancel path) and a
/// WebSocket is none of these; moving it there is a change for when that pipeline settles.
package final class CurlWebSocketSession: WebSocketConnection {
    /// Received bytes held for the core before the transfer pauses (it resumes below half).
    static let receiveBufferLimit = 1 << 20

    private struct Outgoing {
        var bytes: Data
        var waiter: CheckedContinuation<Void, any Error>?
    }

    private struct State {
        var handshake: CheckedContinuation<WebSocketUpgrade, any Error>?
        var upgraded = false
        var outgoing: [Outgoing] = []
        var frames: [WebSocketFrame] = []
        var frameHead = 0
        var bufferedBytes = 0
        var receiver: CheckedContinuation<WebSocketFrame?, any Error>?
        /// The connection ended: cleanly (`nil`) or with an error; frames held are still read first.
        var ended: ServerAPIError??
        /// The received bytes could not be framed: `receive()` throws this once the frames before it are read.
        var receiveFailure: ServerAPIError?
        var closeRequested = false
        var resumeRequested = false
        var paused = false
        /// The multi handle while the driver runs (as a bit pattern: a pointer is not Sendable), for wake-ups.
        var multi: UInt = 0
    }

    private let state = Locked(State())
    let request: TransportRequest
    let settings: CurlWebSocketSettings

    init(request: TransportRequest, settings: CurlWebSocketSettings) {
        self.request = request
        self.settings = settings
    }

    /// Whether the transfer is paused because the core is behind, for tests.
    package var isReceivePaused: Bool { state.withLock { $0.paused } }

    // MARK: The handshake

    /// Starts the driver's thread; `handshake` resumes with the server's answer or the failure.
    func start(_ handshake: CheckedContinuation<WebSocketUpgrade, any Error>) {
        let closed = state.withLock { state in
            if state.closeRequested { return true }
            state.handshake = handshake
            return false
        }
        if closed { return handshake.resume(throwing: ServerAPIError.cancelled()) }
        let started = CurlThread.start(named: "ServerAPI.curl.ws") { [self] in
            CurlWebSocketDriver(session: self).run()
        }
        if !started {
            ended(ServerAPIError(.network, "the transport could not start a thread for the WebSocket"))
        }
    }

    // MARK: WebSocketConnection

    package func send(_ frame: WebSocketFrame) async throws {
        let bytes = WebSocketFrameCodec.encode(frame)
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            let refusal: ServerAPIError? = state.withLock { state in
                if state.closeRequested { return ServerAPIError(.network, "the WebSocket is closed") }
                if case .some(let end) = state.ended {
                    return end ?? ServerAPIError(.network, "the WebSocket is closed")
                }
                state.outgoing.append(Outgoing(bytes: bytes, waiter: waiter))
                Self.wake(state)
                return nil
            }
            if let refusal { waiter.resume(throwing: refusal) }
        }
    }

    package func receive() async throws -> WebSocketFrame? {
        try await withCheckedThrowingContinuation { (receiver: CheckedContinuation<WebSocketFrame?, any Error>) in
            let answer: Result<WebSocketFrame?, ServerAPIError>? = state.withLock { state in
                if let frame = Self.pop(&state) { return .success(frame) }
                if let failure = state.receiveFailure { return .failure(failure) }
                if case .some(let end) = state.ended { return end.map { .failure($0) } ?? .success(nil) }
                state.receiver = receiver
                return nil
            }
            if let answer { receiver.resume(with: answer) }
        }
    }

    package func close() {
        state.withLock { state in
            state.closeRequested = true
            Self.wake(state)
        }
    }

    // MARK: For the driver (its thread)

    /// What the driver does next: bytes to send, whether to stop, whether to resume receiving.
    func takeWork() -> (outgoing: [(Data, CheckedContinuation<Void, any Error>?)], close: Bool, resume: Bool) {
        state.withLock { state in
            let outgoing = state.outgoing.map { ($0.bytes, $0.waiter) }
            state.outgoing.removeAll()
            let resume = state.resumeRequested
            state.resumeRequested = false
            if resume { state.paused = false }
            return (outgoing, state.closeRequested, resume)
        }
    }

    /// The driver's multi handle, for wake-ups; 0 once it is cleaned up.
    func attach(multi: UInt) {
        state.withLock { $0.multi = multi }
    }

    /// Whether the core is behind: the write callback then pauses the transfer.
    func shouldPause() -> Bool {
        state.withLock { state in
            guard state.bufferedBytes >= Self.receiveBufferLimit else { return false }
            state.paused = true
            return true
        }
    }

    /// The handshake succeeded.
    func upgraded(_ response: TransportResponse) {
        let handshake = state.withLock { state in
            state.upgraded = true
            return state.handshake.take()
        }
        handshake?.resume(returning: WebSocketUpgrade(response: response, connection: self))
    }

    /// The server answered the handshake without switching protocols.
    func refused(_ response: TransportResponse) {
        state.withLock { $0.handshake.take() }?.resume(returning: WebSocketUpgrade(response: response, connection: nil))
    }

    /// Frames received, in order.
    func deliver(_ frames: [WebSocketFrame]) {
        guard !frames.isEmpty else { return }
        let (receiver, frame) = state.withLock {
            state -> (CheckedContinuation<WebSocketFrame?, any Error>?, WebSocketFrame?) in
            for frame in frames {
                state.frames.append(frame)
                state.bufferedBytes += frame.payload.count
            }
            guard let receiver = state.receiver.take() else { return (nil, nil) }
            return (receiver, Self.pop(&state))
        }
        receiver?.resume(returning: frame)
    }

    /// The received bytes broke the framing rules: `receive()` throws `failure` after the frames before it.
    func failReceiving(_ failure: ServerAPIError) {
        let receiver = state.withLock { state in
            state.receiveFailure = failure
            return state.frameHead == state.frames.count ? state.receiver.take() : nil
        }
        receiver?.resume(throwing: failure)
    }

    /// The connection ended (the driver stopped): waiters are resumed, the handshake's with the failure.
    func ended(_ error: ServerAPIError?) {
        let (handshake, receiver, frame, senders, upgraded) = state.withLock { state in
            if case .none = state.ended { state.ended = .some(error) }
            state.multi = 0
            let receiver = state.receiver.take()
            let frame = receiver == nil ? nil : Self.pop(&state)
            let senders = state.outgoing.compactMap(\.waiter)
            state.outgoing.removeAll()
            return (state.handshake.take(), receiver, frame, senders, state.upgraded)
        }
        let failure = error ?? ServerAPIError(.network, "the WebSocket is closed")
        if let handshake {
            let cancelled = state.withLock { $0.closeRequested }
            handshake.resume(throwing: cancelled && !upgraded ? ServerAPIError.cancelled() : failure)
        }
        for sender in senders { sender.resume(throwing: failure) }
        guard let receiver else { return }
        if let frame {
            receiver.resume(returning: frame)
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
        state.bufferedBytes -= frame.payload.count
        if state.frameHead == state.frames.count {
            state.frames.removeAll(keepingCapacity: true)
            state.frameHead = 0
        } else if state.frameHead >= 64, state.frameHead * 2 >= state.frames.count {
            state.frames.removeFirst(state.frameHead)
            state.frameHead = 0
        }
        if state.paused, !state.resumeRequested, state.bufferedBytes < receiveBufferLimit / 2 {
            state.resumeRequested = true
            wake(state)
        }
        return frame
    }

    /// Ends the driver's wait; under the lock, so that the multi handle cannot be cleaned up meanwhile.
    private static func wake(_ state: State) {
        guard state.multi != 0, let multi = UnsafeMutableRawPointer(bitPattern: state.multi) else { return }
        _ = curl_multi_wakeup(multi)
    }
}

/// What a WebSocket's easy handle takes from the transport's configuration.
struct CurlWebSocketSettings: Sendable {
    var proxy: Proxy?
    var connectTimeout: Duration?
    var caFile: String?
    var insecureHosts: Set<String>
    var resolve: [String]
    var tls: TLSOptions
}
