/// The received messages a `WebSocket` holds for its reader: a bounded buffer whose producer (the
/// connection's reader) waits while it is full, so that a slow reader stops the transport from reading.
///
/// One reader at a time. The bound is in bytes; one message is always accepted, whatever its size (the
/// assembler's `maxMessageSize` bounds that).
final class WebSocketInbox: Sendable {
    private enum End {
        case open
        case finished
        case failed(ServerAPIError)
    }

    private struct State {
        var queue: [WebSocketMessage] = []
        var head = 0
        var bytes = 0
        var end = End.open
        /// After a local close: messages are dropped, and the producer never waits.
        var dropping = false
        var reader: CheckedContinuation<WebSocketMessage?, any Error>?
        var writer: CheckedContinuation<Void, Never>?

        var isEmpty: Bool { head == queue.count }

        mutating func pop() -> WebSocketMessage {
            let message = queue[head]
            head += 1
            bytes -= message.count
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= queue.count {
                queue.removeFirst(head)
                head = 0
            }
            return message
        }
    }

    private let capacity: Int
    private let state = Locked(State())
    /// What a cancelled reader's task does: cancel the connection.
    private let onReaderCancelled: @Sendable () -> Void

    /// Creates an inbox.
    /// - Parameters:
    ///   - capacity: The bytes held before the producer waits.
    ///   - onReaderCancelled: Runs when the task waiting in `next()` is cancelled.
    init(capacity: Int, onReaderCancelled: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.onReaderCancelled = onReaderCancelled
    }

    /// Whether the producer waits for the reader to make room (for tests).
    var producerIsWaiting: Bool { state.withLock { $0.writer != nil } }

    /// Whether a reader waits in `next()` (for tests).
    var readerIsWaiting: Bool { state.withLock { $0.reader != nil } }

    /// Hands a message to the reader, or holds it, without waiting: the connection's reader pushes each message
    /// through here, and suspends only when the buffer is full, not at every message.
    /// - Parameter more: Another message follows at once (the connection has a frame ready): a waiting reader is
    ///   woken with the first of them once the last is pushed, or `heldForReader` are held, not at each one.
    /// - Returns: Whether the buffer is full: the producer then waits for room (`waitForRoom()`) before the next.
    func offer(_ message: WebSocketMessage, more: Bool = false) -> Bool {
        enum Step {
            case done
            case resume(CheckedContinuation<WebSocketMessage?, any Error>, WebSocketMessage)
            case full
        }
        let step: Step = state.withLock { state in
            guard case .open = state.end, !state.dropping else { return .done }
            if state.reader != nil, !more || state.queue.count - state.head + 1 >= Self.heldForReader {
                // The reader waits only on an empty buffer, or on the messages held for it.
                guard !state.isEmpty else { return .resume(state.reader.take()!, message) }
                let first = state.pop()
                state.queue.append(message)
                state.bytes += message.count
                return .resume(state.reader.take()!, first)
            }
            state.queue.append(message)
            state.bytes += message.count
            guard state.bytes >= capacity else { return .done }
            // Full: the reader, if it waits on held messages, takes them first.
            if let reader = state.reader.take() { return .resume(reader, state.pop()) }
            return .full
        }
        switch step {
        case .done: return false
        case .resume(let reader, let first):
            reader.resume(returning: first)
            return false
        case .full: return true
        }
    }

    /// Waits until the reader has made room, the inbox stopped accepting, or it ended (after `offer(_:more:)`
    /// said the buffer is full).
    func waitForRoom() async {
        await withCheckedContinuation { (writer: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state in
                guard case .open = state.end, !state.dropping, state.bytes >= capacity else { return false }
                state.writer = writer
                return true
            }
            if !wait { writer.resume() }
        }
    }

    /// Wakes a reader waiting while messages are held for it (`offer(_:more:)`): no more follow at once.
    func handOver() {
        let handed = state.withLock { state -> (CheckedContinuation<WebSocketMessage?, any Error>, WebSocketMessage)? in
            guard !state.isEmpty, let reader = state.reader.take() else { return nil }
            return (reader, state.pop())
        }
        if let (reader, message) = handed { reader.resume(returning: message) }
    }

    /// The most messages held back from a waiting reader while more follow: it starts on them while the rest are
    /// assembled.
    static let heldForReader = 32

    /// The next message; `nil` once the connection closed and every message was read.
    /// - Throws: The connection's failure, after the messages received before it.
    func next() async throws -> WebSocketMessage? {
        enum Step {
            case message(WebSocketMessage, CheckedContinuation<Void, Never>?)
            case end(ServerAPIError?)
            case wait
        }
        let step: Step = state.withLock { state in
            if !state.isEmpty {
                let message = state.pop()
                let writer = state.bytes < capacity ? state.writer.take() : nil
                return .message(message, writer)
            }
            switch state.end {
            case .open: return .wait
            case .finished: return .end(nil)
            case .failed(let error): return .end(error)
            }
        }
        switch step {
        case .message(let message, let writer):
            writer?.resume()
            return message
        case .end(let error):
            if let error { throw error }
            return nil
        case .wait:
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (reader: CheckedContinuation<WebSocketMessage?, any Error>) in
                    enum Answer {
                        case none
                        case message(WebSocketMessage, CheckedContinuation<Void, Never>?)
                        case end(ServerAPIError?)
                        case busy
                    }
                    let answer: Answer = state.withLock { state in
                        if !state.isEmpty {
                            let message = state.pop()
                            return .message(message, state.bytes < capacity ? state.writer.take() : nil)
                        }
                        switch state.end {
                        case .finished: return .end(nil)
                        case .failed(let error): return .end(error)
                        case .open:
                            guard state.reader == nil else { return .busy }
                            state.reader = reader
                            return .none
                        }
                    }
                    switch answer {
                    case .none: break
                    case .message(let message, let writer):
                        writer?.resume()
                        reader.resume(returning: message)
                    case .end(nil): reader.resume(returning: nil)
                    case .end(let error?): reader.resume(throwing: error)
                    case .busy:
                        reader.resume(
                            throwing: ServerAPIError(
                                .invalidRequest, "a WebSocket's messages are read by one task at a time"))
                    }
                }
            } onCancel: {
                onReaderCancelled()
            }
        }
    }

    /// Drops the messages that arrive from now on (after a local close), and releases a waiting producer.
    func stopAccepting() {
        let writer = state.withLock { state in
            state.dropping = true
            return state.writer.take()
        }
        writer?.resume()
    }

    /// Ends the sequence: the reader gets the messages held (unless `discarding`), then `nil` or the error.
    func finish(_ error: ServerAPIError?, discarding: Bool) {
        let (reader, writer, first) = state.withLock { state in
            guard case .open = state.end else {
                return (
                    CheckedContinuation<WebSocketMessage?, any Error>?.none, CheckedContinuation<Void, Never>?.none,
                    WebSocketMessage?.none
                )
            }
            state.end = error.map { .failed($0) } ?? .finished
            if discarding {
                state.queue.removeAll()
                state.head = 0
                state.bytes = 0
            }
            let reader = state.reader.take()
            return (reader, state.writer.take(), reader != nil && !state.isEmpty ? state.pop() : nil)
        }
        writer?.resume()
        guard let reader else { return }
        // Messages held for a waiting reader come first.
        if let first { return reader.resume(returning: first) }
        if let error { reader.resume(throwing: error) } else { reader.resume(returning: nil) }
    }
}
