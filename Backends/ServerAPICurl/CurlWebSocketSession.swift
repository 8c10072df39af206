internal import CCurl
@_spi(Backend) import ServerAPIKit
import Synchronization

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
/// lock. The easy handle lives on a thread of the session's own (`CurlWebSocketDriver`), which takes sends and the
/// close from here through the state. It is woken with `curl_multi_wakeup` only when it said it sleeps, and outside
/// the lock: the multi handle is the session's, cleaned up when the session goes, so a wake-up never meets a freed
/// handle. A connection of its own, not a transfer on the transport's loops: those loops run whole exchanges (a
/// job, its completion, its cancel path), and libcurl sends a WebSocket's bytes only from inside one of its
/// callbacks, blocking until they are written, which on a shared loop would let one slow server hold up every
/// other transfer of the loop.
package final class CurlWebSocketSession: WebSocketConnection {
    /// Received bytes held for the core before the transfer pauses (it resumes below half).
    static let receiveBufferLimit = 1 << 20
    /// Bytes queued to send before `send` waits for the driver to write some: a sender is not held up by the
    /// driver's thread for each message, and memory stays bounded when the server reads slower than we send.
    static let sendBufferLimit = 1 << 20

    private struct State {
        var handshake: CheckedContinuation<WebSocketUpgrade, any Error>?
        var upgraded = false
        /// Encoded frames the driver has not taken yet, each with who waits for it to be written (a close frame's
        /// sender).
        var outgoing: [(bytes: Data, written: CheckedContinuation<Void, any Error>?)] = []
        /// Bytes queued and not yet written, taken by the driver or not.
        var outgoingBytes = 0
        /// Senders waiting for `outgoingBytes` to fall to the limit.
        var sendWaiters: [CheckedContinuation<Void, any Error>] = []
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
        /// The driver waits in `curl_multi_poll` and must be woken for new work.
        var sleeping = false
        /// Jobs of the core's reader, which runs on the driver's thread (`TaskExecutor`), waiting to run there; once
        /// the connection `ended` (the driver's thread is gone), they go to the global executor.
        var jobs: [UnownedJob] = []
    }

    private let state = Locked(State())
    /// The driver's multi handle (as a bit pattern: a pointer is not Sendable), set once before the driver first
    /// sleeps and cleaned up with the session, so that a wake-up made outside the lock never meets a freed handle.
    private let multi = Atomic<UInt>(0)
    let request: TransportRequest
    let settings: CurlWebSocketSettings

    init(request: TransportRequest, settings: CurlWebSocketSettings) {
        self.request = request
        self.settings = settings
    }

    deinit {
        if let handle = UnsafeMutableRawPointer(bitPattern: multi.load(ordering: .acquiring)) {
            curl_multi_cleanup(handle)
        }
    }

    /// The driver's thread's name.
    static let threadName = "ServerAPI.curl.ws"

    /// Whether the transfer is paused because the core is behind, for tests.
    package var isReceivePaused: Bool { state.withLock { $0.paused } }

    // MARK: The handshake

    /// Starts the driver's thread among the transport's `threads`; `handshake` resumes with the server's answer or
    /// the failure (`shuttingDown` once the transport is shutting down).
    func start(_ handshake: CheckedContinuation<WebSocketUpgrade, any Error>, threads: CurlThreads) {
        let closed = state.withLock { state in
            if state.closeRequested { return true }
            state.handshake = handshake
            return false
        }
        if closed { return handshake.resume(throwing: ServerAPIError.cancelled()) }
        let refusal = threads.start(
            named: Self.threadName, kind: .webSocket, stop: { [weak self] in self?.close() },
            body: { [self] in CurlWebSocketDriver(session: self).run() })
        switch refusal {
        case nil: break
        case .shuttingDown?: ended(CurlLoop.shutDownRefusal)
        case .noThread?: ended(ServerAPIError(.network, "the transport could not start a thread for the WebSocket"))
        }
    }

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
                if case .some(let end) = state.ended {
                    return .failure(end ?? ServerAPIError(.network, "the WebSocket is closed"))
                }
                guard state.outgoingBytes > Self.sendBufferLimit else { return .success(()) }
                state.sendWaiters.append(waiter)
                return nil
            }
            if let answer { waiter.resume(with: answer) }
        }
    }

    /// Queues encoded bytes for the driver, and wakes it if it sleeps; the refusal when nothing may be sent.
    private func enqueue(_ bytes: Data, written: CheckedContinuation<Void, any Error>?) -> ServerAPIError? {
        let (refusal, wake): (ServerAPIError?, Bool) = state.withLock { state in
            if state.closeRequested { return (ServerAPIError(.network, "the WebSocket is closed"), false) }
            if case .some(let end) = state.ended {
                return (end ?? ServerAPIError(.network, "the WebSocket is closed"), false)
            }
            state.outgoing.append((bytes, written))
            state.outgoingBytes += bytes.count
            return (nil, Self.takeSleeping(&state))
        }
        if wake { self.wake() }
        return refusal
    }

    package func receive() async throws -> WebSocketFrame? {
        try await withCheckedThrowingContinuation { (receiver: CheckedContinuation<WebSocketFrame?, any Error>) in
            let (answer, wake): (Result<WebSocketFrame?, ServerAPIError>?, Bool) = state.withLock { state in
                if let frame = Self.pop(&state) { return (.success(frame), Self.takeSleepingToResume(&state)) }
                if let failure = state.receiveFailure { return (.failure(failure), false) }
                if case .some(let end) = state.ended { return (end.map { .failure($0) } ?? .success(nil), false) }
                state.receiver = receiver
                return (nil, false)
            }
            if wake { self.wake() }
            if let answer { receiver.resume(with: answer) }
        }
    }

    package func close() {
        let wake = state.withLock { state in
            state.closeRequested = true
            return Self.takeSleeping(&state)
        }
        if wake { self.wake() }
    }

    // MARK: For the driver (its thread)

    /// The reader's jobs queued since the last call, to run on the driver's thread now.
    func takeJobs() -> [UnownedJob] {
        state.withLock { state in
            // Awake: what the jobs queue needs no wake-up.
            state.sleeping = false
            guard !state.jobs.isEmpty else { return [] }
            defer { state.jobs.removeAll(keepingCapacity: true) }
            return state.jobs
        }
    }

    /// What the driver does next: bytes to send, whether to stop, whether to resume receiving.
    func takeWork() -> (
        outgoing: [(bytes: Data, written: CheckedContinuation<Void, any Error>?)], close: Bool, resume: Bool
    ) {
        state.withLock { state in
            state.sleeping = false
            let outgoing = state.outgoing
            state.outgoing.removeAll()
            let resume = state.resumeRequested
            state.resumeRequested = false
            if resume { state.paused = false }
            return (outgoing, state.closeRequested, resume)
        }
    }

    /// Whether the driver may sleep until woken: it has nothing to do. From then on, new work wakes it.
    func sleepIfIdle() -> Bool {
        state.withLock { state in
            guard state.outgoing.isEmpty, state.jobs.isEmpty, !state.closeRequested, !state.resumeRequested else {
                return false
            }
            state.sleeping = true
            return true
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

    /// The driver's multi handle, for wake-ups; the session cleans it up when it goes.
    func attach(multi handle: UnsafeMutableRawPointer) {
        multi.store(UInt(bitPattern: handle), ordering: .releasing)
    }

    /// Whether the core is behind: the write callback then pauses the transfer.
    /// - Parameter sending: Whether frames wait to be sent: libcurl sends only from a transfer that is not paused,
    ///   so the transfer reads on, to twice the limit, to let them go out while the reader catches up.
    func shouldPause(sending: Bool) -> Bool {
        state.withLock { state in
            let limit = sending ? 2 * Self.receiveBufferLimit : Self.receiveBufferLimit
            guard state.bufferedBytes >= limit else { return false }
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
        let (handshake, receiver, frame, senders, upgraded, jobs) = state.withLock { state in
            if case .none = state.ended { state.ended = .some(error) }
            let jobs = state.jobs
            state.jobs.removeAll()
            let receiver = state.receiver.take()
            let frame = receiver == nil ? nil : Self.pop(&state)
            let senders = state.sendWaiters + state.outgoing.compactMap(\.written)
            state.sendWaiters.removeAll()
            state.outgoing.removeAll()
            return (state.handshake.take(), receiver, frame, senders, state.upgraded, jobs)
        }
        for job in jobs { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
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
        }
        return frame
    }

    /// Whether the driver sleeps and must be woken for the work just queued; it will not be woken twice.
    private static func takeSleeping(_ state: inout State) -> Bool {
        guard state.sleeping else { return false }
        state.sleeping = false
        return true
    }

    /// After a `pop`: whether the driver must be woken to resume receiving.
    private static func takeSleepingToResume(_ state: inout State) -> Bool {
        state.resumeRequested ? takeSleeping(&state) : false
    }

    /// Ends the driver's wait in `curl_multi_poll`; outside the state's lock (the handle outlives the driver).
    private func wake() {
        guard let handle = UnsafeMutableRawPointer(bitPattern: multi.load(ordering: .acquiring)) else { return }
        _ = curl_multi_wakeup(handle)
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

/// The core's reader of the connection runs on the driver's thread (`WebSocketConnection.receiveExecutor`): a frame
/// the write callback delivers is read, assembled and handed to the inbox there, right after the callback, with no
/// pool thread woken in between; only the task awaiting the message is.
extension CurlWebSocketSession: TaskExecutor {
    package var receiveExecutor: (any TaskExecutor)? { self }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (queued, wake) = state.withLock { state -> (Bool, Bool) in
            guard case .none = state.ended else { return (false, false) }
            state.jobs.append(job)
            return (true, Self.takeSleeping(&state))
        }
        guard queued else { return globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        if wake { self.wake() }
    }

    /// Runs jobs taken with `takeJobs()`; on the driver's thread.
    func run(_ jobs: [UnownedJob]) {
        let executor = asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: executor) }
    }
}
