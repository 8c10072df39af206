@_spi(Backend) @_spi(Transport) import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A transport for unit tests: answers from stubs, records every request, never touches the network.
///
/// ```swift
/// let mock = MockTransport()
/// mock.stub(.get, "/users/1", .json(#"{"id":1,"name":"Ada"}"#))
/// let manager = ServerAPIManager(transport: mock)
/// _ = try await manager.send(ServerAPI(host: "https://api.test", path: "/users/1"))
/// #expect(mock.requests.first?.url.path == "/users/1")
/// ```
/// Stubs match by method and path; stubs for the same route answer in turn, the last one
/// repeating (so `[.status(503), .json("{}")]` fails once, then succeeds). A request with no
/// stub gets a 404. Delays honour task cancellation (`cancelled`) and the request's timeout
/// (`timedOut`), as a real transport would.
///
/// Streamed calls (`ServerAPIManager.stream`) get `MockStub.stream` and `MockStub.events` bodies part
/// by part, with the waits on the mock's clock (pass the `TestClock` the manager uses) and the same
/// backpressure a real transport applies: a part is produced only when the reader has room for it.
public final class MockTransport: RequestPerforming {
    /// Answers a request; return `nil` to fall through to route stubs.
    public typealias Handler = @Sendable (TransportRequest) async throws -> MockStub?

    private struct Route {
        var method: HTTPMethod?
        var path: String
        var stubs: [MockStub]
        var served = 0
    }

    private struct State {
        var routes: [Route] = []
        var handler: Handler?
        var requests: [RecordedRequest] = []
        var recording = true
        var webSocketMismatches: [String] = []
        var webSocketCloses: [WebSocketCloseCode?] = []
    }

    private let state = Locked(State())

    /// The transport's name in metrics.
    public let name: String
    /// The clock stubs' delays and streamed bodies' waits run on.
    public let clock: any Clock<Duration>
    /// The bytes a streamed body buffers before the mock stops producing parts until its reader catches up.
    public let streamBufferSize: Int

    /// `true`: a delay or a handler ends with `cancelled` when the manager cancels the call.
    public var observesCallCancellation: Bool { true }

    /// `true`: a `BodySource.stream` body is sent as it is read.
    public var sendsStreamedRequestBodies: Bool { true }

    /// `true`: the core offers permessage-deflate; a script's `compression` says whether the mock server takes it.
    public var carriesWebSocketExtensions: Bool { true }

    /// Creates a mock with no stubs.
    /// - Parameters:
    ///   - name: The name reported in metrics.
    ///   - clock: The clock delays and streamed waits run on; a `TestClock` lets a test drive them.
    ///   - streamBufferSize: The bytes a streamed body buffers before the reader must catch up.
    public init(
        name: String = "mock", clock: any Clock<Duration> = ContinuousClock(),
        streamBufferSize: Int = ResponseBodyStream.defaultBufferSize
    ) {
        self.name = name
        self.clock = clock
        self.streamBufferSize = streamBufferSize
    }

    /// Answers `method` + `path` with `stubs`, in turn, the last one repeating.
    /// - Parameters:
    ///   - method: The method to match; `nil` matches any.
    ///   - path: The URL path to match, exactly (no query).
    ///   - stubs: The answers.
    public func stub(_ method: HTTPMethod?, _ path: String, _ stubs: MockStub...) {
        state.withLock { $0.routes.append(Route(method: method, path: path, stubs: stubs)) }
    }

    /// Answers every request whose route has no stub with a closure.
    public func stub(handler: @escaping Handler) { state.withLock { $0.handler = handler } }

    /// Removes every stub and recorded request.
    public func reset() { state.withLock { $0 = State() } }

    /// Turns request recording on or off (off for benchmarks).
    public func setRecording(_ on: Bool) { state.withLock { $0.recording = on } }

    /// Every request sent so far, in order.
    public var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// How many requests were sent so far.
    public var requestCount: Int { state.withLock { $0.requests.count } }

    /// The messages a scripted WebSocket server received that did not match its `expect` step, described.
    public var webSocketMismatches: [String] { state.withLock { $0.webSocketMismatches } }

    func recordWebSocketMismatch(_ mismatch: String) { state.withLock { $0.webSocketMismatches.append(mismatch) } }

    /// The close codes the scripted WebSocket servers received from clients, in order (`nil`: a close frame
    /// without a code).
    public var webSocketClosesReceived: [WebSocketCloseCode?] { state.withLock { $0.webSocketCloses } }

    func recordWebSocketClose(_ code: WebSocketCloseCode?) { state.withLock { $0.webSocketCloses.append(code) } }

    /// Records the request and answers with its route's next stub (the last one repeats), else the closure
    /// stub's answer, else a 404, after the stub's delay on the mock's clock.
    public func perform(_ request: TransportRequest) async throws -> TransportResponse {
        let start = ContinuousClock.now
        let chosen = try await answer(request)
        let status: Int
        let headers: HTTPHeaders
        let body: Data
        switch chosen.outcome {
        case .failure(let error):
            throw error.with(requestID: request.id, url: request.url)
        case .response(let code, let fields, let bytes):
            (status, headers, body) = (code, fields, bytes)
        case .stream(let code, let fields, let parts):
            var bytes = Data()
            for part in parts {
                switch part {
                case .chunk(let chunk): bytes.append(chunk)
                case .wait(let duration): try await wait(duration, request)
                case .failure(let error): throw error.with(requestID: request.id, url: request.url)
                }
            }
            (status, headers, body) = (code, fields, bytes)
        }
        if let tooLarge = ResponseSizeRule.check(
            received: Int64(body.count), status: status, limit: ResponseSizeRule.limit(for: request, streamed: false))
        {
            throw tooLarge.with(requestID: request.id, url: request.url)
        }
        let sent = Self.sentBytes(request)
        request.progress?(
            TransferProgress(direction: .download, completed: Int64(body.count), total: Int64(body.count)))
        var responseBody = ResponseBody.data(body)
        if let download = request.download, (200..<300).contains(status) {
            responseBody = try Self.write(body, to: download, request: request)
        }
        return TransportResponse(
            status: status, headers: headers, body: responseBody, url: request.url,
            metrics: TransportMetrics(
                transport: name, total: ContinuousClock.now - start, bytesSent: sent,
                bytesReceived: Int64(body.count), reusedConnection: false))
    }

    /// Answers with the stub's head at once and its body part by part: chunks as the reader makes room
    /// for them, waits on the mock's clock, a failure where the stub says. A whole-body stub is one chunk.
    public func stream(_ request: TransportRequest) async throws -> TransportResponse {
        let start = ContinuousClock.now
        let chosen = try await answer(request)
        let status: Int
        let headers: HTTPHeaders
        let parts: [MockStreamPart]
        switch chosen.outcome {
        case .failure(let error):
            throw error.with(requestID: request.id, url: request.url)
        case .response(let code, let fields, let bytes):
            (status, headers, parts) = (code, fields, [.chunk(bytes)])
        case .stream(let code, let fields, let streamParts):
            (status, headers, parts) = (code, fields, streamParts)
        }
        let sent = Self.sentBytes(request)
        let producer = MockStreamProducer()
        let (body, source) = ResponseBodyStream.makeStream(
            bufferSize: streamBufferSize, onResume: { producer.resume() }, onTermination: { producer.stop() })
        let name = self.name
        let clock = self.clock
        let limit = request.maxResponseSize
        let progress = request.progress
        let headMetrics = TransportMetrics(
            transport: name, firstByte: ContinuousClock.now - start, total: ContinuousClock.now - start,
            bytesSent: sent, reusedConnection: false)
        producer.start {
            var received: Int64 = 0
            func metrics() -> TransportMetrics {
                var metrics = headMetrics
                metrics.total = ContinuousClock.now - start
                metrics.bytesReceived = received
                return metrics
            }
            for part in parts {
                switch part {
                case .chunk(let chunk):
                    guard !chunk.isEmpty else { continue }
                    received += Int64(chunk.count)
                    if let tooLarge = ResponseSizeRule.check(received: received, status: status, limit: limit) {
                        source.finish(throwing: tooLarge, metrics: metrics())
                        return
                    }
                    progress?(TransferProgress(direction: .download, completed: received, total: nil))
                    switch source.yield(chunk) {
                    case .more: break
                    case .pause:
                        guard await producer.waitForResume() else { return }
                    case .stopped: return
                    }
                case .wait(let duration):
                    do { try await clock.sleep(for: duration) } catch { return }
                case .failure(let error):
                    source.finish(throwing: error, metrics: metrics())
                    return
                }
            }
            source.finish(metrics: metrics())
        }
        return TransportResponse(
            status: status, headers: headers, body: .stream(body), url: request.url, metrics: headMetrics)
    }

    /// Records the request, finds its stub (or asks the handler) and waits the stub's delay.
    func answer(_ request: TransportRequest) async throws -> MockStub {
        if request.isCancelled { throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url) }
        // A streamed request body is read out, as a transport would send it, before it is recorded.
        var streamedBytes: Data?
        if let stream = request.body.streamedBody, state.withLock({ $0.recording }) {
            var bytes = Data()
            for try await chunk in try stream.makeChunks() { bytes.append(chunk) }
            streamedBytes = bytes
        }
        let (stub, handler) = try state.withLock { state throws(ServerAPIError) -> (MockStub?, Handler?) in
            if state.recording { state.requests.append(try RecordedRequest(request, streamedBody: streamedBytes)) }
            let path = request.url.path
            if let index = state.routes.lastIndex(where: {
                $0.path == path && ($0.method == nil || $0.method == request.method)
            }) {
                let route = state.routes[index]
                state.routes[index].served += 1
                return (route.stubs[min(route.served, route.stubs.count - 1)], nil)
            }
            return (nil, state.handler)
        }
        var answer = stub
        if answer == nil, let handler {
            do {
                answer = try await Self.cancellable(request) { try await handler(request) }
            } catch {
                throw ServerAPIError.wrap(error).with(requestID: request.id, url: request.url)
            }
        }
        let chosen = answer ?? .text("no stub for \(request.method) \(request.url.path)", status: 404)
        if chosen.delay > .zero {
            try await wait(chosen.delay, request)
        }
        if request.isCancelled { throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url) }
        let sent = Self.sentBytes(request)
        if sent > 0 { request.progress?(TransferProgress(direction: .upload, completed: sent, total: sent)) }
        return chosen
    }

    /// Waits on the mock's clock, at most the request's timeout: a longer wait ends in `timedOut`.
    private func wait(_ duration: Duration, _ request: TransportRequest) async throws {
        let wait = min(duration, request.timeout)
        let clock = self.clock
        do {
            try await Self.cancellable(request) { try await clock.sleep(for: wait) }
        } catch {
            throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url)
        }
        if duration > request.timeout {
            throw ServerAPIError.timedOut(after: request.timeout).with(requestID: request.id, url: request.url)
        }
    }

    private static func sentBytes(_ request: TransportRequest) -> Int64 {
        (try? request.body.knownLength() ?? 0) ?? 0
    }

    /// Runs a stub's wait or a handler so that cancelling the call (the manager's registry) ends what it
    /// awaits, as the caller's task would.
    private static func cancellable<T: Sendable>(
        _ request: TransportRequest, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await request.runCancellable(work)
    }

    /// Writes a stubbed body to a download target as a real transport would: through the core's
    /// `DownloadFileWriter`, via the partial file, never through a symbolic link.
    private static func write(_ body: Data, to target: DownloadTarget, request: TransportRequest) throws
        -> ResponseBody
    {
        // A stub answers the whole body whatever was asked: the download starts over, as after a 200.
        let writer = DownloadFileWriter(
            target: DownloadTarget(destination: target.destination), requestID: request.id, url: request.url)
        do {
            _ = try writer.receiveHead(status: 200, headers: [:])
            try writer.write(body)
            return try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
    }
}

/// A request as `MockTransport` received it, with its body bytes read out.
public struct RecordedRequest: Sendable, Hashable {
    /// The id of the call.
    public var id: RequestID
    /// The URL as the transport received it, query included.
    public var url: URL
    /// The HTTP method, as received.
    public var method: HTTPMethod
    /// The headers, exactly as the transport would send them.
    public var headers: HTTPHeaders
    /// The body bytes (files read in full: this is for tests).
    public var body: Data
    /// The attempt number.
    public var attempt: Int

    init(_ request: TransportRequest, streamedBody: Data? = nil) throws(ServerAPIError) {
        id = request.id
        url = request.url
        method = request.method
        headers = request.headers
        attempt = request.attempt
        if let bytes = request.body.inMemoryBytes {
            body = bytes
        } else if let streamedBody {
            body = streamedBody
        } else {
            let reader = try request.body.makeReader()
            var data = Data()
            while true {
                let chunk = try reader.read(maxLength: 64 * 1024)
                if chunk.isEmpty { break }
                data.append(chunk)
            }
            body = data
        }
    }

    /// The query items, decoded.
    public var queryItems: [URLQueryItem] {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// The task that produces a mock's streamed body, paused while the reader's buffer is full.
final class MockStreamProducer: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var stopped = false
        var resumed = false
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let state = Locked(State())

    func start(_ work: @escaping @Sendable () async -> Void) {
        let task = Task { await work() }
        let stopped = state.withLock { state -> Bool in
            state.task = task
            return state.stopped
        }
        if stopped { task.cancel() }
    }

    /// Waits until the reader made room (`true`) or left (`false`).
    func waitForResume() async -> Bool {
        await withCheckedContinuation { waiter in
            let answer = state.withLock { state -> Bool? in
                if state.stopped { return false }
                if state.resumed {
                    state.resumed = false
                    return true
                }
                state.waiter = waiter
                return nil
            }
            if let answer { waiter.resume(returning: answer) }
        }
    }

    func resume() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiter else {
                state.resumed = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: true)
    }

    func stop() {
        let (task, waiter) = state.withLock { state -> (Task<Void, Never>?, CheckedContinuation<Bool, Never>?) in
            state.stopped = true
            defer { state.waiter = nil }
            return (state.task, state.waiter)
        }
        task?.cancel()
        waiter?.resume(returning: false)
    }
}
