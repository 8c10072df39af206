#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Feeds a `RequestBodyStream` to a transport whose library pulls the body synchronously from a read
/// callback (libcurl's `CURLOPT_READFUNCTION`, an input stream): a task reads the sequence one chunk
/// ahead, and the callback copies from that chunk without waiting.
///
/// ```swift
/// let pump = try RequestBodyPump(body, onReady: { loop.wake(transferID) })
/// pump.start()
/// // in the read callback:
/// switch pump.read(into: buffer) {
/// case .bytes(let count): return count
/// case .end: return 0
/// case .wouldBlock: return PAUSE          // onReady runs once bytes (or the end) are there: unpause then
/// case .failed(let error): fail(error); return ABORT
/// }
/// ```
/// Backpressure: the pump holds at most one chunk and asks the sequence for the next one only once the
/// transport has taken every byte of it, so a slow network slows the producer down. A sequence that
/// throws, or ends short of or runs past its declared length, ends with the `invalidRequest` error the
/// chunks' iterator throws.
///
/// - Important: Call `read(into:)` from one thread at a time. `cancel()` (or releasing the pump) stops
///   the task; call it when the transfer ends, however it ends.
package final class RequestBodyPump: Sendable {
    /// What a read found.
    package enum ReadResult: Sendable {
        /// This many bytes were copied into the buffer (at least one).
        case bytes(Int)
        /// No bytes are ready yet: `onReady` runs once there are (or the body ended or failed).
        case wouldBlock
        /// The body ended: every byte was read.
        case end
        /// The sequence failed, or did not match its declared length.
        case failed(ServerAPIError)
    }

    private struct State {
        /// The chunk being read, and how much of it was read.
        var chunk = Data()
        var offset = 0
        /// How the sequence ended, once it did (`nil` error: normally).
        var ended: ServerAPIError?? = .none
        /// A read found nothing: the next chunk or the end calls `onReady`.
        var readerWaiting = false
        /// The task waits until the current chunk was read whole.
        var taskWaiting: CheckedContinuation<Bool, Never>?
        var cancelled = false
        var task: Task<Void, Never>?
        /// Bytes handed to the transport so far.
        var delivered: Int64 = 0
    }

    private let state = Locked(State())
    private let chunks: RequestBodyStream.Chunks
    private let onReady: @Sendable () -> Void

    /// Takes the body's chunks (a streamed body can be sent once).
    /// - Parameters:
    ///   - body: The body to send.
    ///   - onReady: Called, on the pump's task, when bytes or the end became available after a read
    ///     answered `.wouldBlock`. The transport resumes its paused transfer then.
    /// - Throws: `invalidRequest` when the body was sent before.
    package init(_ body: RequestBodyStream, onReady: @escaping @Sendable () -> Void) throws(ServerAPIError) {
        chunks = try body.makeChunks()
        self.onReady = onReady
    }

    deinit {
        state.withLock { $0.task }?.cancel()
    }

    /// Starts reading the first chunk, before the transport asks for it.
    package func start() {
        let task = Task.detached { [self] in await run() }
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Stops the task (the transfer ended or was cancelled); later reads answer `.failed(cancelled)`.
    package func cancel() {
        let (task, waiting) = state.withLock { state -> (Task<Void, Never>?, CheckedContinuation<Bool, Never>?) in
            state.cancelled = true
            defer { state.taskWaiting = nil }
            return (state.task, state.taskWaiting)
        }
        task?.cancel()
        waiting?.resume(returning: false)
    }

    /// Bytes handed to the transport so far: 0 means the body can still be sent from its start.
    package var bytesDelivered: Int64 { state.withLock { $0.delivered } }

    /// Copies the next bytes into `buffer`, without waiting.
    /// - Parameter buffer: Where to copy them (a non-empty buffer).
    /// - Returns: What was found.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        let (result, resume) = state.withLock { state -> (ReadResult, CheckedContinuation<Bool, Never>?) in
            if state.cancelled { return (.failed(.cancelled()), nil) }
            let available = state.chunk.count - state.offset
            guard available > 0 else {
                switch state.ended {
                case .none:
                    state.readerWaiting = true
                    return (.wouldBlock, nil)
                case .some(.none):
                    return (.end, nil)
                case .some(.some(let error)):
                    return (.failed(error), nil)
                }
            }
            let count = min(available, buffer.count)
            guard count > 0 else { return (.bytes(0), nil) }
            let start = state.chunk.startIndex + state.offset
            state.chunk.copyBytes(
                to: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), from: start..<(start + count))
            state.offset += count
            state.delivered += Int64(count)
            guard state.offset == state.chunk.count else { return (.bytes(count), nil) }
            // The chunk was taken whole: the task may ask for the next one.
            state.chunk = Data()
            state.offset = 0
            defer { state.taskWaiting = nil }
            return (.bytes(count), state.taskWaiting)
        }
        resume?.resume(returning: true)
        return result
    }

    private func run() async {
        var iterator = chunks.makeAsyncIterator()
        while await chunkTaken() {
            let next: Data?
            do {
                next = try await iterator.next()
            } catch {
                return end(error)
            }
            guard let next else { return end(nil) }
            // With a declared length, the transport stops reading at that length: the end (or the
            // excess, which throws) is read before the last bytes are handed over, so that a sequence
            // that runs long fails the call instead of being cut silently.
            var last = false
            if let length = chunks.length, iterator.count == length {
                do {
                    _ = try await iterator.next()
                } catch {
                    return end(error)
                }
                last = true
            }
            let notify = state.withLock { state -> Bool in
                guard !state.cancelled else { return false }
                state.chunk = next
                state.offset = 0
                if last { state.ended = .some(nil) }
                defer { state.readerWaiting = false }
                return state.readerWaiting
            }
            if notify { onReady() }
            if last { return }
        }
    }

    /// Waits until the current chunk was read whole; `false` once the pump was cancelled.
    private func chunkTaken() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let ready = state.withLock { state -> Bool? in
                if state.cancelled { return false }
                if state.offset == state.chunk.count { return true }
                state.taskWaiting = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func end(_ error: ServerAPIError?) {
        let notify = state.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            state.ended = .some(error)
            defer { state.readerWaiting = false }
            return state.readerWaiting
        }
        if notify { onReady() }
    }
}
