#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A response body that arrives as it is read: an `AsyncSequence` of byte chunks, read once.
///
/// A caller meets it as `StreamedResponse.body` (beside its `lines` and `events` views); a transport
/// returns it in a `TransportResponse` whose `ResponseBody` is `.stream`.
///
/// This package's transports feed it as the body arrives; the caller reads it with
/// `for try await chunk in body`. Between them sits a bounded buffer (the transport's `streamBufferSize`,
/// `defaultBufferSize` unless set): when it is full, the transport stops reading from the socket until the
/// reader has taken half of it. Memory stays bounded whatever the body's size. A transport of your own
/// streams a body with `init(streaming:bufferSize:end:)`, or delivers one it already holds with
/// `init(chunks:metrics:trailers:)`.
///
/// The stream ends with `nil` after the last chunk, or throws a `ServerAPIError` (a dropped
/// connection, a timeout, `cancelled`). It is cancelled — the transfer stops — when:
/// - `cancel()` is called (the manager does so for `cancel(id:)`, `cancel(tag:)`, first, last, all);
/// - the task reading it is cancelled while it waits for a chunk;
/// - its reader goes away before the end: a `for try await` loop left early with `break`, `return` or
///   a thrown error, or the stream itself dropped without ever being read.
///
/// - Important: The body can be iterated once. A second iterator throws `invalidRequest`.
public final class ResponseBodyStream: AsyncSequence, Sendable, Hashable {
    public typealias Element = Data
    public typealias Failure = ServerAPIError

    /// The default buffer, in bytes, beyond which the transport is asked to pause: 1 MiB.
    public static let defaultBufferSize = 1 << 20

    /// What the reader wants after a chunk was handed over.
    package enum Demand: Sendable, Hashable {
        /// Keep reading.
        case more
        /// The buffer is full: stop reading until `onResume` runs.
        case pause
        /// The reader is gone or the stream has ended: stop the transfer.
        case stopped
    }

    let storage: Storage

    private init(storage: Storage) { self.storage = storage }

    deinit {
        // Dropped without a reader ever made: nobody will read the body, so the transfer stops.
        storage.sequenceReleased()
    }

    /// Makes a stream and the source a transport feeds it from.
    ///
    /// - Parameters:
    ///   - bufferSize: The bytes buffered before `yield` answers `.pause`.
    ///   - onResume: Called, on the reader's thread, once the reader has drained a paused buffer to half;
    ///     the transport starts reading again. Called only after a `.pause`.
    ///   - onTermination: Called once, on any thread, when the stream is cancelled or its reader goes away
    ///     before the source finished it; the transport tears the transfer down. Not called after
    ///     `finish`.
    /// - Returns: The stream, for the caller, and its source, for the transport.
    package static func makeStream(
        bufferSize: Int = defaultBufferSize,
        onResume: @escaping @Sendable () -> Void = {},
        onTermination: @escaping @Sendable () -> Void = {}
    ) -> (stream: ResponseBodyStream, source: Source) {
        let storage = Storage(bufferSize: bufferSize, onResume: onResume, onTermination: onTermination)
        return (ResponseBodyStream(storage: storage), Source(storage: storage))
    }

    /// A stream that already holds its whole body: what a transport that cannot stream delivers.
    /// - Parameters:
    ///   - chunks: The body's chunks (empty chunks are skipped).
    ///   - metrics: What the transport measured for the whole exchange.
    ///   - trailers: The trailer fields after the body.
    public convenience init(chunks: [Data], metrics: TransportMetrics? = nil, trailers: HTTPHeaders = [:]) {
        let storage = Storage(bufferSize: .max, onResume: {}, onTermination: {})
        self.init(storage: storage)
        let source = Source(storage: storage)
        for chunk in chunks { _ = source.yield(chunk) }
        source.finish(metrics: metrics, trailers: trailers)
    }

    /// A stream fed from `chunks` as they arrive: what a transport of your own that streams delivers (the
    /// `Transport` SPI's: `@_spi(Transport) import ServerAPIKit`).
    ///
    /// A task reads `chunks` only as far as the reader has room for (`bufferSize` bytes ahead); cancelling the
    /// stream, or its reader leaving early, cancels that task. The body ends when `chunks` does, with the metrics
    /// and trailers `end` gives then; an error `chunks` throws ends it with that error (a `ServerAPIError` as it
    /// is, any other as `network`).
    /// - Parameters:
    ///   - chunks: The body's chunks, in order (empty chunks are skipped).
    ///   - bufferSize: The bytes read ahead of the reader.
    ///   - end: Called once `chunks` has ended, for what the transport measured and the trailer fields.
    @_spi(Transport) public convenience init<Chunks: AsyncSequence & Sendable>(
        streaming chunks: Chunks, bufferSize: Int = defaultBufferSize,
        end: @escaping @Sendable () -> (metrics: TransportMetrics?, trailers: HTTPHeaders) = { (nil, [:]) }
    ) where Chunks.Element == Data {
        // The task that reads `chunks`, the continuation it waits on while paused, whether the reader went away, and
        // whether the reader resumed before the task began to wait.
        let feeder = Locked<Feeder>(Feeder())
        let storage = Storage(
            bufferSize: bufferSize,
            onResume: {
                feeder.withLock { state in
                    defer { state.resume = nil }
                    if state.resume == nil { state.resumedEarly = true }
                    return state.resume
                }?.resume()
            },
            onTermination: {
                let (task, resume) = feeder.withLock { state in
                    state.stopped = true
                    defer { state.resume = nil }
                    return (state.task, state.resume)
                }
                task?.cancel()
                resume?.resume()
            })
        self.init(storage: storage)
        let source = Source(storage: storage)
        let task = Task {
            do {
                for try await chunk in chunks where !chunk.isEmpty {
                    switch source.yield(chunk) {
                    case .more: continue
                    case .stopped: return
                    case .pause:
                        await withCheckedContinuation { continuation in
                            let resumeNow = feeder.withLock { state in
                                guard !state.stopped, !state.resumedEarly else {
                                    state.resumedEarly = false
                                    return true
                                }
                                state.resume = continuation
                                return false
                            }
                            if resumeNow { continuation.resume() }
                        }
                        if source.isTerminated { return }
                    }
                }
                let (metrics, trailers) = end()
                source.finish(metrics: metrics, trailers: trailers)
            } catch {
                guard !source.isTerminated else { return }
                source.finish(throwing: ServerAPIError.wrap(error), metrics: nil)
            }
        }
        feeder.withLock { $0.task = task }
    }

    /// The state of the task that feeds a stream made by `init(streaming:bufferSize:end:)`.
    private struct Feeder: Sendable {
        var task: Task<Void, Never>?
        var resume: CheckedContinuation<Void, Never>?
        var stopped = false
        var resumedEarly = false
    }

    /// Ends the stream with `cancelled`: buffered chunks are dropped and the transfer stops.
    /// Does nothing once the reader has seen the end.
    public func cancel() { storage.terminate(.cancelled("the streamed response was cancelled")) }

    /// What the transport measured, once it finished the body (complete or failed); `nil` before, and
    /// when the stream was cancelled first.
    public var metrics: TransportMetrics? { storage.finalMetrics }

    /// Whether the body has ended: finished by the transport, failed, or cancelled.
    public var isFinished: Bool { storage.isFinished }

    /// The trailer fields that followed the body (RFC 9110 §6.5), once the transport finished it; empty
    /// before, and when the response had none. Kept apart from the head's fields, as `TrailerRule` says.
    public var trailers: HTTPHeaders { storage.trailers }

    /// Makes the one iterator the body has.
    public func makeAsyncIterator() -> Iterator { Iterator(storage: storage) }

    /// Reads the whole rest of the body into memory.
    /// - Parameter limit: The most bytes to collect; a longer body throws `responseTooLarge` and is cancelled.
    /// - Returns: The bytes.
    /// - Throws: `ServerAPIError`: what ended the stream, or `responseTooLarge`.
    public func collect(upTo limit: Int) async throws(ServerAPIError) -> Data {
        var data = Data()
        var iterator = makeAsyncIterator()
        while let chunk = try await iterator.next() {
            guard chunk.count <= limit - data.count else {
                cancel()
                throw ServerAPIError(.responseTooLarge, "the streamed body is larger than \(limit) bytes")
            }
            data.append(chunk)
        }
        return data
    }

    /// Calls `handler` once when the stream ends (finished, failed or cancelled), on the thread that
    /// ended it, with the transport's final metrics or the error. At once if it already ended.
    func whenEnded(_ handler: @escaping @Sendable (Result<TransportMetrics?, ServerAPIError>) -> Void) {
        storage.whenEnded(handler)
    }

    public static func == (lhs: ResponseBodyStream, rhs: ResponseBodyStream) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension ResponseBodyStream {
    /// The transport's end of a stream: hands over chunks as they arrive, then finishes it.
    ///
    /// Call it from one thread at a time (a transport's loop or delegate queue); the reader may be anywhere.
    package struct Source: Sendable {
        let storage: Storage

        /// Hands a chunk to the reader.
        /// - Returns: `.more` to keep reading, `.pause` to stop reading until `onResume` runs (the chunk
        ///   was kept), `.stopped` when the reader is gone (the chunk was dropped; end the transfer).
        @discardableResult
        package func yield(_ chunk: Data) -> Demand { storage.yield(chunk) }

        /// Ends the body: the reader gets the buffered chunks and then the end.
        /// - Parameters:
        ///   - metrics: What the transport measured for the whole exchange.
        ///   - trailers: The trailer fields after the body, as `TrailerRule.received(_:)` gave them.
        package func finish(metrics: TransportMetrics?, trailers: HTTPHeaders = [:]) {
            storage.finish(.success(metrics), trailers: trailers)
        }

        /// Ends the body with an error, after the chunks already buffered.
        /// - Parameters:
        ///   - error: What went wrong.
        ///   - metrics: What the transport measured up to the failure.
        package func finish(throwing error: ServerAPIError, metrics: TransportMetrics?) {
            storage.finish(.failure(error), metrics: metrics)
        }

        /// Whether the reader is gone (cancelled, or left early): the transfer should stop.
        package var isTerminated: Bool { storage.isTerminated }
    }

    /// Reads a body's chunks in order.
    public struct Iterator: AsyncIteratorProtocol {
        /// A chunk of the body.
        public typealias Element = Data
        /// The error that ends the body early.
        public typealias Failure = ServerAPIError

        private let storage: Storage
        // Its deinit tells the stream that the reader left: a `for try await` loop ended early.
        private let lifetime: ReaderLifetime?

        init(storage: Storage) {
            self.storage = storage
            self.lifetime = storage.claimReader() ? ReaderLifetime(storage) : nil
        }

        /// The next chunk, or `nil` at the end of the body.
        /// - Throws: `ServerAPIError`: what ended the stream (`cancelled` when the reading task is cancelled).
        public mutating func next() async throws(ServerAPIError) -> Data? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ServerAPIError) -> Data? {
            guard lifetime != nil else {
                throw ServerAPIError(.invalidRequest, "a streamed response body can be read only once")
            }
            return try await storage.next()
        }
    }

    final class ReaderLifetime: Sendable {
        let storage: Storage
        init(_ storage: Storage) { self.storage = storage }
        deinit { storage.readerLeft() }
    }
}

extension ResponseBodyStream {
    /// The buffer between a transport and a reader: chunks, the pause state, the end, the one waiting reader.
    final class Storage: Sendable {
        private typealias Waiter = UnsafeContinuation<Result<Data?, ServerAPIError>, Never>
        typealias EndHandler = @Sendable (Result<TransportMetrics?, ServerAPIError>) -> Void

        private struct State {
            var chunks: [Data] = []
            var head = 0
            var buffered = 0
            var paused = false
            /// How the stream ends, once the source (or a cancellation) ended it.
            var end: Result<TransportMetrics?, ServerAPIError>?
            /// The end was delivered to the reader: every later `next` returns `nil`.
            var endDelivered = false
            /// Cancelled or left by its reader: the source should stop.
            var terminated = false
            var metrics: TransportMetrics?
            var trailers = HTTPHeaders()
            var waiter: Waiter?
            var readerClaimed = false
            var endHandler: EndHandler?
            var endHandled = false
            /// The call's id and URL, stamped on the error the reader gets.
            var context: (id: RequestID, url: URL)?
        }

        private let state: Locked<State>
        private let bufferSize: Int
        private let onResume: @Sendable () -> Void
        private let onTermination: @Sendable () -> Void

        init(bufferSize: Int, onResume: @escaping @Sendable () -> Void, onTermination: @escaping @Sendable () -> Void) {
            self.state = Locked(State())
            self.bufferSize = Swift.max(1, bufferSize)
            self.onResume = onResume
            self.onTermination = onTermination
        }

        var finalMetrics: TransportMetrics? { state.withLock { $0.metrics } }
        var trailers: HTTPHeaders { state.withLock { $0.trailers } }

        /// Stamps the call's id and URL on the error that ends the stream, for its reader.
        func stamp(requestID: RequestID, url: URL) {
            state.withLock { $0.context = (requestID, url) }
        }
        var isFinished: Bool { state.withLock { $0.end != nil } }
        var isTerminated: Bool { state.withLock { $0.terminated } }

        func yield(_ chunk: Data) -> Demand {
            guard !chunk.isEmpty else { return isTerminated ? .stopped : .more }
            let (demand, waiter) = state.withLock { state -> (Demand, Waiter?) in
                guard state.end == nil else { return (.stopped, nil) }
                if let waiter = state.waiter {
                    state.waiter = nil
                    return (.more, waiter)
                }
                state.chunks.append(chunk)
                state.buffered += chunk.count
                if state.buffered >= bufferSize { state.paused = true }
                return (state.paused ? .pause : .more, nil)
            }
            waiter?.resume(returning: .success(chunk))
            return demand
        }

        func finish(
            _ end: Result<TransportMetrics?, ServerAPIError>, metrics: TransportMetrics? = nil,
            trailers: HTTPHeaders = [:]
        ) {
            let (waiter, handler, context) = state.withLock {
                state -> (Waiter?, EndHandler?, (id: RequestID, url: URL)?) in
                guard state.end == nil else { return (nil, nil, nil) }
                state.end = end
                // Set before the end is delivered: a reader that saw the end reads them.
                state.trailers = trailers
                state.metrics = (try? end.get()) ?? metrics
                let waiter = state.head == state.chunks.count ? state.waiter : nil
                if waiter != nil {
                    state.waiter = nil
                    state.endDelivered = true
                }
                return (waiter, takeEndHandler(&state), state.context)
            }
            waiter?.resume(returning: end.map { _ in nil }.mapError { Self.stamped($0, context) })
            handler?(end.map { _ in (try? end.get()) ?? metrics })
        }

        /// Cancels the stream from the reader's side (or the manager's): drops what is buffered.
        func terminate(_ error: ServerAPIError) {
            let (waiter, handler, notify, context) = state.withLock {
                state -> (Waiter?, EndHandler?, Bool, (id: RequestID, url: URL)?) in
                guard !state.endDelivered, !state.terminated else { return (nil, nil, false, nil) }
                state.terminated = true
                let transferRunning = state.end == nil
                state.chunks = []
                state.head = 0
                state.buffered = 0
                state.end = .failure(error)
                let waiter = state.waiter
                state.waiter = nil
                if waiter != nil { state.endDelivered = true }
                return (waiter, takeEndHandler(&state), transferRunning, state.context)
            }
            waiter?.resume(returning: .failure(Self.stamped(error, context)))
            if notify { onTermination() }
            handler?(.failure(error))
        }

        private static func stamped(_ error: ServerAPIError, _ context: (id: RequestID, url: URL)?) -> ServerAPIError {
            guard let context else { return error }
            return error.with(requestID: context.id, url: context.url)
        }

        private func takeEndHandler(_ state: inout State) -> EndHandler? {
            guard !state.endHandled, let handler = state.endHandler else { return nil }
            state.endHandled = true
            state.endHandler = nil
            return handler
        }

        func whenEnded(_ handler: @escaping EndHandler) {
            let end = state.withLock { state -> Result<TransportMetrics?, ServerAPIError>? in
                guard let end = state.end else {
                    state.endHandler = handler
                    return nil
                }
                state.endHandled = true
                return end.map { _ in state.metrics }
            }
            if let end { handler(end) }
        }

        func claimReader() -> Bool {
            state.withLock { state in
                guard !state.readerClaimed else { return false }
                state.readerClaimed = true
                return true
            }
        }

        func readerLeft() {
            terminate(.cancelled("the streamed response's reader stopped before its end"))
            // A reader that saw the end leaves nothing to cancel; free the buffer either way.
            state.withLock { state in
                state.chunks = []
                state.head = 0
            }
        }

        func sequenceReleased() {
            guard !state.withLock({ $0.readerClaimed }) else { return }
            terminate(.cancelled("the streamed response was dropped before its body was read"))
        }

        private enum Step {
            case chunk(Data, resume: Bool)
            case end(Result<Data?, ServerAPIError>)
        }

        /// Takes the next chunk or the end, if there is one: under the lock.
        private func take(_ state: inout State) -> Step? {
            if state.head < state.chunks.count {
                let chunk = state.chunks[state.head]
                state.chunks[state.head] = Data()
                state.head += 1
                state.buffered -= chunk.count
                if state.head == state.chunks.count {
                    state.chunks.removeAll(keepingCapacity: true)
                    state.head = 0
                } else if state.head >= 64, state.head * 2 >= state.chunks.count {
                    state.chunks.removeFirst(state.head)
                    state.head = 0
                }
                var resume = false
                if state.paused, state.buffered <= bufferSize / 2 {
                    state.paused = false
                    resume = state.end == nil
                }
                return .chunk(chunk, resume: resume)
            }
            guard let end = state.end else { return nil }
            if state.endDelivered { return .end(.success(nil)) }
            state.endDelivered = true
            return .end(end.map { _ in nil }.mapError { Self.stamped($0, state.context) })
        }

        private func deliver(_ step: Step) -> Result<Data?, ServerAPIError> {
            switch step {
            case .chunk(let chunk, let resume):
                if resume { onResume() }
                return .success(chunk)
            case .end(let result):
                return result
            }
        }

        func next() async throws(ServerAPIError) -> Data? {
            if Task.isCancelled { terminate(.cancelled()) }
            if let step = state.withLock({ take(&$0) }) { return try deliver(step).get() }
            let result = await withTaskCancellationHandler {
                await withUnsafeContinuation { (waiter: Waiter) in
                    // A chunk or the end may have come since the first look.
                    let step = state.withLock { state -> Step? in
                        if let step = take(&state) { return step }
                        state.waiter = waiter
                        return nil
                    }
                    if let step { waiter.resume(returning: deliver(step)) }
                }
            } onCancel: {
                self.terminate(.cancelled())
            }
            return try result.get()
        }
    }
}
