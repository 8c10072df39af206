import Foundation
@_spi(Transport) import ServerAPIKit

/// A transport that sends through another one and writes every exchange to a HAR 1.2 file: what a
/// `ReplayingTransport` answers from later, without the network.
///
/// ```swift
/// let recording = RecordingTransport(recording: CurlTransport(), to: URL(fileURLWithPath: "users.har"))
/// let manager = ServerAPIManager(transport: recording)
/// _ = try await manager.send(ServerAPI(host: "https://api.example.com", path: "/users/1"))
/// // users.har now holds the request, the response, its timings, redacted credentials.
/// ```
/// Each entry holds the request (method, URL, headers, query, body as text or base64 with its media type),
/// the response (status, headers, body, sizes), timings from the call's metrics and the HTTP version. A call
/// that failed (could not connect, timed out, TLS) is an entry whose `response._error` holds the typed error.
/// A streamed response is recorded whole, with its chunk boundaries and their timing in `response._chunks`,
/// so a replay can stream it again; a download is recorded with the bytes written to its file. Cancelled
/// calls are not recorded: a cancellation is the caller's doing, not the server's; nor is `unsupported`, the
/// transport's own limit.
///
/// A WebSocket (`webSocket(_:)`) is one entry: its handshake, then its messages both ways and how it ended, as
/// they go (see `webSocket(_:)`).
///
/// Credentials are redacted before anything is written (`HARRedaction.default`); the file is rewritten
/// atomically after each exchange, so it is complete after every call and never half written.
///
/// - Important: Streamed request bodies (`BodySource.stream`) are read into memory before they are sent, and
///   request body files and downloads are read whole to be recorded: this is for tests and captured sessions,
///   not for large transfers.
public final class RecordingTransport: RequestPerforming {
    /// The transport that does the work.
    public let upstream: any RequestPerforming
    /// Where the entries go.
    public let recorder: HARRecorder
    /// What is replaced before anything is written.
    public let redaction: HARRedaction
    let now: @Sendable () -> Date

    /// The upstream transport's name: a recorded call's metrics are the upstream's.
    public var name: String { upstream.name }

    /// The upstream transport's answer.
    public var observesCallCancellation: Bool { upstream.observesCallCancellation }

    /// `true`: a streamed request body is read (to be recorded) and sent as bytes.
    public var sendsStreamedRequestBodies: Bool { true }

    /// The upstream transport's answer: the recording reads compressed messages as the application sees them.
    public var carriesWebSocketExtensions: Bool { upstream.carriesWebSocketExtensions }

    /// Records through `upstream` into `recorder`.
    /// - Parameters:
    ///   - upstream: The transport that sends the requests.
    ///   - recorder: Where the entries go (and the file it keeps up to date).
    ///   - redaction: What to replace before anything is written: credentials by default.
    ///   - now: The wall clock for the entries' start times (`TestClock.dateSource` makes them fixed).
    public init(
        upstream: any RequestPerforming, recorder: HARRecorder, redaction: HARRedaction = .default,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.upstream = upstream
        self.recorder = recorder
        self.redaction = redaction
        self.now = now
    }

    /// Records through `upstream` into a HAR file, which is replaced.
    /// - Parameters:
    ///   - upstream: The transport that sends the requests.
    ///   - file: The HAR file, written after each exchange.
    ///   - redaction: What to replace before anything is written: credentials by default. A redaction that
    ///     keeps credentials (`HARRedaction.redactsCredentials` is `false`) makes the file readable by its
    ///     owner only (mode 0600).
    public convenience init(recording upstream: any RequestPerforming, to file: URL, redaction: HARRedaction = .default)
    {
        self.init(
            upstream: upstream, recorder: HARRecorder(file: file, ownerOnly: !redaction.redactsCredentials),
            redaction: redaction)
    }

    /// The entries recorded so far.
    public var archive: HARArchive { recorder.archive }

    /// Sends the request through the upstream transport and records the exchange.
    public func perform(_ request: TransportRequest) async throws -> TransportResponse {
        let (request, body) = try await Self.collectBody(request)
        let (response, startedAt, start) = try await exchange(request, body: body) { try await upstream.perform($0) }
        try recorder.append(try wholeEntry(request, body: body, response: response, startedAt: startedAt, start: start))
        return response
    }

    /// Streams the response from the upstream transport as it arrives, and records it, chunk by chunk, once
    /// its body has ended (read to its end, failed, or left by its reader).
    public func stream(_ request: TransportRequest) async throws -> TransportResponse {
        let (request, body) = try await Self.collectBody(request)
        let exchanged = try await exchange(request, body: body) { try await upstream.stream($0) }
        let (startedAt, start) = (exchanged.startedAt, exchanged.start)
        var response = exchanged.answer
        guard case .stream(let upstreamBody) = response.body else {
            try recorder.append(
                try wholeEntry(request, body: body, response: response, startedAt: startedAt, start: start))
            return response
        }
        let head = ContinuousClock.now
        let pump = MockStreamProducer()
        let (stream, source) = ResponseBodyStream.makeStream(
            onResume: { pump.resume() }, onTermination: { pump.stop() })
        let recorder = self.recorder
        let redaction = self.redaction
        let transport = upstream.name
        let headResponse = response
        pump.start {
            var data = Data()
            var chunks: [HARArchive.Chunk] = []
            var failure: ServerAPIError?
            var iterator = upstreamBody.makeAsyncIterator()
            reading: do {
                while let chunk = try await iterator.next() {
                    data.append(chunk)
                    chunks.append(
                        HARArchive.Chunk(size: chunk.count, time: HARArchive.milliseconds(ContinuousClock.now - head)))
                    switch source.yield(chunk) {
                    case .more: break
                    case .pause:
                        guard await pump.waitForResume() else {
                            failure = .cancelled("the streamed response's reader stopped before its end")
                            break reading
                        }
                    case .stopped:
                        failure = .cancelled("the streamed response's reader stopped before its end")
                        break reading
                    }
                }
            } catch {
                failure = ServerAPIError.wrap(error)
            }
            let metrics = upstreamBody.metrics
            let entry = HARArchive.Entry(
                request: request, body: body, response: headResponse, responseBody: data, chunks: chunks,
                error: failure, metrics: metrics, startedAt: startedAt, elapsed: ContinuousClock.now - start,
                transport: transport, redaction: redaction)
            do throws(ServerAPIError) {
                try recorder.append(entry)
            } catch {
                source.finish(throwing: error, metrics: metrics)
                return
            }
            if let failure {
                source.finish(throwing: failure, metrics: metrics)
            } else {
                source.finish(metrics: metrics)
            }
        }
        response.body = .stream(stream)
        return response
    }

    /// Sends `request` with `send` (through the upstream transport), timed from now. A failure is recorded and
    /// rethrown; `webSocket` marks its entry as a WebSocket's handshake.
    /// - Returns: The upstream's answer, and when the exchange started (wall clock and continuous clock).
    func exchange<Answer>(
        _ request: TransportRequest, body: Data, webSocket: Bool = false,
        _ send: (TransportRequest) async throws -> Answer
    ) async throws -> (answer: Answer, startedAt: Date, start: ContinuousClock.Instant) {
        let startedAt = now()
        let start = ContinuousClock.now
        do {
            let answer = try await send(request)
            return (answer, startedAt, start)
        } catch {
            try recordFailure(
                ServerAPIError.wrap(error), request: request, body: body, startedAt: startedAt, start: start,
                webSocket: webSocket)
            throw error
        }
    }

    /// The entry of an exchange whose response is whole: in memory, or in a download's file.
    func wholeEntry(
        _ request: TransportRequest, body: Data, response: TransportResponse, startedAt: Date,
        start: ContinuousClock.Instant
    ) throws(ServerAPIError) -> HARArchive.Entry {
        HARArchive.Entry(
            request: request, body: body, response: response,
            responseBody: try Self.bytes(of: response, request: request), chunks: nil, error: nil,
            metrics: response.metrics, startedAt: startedAt, elapsed: ContinuousClock.now - start,
            transport: upstream.name, redaction: redaction)
    }

    /// Records a call that failed before its response, unless the failure is not the server's answer: a
    /// cancellation (the caller's doing) or `unsupported` (the transport's own limit, such as a libcurl without
    /// WebSockets). `webSocket` marks the entry as a WebSocket's handshake.
    private func recordFailure(
        _ error: ServerAPIError, request: TransportRequest, body: Data, startedAt: Date, start: ContinuousClock.Instant,
        webSocket: Bool
    ) throws(ServerAPIError) {
        guard error.kind != .cancelled, error.kind != .unsupported else { return }
        var entry = HARArchive.Entry(
            request: request, body: body, response: nil, responseBody: Data(), chunks: nil, error: error,
            metrics: error.metrics?.transport, startedAt: startedAt, elapsed: ContinuousClock.now - start,
            transport: upstream.name, redaction: redaction)
        if webSocket { entry.markAsWebSocket() }
        try recorder.append(entry)
    }

    /// The request's body bytes; a streamed body is read out and the request then sends those bytes.
    static func collectBody(_ request: TransportRequest) async throws -> (TransportRequest, Data) {
        var request = request
        if let stream = request.body.streamedBody {
            var bytes = Data()
            for try await chunk in try stream.makeChunks() { bytes.append(chunk) }
            request.body = .data(bytes)
            return (request, bytes)
        }
        if let bytes = request.body.inMemoryBytes { return (request, bytes) }
        let reader = try request.body.makeReader()
        var data = Data()
        while true {
            let chunk = try reader.read(maxLength: 64 * 1024)
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        return (request, data)
    }

    /// The bytes the response carried: in memory, or the part of a download's file this exchange wrote.
    static func bytes(of response: TransportResponse, request: TransportRequest) throws(ServerAPIError) -> Data {
        switch response.body {
        case .data(let data): return data
        case .stream: return Data()
        case .file(let url, _):
            do {
                let data = try Data(contentsOf: url)
                // A resumed download's file starts with what was on disk before; the 206 carried the rest.
                if response.status == 206, response.metrics.bytesReceived < data.count {
                    return Data(data.suffix(Int(response.metrics.bytesReceived)))
                }
                return data
            } catch {
                throw ServerAPIError(
                    .fileSystem, "cannot read the download \(url.path) to record it", requestID: request.id,
                    url: request.url, underlying: error)
            }
        }
    }
}
