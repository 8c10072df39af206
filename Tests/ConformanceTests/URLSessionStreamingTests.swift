import Foundation
import ServerAPITestSupport
import Testing

@_spi(Backend) @_spi(Transport) @testable import ServerAPIKit
@testable import ServerAPIURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport.stream`: the head as soon as it arrives, the body as FoundationNetworking
/// receives it, the typed errors after the head, cancellation that leaves no task behind, and what
/// FoundationNetworking does (and does not do) for a reader slower than the network.
@Suite("URLSessionTransport: streamed responses", .serialized)
struct URLSessionStreamingTests {
    // MARK: Delivery

    @Test("the head and the first chunk arrive while the rest of the body is still to come")
    func firstChunkBeforeTheEnd() async throws {
        let transport = URLSessionTransport()
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.fixture("/hold-body?key=\(UUID().uuidString)")))
        #expect(response.status == 200)
        let body = try streamBody(response)
        var chunks = body.makeAsyncIterator()
        // The server sends "first\n" and then nothing until the client leaves: a transport that waited for
        // the end of the body would never deliver it. No clock: the server's hold is the event.
        #expect(try await chunks.next() == Data("first\n".utf8))
        #expect(!body.isFinished)
        body.cancel()
        try await expectNoTasksLeft(transport)
    }

    @Test("a dripping body arrives whole, with its metrics")
    func drip() async throws {
        let transport = URLSessionTransport()
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.httpbin("/drip?duration=2&numbytes=5&delay=0")))
        #expect(response.status == 200)
        let body = try streamBody(response)
        // No timing is asserted: a busy machine may delay the reader past the whole drip
        // (CurlStreamingTests.drip says the same); `firstChunkBeforeTheEnd` shows the early delivery.
        var total = 0
        for try await chunk in body { total += chunk.count }
        #expect(total == 5)
        #expect(body.metrics?.bytesReceived == 5)
        try await expectNoTasksLeft(transport)
    }

    @Test("a line-delimited stream is read as lines")
    func lines() async throws {
        let response = try await URLSessionTransport().stream(
            TransportRequest(url: try TestServers.httpbin("/stream/20")))
        var ids: [Int] = []
        for try await line in ResponseLines(try streamBody(response)) where !line.isEmpty {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            ids.append(object?["id"] as? Int ?? -1)
        }
        #expect(ids == Array(0..<20))
    }

    @Test("a large body arrives byte for byte, in order")
    func largeBody() async throws {
        let size = 24 << 20
        let transport = URLSessionTransport()
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.fixture("/resource?size=\(size)&seed=3")))
        let payload = FixturePayload(seed: 3)
        var offset = 0
        var mismatch: Int?
        for try await chunk in try streamBody(response) {
            if mismatch == nil, chunk != payload.bytes(offset..<min(size, offset + chunk.count)) { mismatch = offset }
            offset += chunk.count
        }
        #expect(offset == size)
        #expect(mismatch == nil)
        #expect(try streamBody(response).metrics?.bytesReceived == Int64(size))
        try await expectNoTasksLeft(transport)
    }

    @Test("the request's timeout bounds the head only: a body slower than it still arrives whole")
    func timeoutBoundsHeadOnly() async throws {
        let transport = URLSessionTransport()
        // 8 bytes, one every 600 ms: the body takes about 4.8 s, well past the timeout.
        let request = TransportRequest(
            url: try TestServers.fixture("/drip?size=8&interval_ms=600&chunk=1"), timeout: .seconds(3))
        let response = try await transport.stream(request)
        let body = try await streamBody(response).collect(upTo: 1 << 20)
        #expect(body.count == 8)
    }

    @Test("no head within the request's timeout throws timedOut")
    func headTimeout() async throws {
        let transport = URLSessionTransport()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.stream(
                TransportRequest(url: try TestServers.fixture("/hang"), timeout: .seconds(1)))
        }
        #expect(error?.kind == .timedOut)
        try await expectNoTasksLeft(transport)
    }

    // MARK: Failures after the head

    @Test("a connection dropped in the middle of the body ends the stream with network")
    func droppedConnection() async throws {
        let transport = URLSessionTransport()
        let request = TransportRequest(url: try TestServers.fixture("/close-mid-body?size=200000&after=100000"))
        let response = try await transport.stream(request)
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await streamBody(response).collect(upTo: 1 << 20)
        }
        #expect(error?.kind == .network)
        #expect(error?.requestID == request.id)
        try await expectNoTasksLeft(transport)
    }

    @Test("a body over maxResponseSize ends the stream with responseTooLarge as it arrives")
    func tooLarge() async throws {
        let transport = URLSessionTransport()
        var request = TransportRequest(url: try TestServers.fixture("/resource?size=2000000&chunked=1"))
        request.maxResponseSize = 100_000
        let response = try await transport.stream(request)
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await streamBody(response).collect(upTo: 1 << 22)
        }
        #expect(error?.kind == .responseTooLarge)
        try await expectNoTasksLeft(transport)
    }

    @Test("the stall timeout still applies after the head")
    func stallAfterHead() async throws {
        let transport = URLSessionTransport()
        // The total timeout (30 s) is far enough that only the stall can end the body.
        let request = TransportRequest(
            url: try TestServers.fixture("/hang-body?size=100000&after=1000"), timeout: .seconds(30),
            stallTimeout: StallTimeout(bytesPerSecond: 100, duration: .seconds(5)))
        let response: TransportResponse
        do {
            response = try await transport.stream(request)
        } catch let error as ServerAPIError where error.kind == .timedOut && error.underlying is StallTimeout.Exceeded {
            // Seen only in CI's release conformance pass on libcurl 7.88, after the 250 tests before it (twice on
            // 2026-11-29; alone, and in the ThreadSanitizer pass on 8.14, it passes): FoundationNetworking handed no
            // head over within the stall's window, though the fixture sends it at once. Not yet explained.
            withKnownIssue("FoundationNetworking gave no head within the stall window", isIntermittent: true) {
                throw error
            }
            return
        }
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await streamBody(response).collect(upTo: 1 << 20)
        }
        #expect(error?.kind == .timedOut)
        #expect(error?.underlying is StallTimeout.Exceeded)
        try await expectNoTasksLeft(transport)
    }

    // MARK: A reader slower than the network

    /// What FoundationNetworking does for a reader that stops: the stream answers `.pause` once
    /// `streamBufferSize` bytes wait, but the transfer cannot pause (see `suspendRestartsTheRequest`), so
    /// the transport receives the whole body while the reader holds one chunk, and the unread bytes sit
    /// in memory. Measured: the body's size in resident memory (set `SAPI_STREAM_MEASURE_BYTES` for
    /// another size; 1 GiB measured about 1 GiB). On a transport that pauses this would stay near the
    /// buffer size.
    @Test("a reader that stops does not stop the transfer: the unread body is held in memory")
    func slowReaderIsNotBackpressured() async throws {
        let size = ProcessInfo.processInfo.environment["SAPI_STREAM_MEASURE_BYTES"].flatMap { Int($0) } ?? 128 << 20
        var configuration = URLSessionTransport.Configuration()
        configuration.streamBufferSize = 256 << 10
        let transport = URLSessionTransport(configuration: configuration)
        let received = Locked<Int64>(0)
        var request = TransportRequest(url: try TestServers.fixture("/resource?size=\(size)&seed=5"))
        request.progress = { progress in
            guard progress.direction == .download else { return }
            received.withLock { $0 = max($0, progress.completed) }
        }
        let probe = MemoryProbe()
        // A lower bound on a rise: from memory the allocator cannot hand out again unseen.
        MemoryProbe.trimFreePages()
        probe.start()
        let response = try await transport.stream(request)
        let body = try streamBody(response)
        var chunks = body.makeAsyncIterator()
        var read = try await chunks.next()?.count ?? 0
        // The reader stops after one chunk. A transfer that paused would stop near the buffer's size.
        try await poll("the transfer to receive the whole body", within: .seconds(120)) {
            received.withLock { $0 } == Int64(size)
        }
        let growth = probe.stop()
        print(
            "URLSession stream, reader stopped after \(read) bytes: received \(mebibytes(Int64(size))), "
                + "resident memory grew \(mebibytes(growth)) (buffer \(mebibytes(256 << 10)))")
        #expect(growth > Int64(size) / 2)
        let payload = FixturePayload(seed: 5)
        var mismatch: Int?
        while let chunk = try await chunks.next() {
            if mismatch == nil, chunk != payload.bytes(read..<min(size, read + chunk.count)) { mismatch = read }
            read += chunk.count
        }
        #expect(read == size)
        #expect(mismatch == nil)
        try await expectNoTasksLeft(transport)
    }

    #if canImport(FoundationNetworking)
        /// Why the transport cannot pause: `URLSessionTask.suspend()` on a running data task takes its libcurl
        /// handle out of the session's multi handle (`_NativeProtocol.suspend`, `internalState` →
        /// `.transferReady` → `_MultiHandle.remove`, which aborts the transfer), and `resume()` adds it back,
        /// which sends the request again: a second head, and the body again from its first byte.
        @Test("FoundationNetworking's suspend and resume send a running request again from the start")
        func suspendRestartsTheRequest() async throws {
            let size = 8 << 20
            let recorder = RecordingDataDelegate()
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let session = URLSession(configuration: .ephemeral, delegate: recorder, delegateQueue: queue)
            // Slow enough that the body is far from complete when the task is suspended.
            let task = session.dataTask(
                with: try TestServers.fixture("/resource?size=\(size)&seed=7&rate=4000000"))
            await onOwnThread { task.resume() }
            try await poll("the first bytes") { recorder.state.withLock { $0.bytes } > 0 }
            await onOwnThread {
                task.suspend()
                task.resume()
            }
            await recorder.completed.wait()
            let (heads, bytes, error) = recorder.state.withLock { ($0.heads, $0.bytes, $0.error) }
            await onOwnThread { session.finishTasksAndInvalidate() }
            #expect(error == nil)
            #expect(heads == 2)
            #expect(bytes > size)
        }
    #endif

    // MARK: Cancellation

    @Test("cancel() ends a running body with cancelled and cancels its task")
    func cancelStream() async throws {
        let transport = URLSessionTransport()
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.fixture("/hang-body?size=100000&after=1000")))
        let body = try streamBody(response)
        var chunks = body.makeAsyncIterator()
        _ = try await chunks.next()
        body.cancel()
        let error = await #expect(throws: ServerAPIError.self) {
            while try await chunks.next() != nil {}
        }
        #expect(error?.kind == .cancelled)
        try await expectNoTasksLeft(transport)
    }

    @Test("leaving the loop early cancels the task")
    func leaveLoopEarly() async throws {
        let transport = URLSessionTransport()
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.fixture("/hang-body?size=100000&after=1000")))
        let body = try streamBody(response)
        for try await chunk in body where !chunk.isEmpty { break }
        try await expectNoTasksLeft(transport)
        #expect(body.isFinished)
    }

    @Test("a stream dropped unread cancels its task")
    func droppedUnread() async throws {
        let transport = URLSessionTransport()
        do {
            _ = try await transport.stream(
                TransportRequest(url: try TestServers.fixture("/hang-body?size=100000&after=1000")))
        }
        try await expectNoTasksLeft(transport)
    }

    @Test("cancelling the caller's task before the head throws cancelled and leaves no task")
    func cancelBeforeHead() async throws {
        let transport = URLSessionTransport()
        let url = try TestServers.fixture("/hang")
        let call = Task { try await transport.stream(TransportRequest(url: url, timeout: .seconds(30))) }
        try await poll("the task to start") { transport.registeredTasks == 1 }
        call.cancel()
        let error = await #expect(throws: ServerAPIError.self) { _ = try await call.value }
        #expect(error?.kind == .cancelled)
        try await expectNoTasksLeft(transport)
    }

    @Test("cancelling the manager's call cancels it before the head")
    func callBeforeHead() async throws {
        let transport = URLSessionTransport()
        var request = TransportRequest(url: try TestServers.fixture("/hang"))
        let managed = Call(api: ServerAPI(url: request.url), request: request, registry: nil)
        request.call = managed
        let call = Task { [request] in try await transport.stream(request) }
        try await poll("the task to start") { transport.registeredTasks == 1 }
        managed.cancel(.id)
        let error = await #expect(throws: ServerAPIError.self) { _ = try await call.value }
        #expect(error?.kind == .cancelled)
        try await expectNoTasksLeft(transport)
    }

    // MARK: Request bodies

    @Test("a streamed request body is refused with the typed error before anything is sent")
    func streamedRequestBodyRefused() async throws {
        let transport = URLSessionTransport()
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("x".utf8))
            continuation.finish()
        }
        let upload = RequestBodyStream(chunks, length: 1)
        let request = TransportRequest(
            url: try TestServers.fixture("/echo"), method: .post, body: .stream(upload))
        let error = await #expect(throws: ServerAPIError.self) { _ = try await transport.stream(request) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message == URLSessionTransport.streamedBodyRefusal.message)
        #expect(error?.requestID == request.id)
        #expect(!upload.hasStarted)
        #expect(transport.activeTransfers == 0)
    }

    // MARK: Helpers

    private func streamBody(_ response: TransportResponse) throws -> ResponseBodyStream {
        guard case .stream(let body) = response.body else {
            throw ServerAPIError(.network, "the response has no streamed body")
        }
        return body
    }
}

/// Waits until the transport routes no task to a call and FoundationNetworking runs none.
private func expectNoTasksLeft(_ transport: URLSessionTransport) async throws {
    try await poll("the transport's tasks to end") {
        let running = await transport.sessionTaskCount()
        return transport.activeTransfers == 0 && running == 0
    }
}

/// Runs blocking work on a thread of its own: `URLSessionTask.suspend()` and `resume()` wait for
/// FoundationNetworking's thread.
private func onOwnThread(_ work: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            work()
            continuation.resume()
        }
    }
}

#if canImport(FoundationNetworking)
    /// A plain session delegate that counts heads and body bytes.
    // @unchecked: NSObject is not Sendable; the state is behind a lock.
    private final class RecordingDataDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        struct State {
            var heads = 0
            var bytes = 0
            var error: (any Error)?
        }
        let state = Locked(State())
        let completed = EventCounter()

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            completionHandler(.allow)
            state.withLock { $0.heads += 1 }
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            state.withLock { $0.bytes += data.count }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            state.withLock { $0.error = error }
            completed.fire()
        }
    }
#endif
