import Foundation
@_spi(Transport) import ServerAPIKit

/// One recorded entry turned back into what a transport returns for a request.
struct ReplayedResponse {
    let entry: HARArchive.Entry
    let request: TransportRequest
    let transport: String

    private var response: HARArchive.Response { entry.response }

    private var error: ServerAPIError? {
        response.error.map { $0.serverAPIError(requestID: request.id, url: request.url) }
    }

    private var headers: HTTPHeaders {
        HTTPHeaders(response.headers.map { HTTPHeaders.Field(name: $0.name, value: $0.value) })
    }

    private var url: URL { response.finalURL.flatMap(URL.init(string:)) ?? request.url }

    /// The recorded failure when no response arrived.
    private func checkHead() throws(ServerAPIError) {
        guard response.status == 0 else { return }
        throw error
            ?? ServerAPIError(
                .network, "the recorded entry has no response (status 0)", requestID: request.id, url: request.url)
    }

    /// The metrics the recording measured, as a transport reports them.
    private func metrics(received: Int64) -> TransportMetrics {
        let timings = entry.timings
        let connect = timings.connect.flatMap { $0 >= 0 ? $0 : nil }
        let before = [timings.blocked, timings.dns, connect].compactMap { $0.flatMap { $0 >= 0 ? $0 : nil } }
            .reduce(0, +)
        let firstByte = before + max(0, timings.send) + max(0, timings.wait)
        return TransportMetrics(
            transport: transport, connected: connect.map { _ in HARArchive.duration(milliseconds: before) },
            firstByte: HARArchive.duration(milliseconds: firstByte),
            total: HARArchive.duration(milliseconds: entry.time), bytesSent: Int64(max(0, entry.request.bodySize)),
            bytesReceived: received, reusedConnection: timings.connect.map { $0 < 0 }, redirects: 0,
            httpVersion: HARArchive.transportVersion(response.httpVersion))
    }

    /// The whole response, as `perform` returns it: a recorded mid-body failure is thrown.
    func whole() throws(ServerAPIError) -> TransportResponse {
        try checkHead()
        if let error { throw error }
        let bytes = response.content.bytes
        if let tooLarge = ResponseSizeRule.check(
            received: Int64(bytes.count), status: response.status,
            limit: ResponseSizeRule.limit(for: request, streamed: false))
        {
            throw tooLarge.with(requestID: request.id, url: request.url)
        }
        if let sent = try? request.body.knownLength(), sent > 0 {
            request.progress?(TransferProgress(direction: .upload, completed: sent, total: sent))
        }
        var status = response.status
        var body = ResponseBody.data(bytes)
        if let target = request.download {
            (status, body) = try download(bytes, to: target)
        } else {
            request.progress?(
                TransferProgress(direction: .download, completed: Int64(bytes.count), total: Int64(bytes.count)))
        }
        return TransportResponse(
            status: status, headers: headers, body: body, url: url, metrics: metrics(received: Int64(bytes.count)))
    }

    /// Writes the body as a transport writes a download: 2xx to the file (continuing a partial one for a 206),
    /// error bodies kept in memory.
    private func download(_ bytes: Data, to target: DownloadTarget) throws(ServerAPIError) -> (Int, ResponseBody) {
        let writer = DownloadFileWriter(target: target, requestID: request.id, url: request.url)
        var prepared = request
        writer.prepare(&prepared)
        var status = response.status
        switch try writer.receiveHead(status: status, headers: headers) {
        case .file, .memory:
            try writer.write(bytes)
        case .alreadyComplete:
            status = 200
        case .restart:
            writer.abandon()
            throw ServerAPIError(
                .network, "the recorded response cannot continue the partial download at \(target.partialURL.path)",
                requestID: request.id, url: request.url)
        }
        do throws(ServerAPIError) {
            let body = try writer.finish()
            request.progress?(writer.progress)
            return (status, body)
        } catch {
            writer.abandon()
            throw error
        }
    }

    /// The handshake's answer, as a transport's `webSocket` returns it: a recorded 101 opens a connection that
    /// plays the recorded session; any other status is the refusal, with its headers and body.
    /// - Parameters:
    ///   - redaction: The recording's redaction, applied to the client's text messages before they are compared.
    ///   - recordingAdvice: How to record the session again, for a client message the recording does not have.
    ///   - describing: The entry, for errors.
    func webSocket(
        redaction: HARRedaction, recordingAdvice: String, describing: String
    ) throws(ServerAPIError) -> WebSocketUpgrade {
        try checkHead()
        guard response.status == 101 else {
            let bytes = response.content.bytes
            return WebSocketUpgrade(
                response: TransportResponse(
                    status: response.status, headers: headers, body: .data(bytes), url: url,
                    metrics: metrics(received: Int64(bytes.count))),
                connection: nil)
        }
        let script = try WebSocketReplayScript(entry, describing: describing)
        var headers = webSocketHeaders
        // A recorded agreement on permessage-deflate is replayed to a handshake that offers it; one that does not
        // (a client with compression off) gets the answer without it, as a server that declines.
        let offered = WebSocketHandshakeRule.offeredExtensions(request.headers).contains(
            WebSocketDeflateNegotiation.name)
        if !offered { headers = WebSocketDeflateNegotiation.declined(headers) }
        return WebSocketUpgrade(
            response: TransportResponse(
                status: 101, headers: headers, body: .data(Data()), url: url, metrics: metrics(received: 0)),
            connection: ReplayedWebSocketConnection(
                script: script, request: request, redaction: redaction, recordingAdvice: recordingAdvice,
                describing: describing,
                compressed: offered && WebSocketDeflateNegotiation.answered(headers) != nil))
    }

    /// The recorded 101's headers as the replayed server answers this handshake: a recorded
    /// `Sec-WebSocket-Accept` that matches the recorded request's `Sec-WebSocket-Key` is answered for this
    /// request's key, so that the core's check (RFC 6455 §4.1) holds the recording to what the server proved; one
    /// that does not match, or that has no recorded key to match, is replayed as recorded, and the handshake fails.
    private var webSocketHeaders: HTTPHeaders {
        var headers = headers
        let recordedKey = entry.request.headers.first { $0.name.lowercased() == "sec-websocket-key" }?.value
        if let recordedKey, let liveKey = request.headers["Sec-WebSocket-Key"],
            headers.values(for: "Sec-WebSocket-Accept") == [WebSocketHandshakeRule.accept(forKey: recordedKey)]
        {
            headers["Sec-WebSocket-Accept"] = WebSocketHandshakeRule.accept(forKey: liveKey)
        }
        return headers
    }

    /// The response as `stream` returns it: the head at once, the body in its recorded chunks, then the
    /// recorded end (or failure).
    func streamed(timing: ReplayingTransport.StreamTiming) throws(ServerAPIError) -> TransportResponse {
        try checkHead()
        let bytes = response.content.bytes
        var chunks: [(Data, Duration)] = []
        var offset = 0
        for chunk in response.chunks ?? [] where offset < bytes.count {
            // What is left bounds the size first: a recorded size adds to the offset without overflowing.
            let end = offset + min(bytes.count - offset, max(0, chunk.size))
            chunks.append((bytes.subdata(in: offset..<end), HARArchive.duration(milliseconds: chunk.time)))
            offset = end
        }
        if offset < bytes.count { chunks.append((bytes.subdata(in: offset..<bytes.count), chunks.last?.1 ?? .zero)) }
        let parts = chunks
        let final = metrics(received: Int64(bytes.count))
        var head = final
        head.total = head.firstByte ?? .zero
        head.bytesReceived = 0
        let failure = error
        let limit = request.maxResponseSize
        let status = response.status
        let progress = request.progress
        let body: ResponseBodyStream
        switch timing {
        case .immediate:
            let (stream, source) = ResponseBodyStream.makeStream()
            // Everything is in memory already: handing it over at once keeps nothing more than the recording.
            Self.feed(parts.map(\.0), status: status, limit: limit, progress: progress, source: source)
            Self.end(source, failure: failure, metrics: final)
            body = stream
        case .recorded(let clock):
            let producer = MockStreamProducer()
            let (stream, source) = ResponseBodyStream.makeStream(
                onResume: { producer.resume() }, onTermination: { producer.stop() })
            producer.start {
                var elapsed = Duration.zero
                var received: Int64 = 0
                for (chunk, time) in parts {
                    if time > elapsed {
                        do { try await clock.sleep(for: time - elapsed) } catch { return }
                        elapsed = time
                    }
                    received += Int64(chunk.count)
                    if let tooLarge = ResponseSizeRule.check(received: received, status: status, limit: limit) {
                        source.finish(throwing: tooLarge, metrics: final)
                        return
                    }
                    progress?(TransferProgress(direction: .download, completed: received, total: nil))
                    switch source.yield(chunk) {
                    case .more: break
                    case .pause:
                        guard await producer.waitForResume() else { return }
                    case .stopped: return
                    }
                }
                Self.end(source, failure: failure, metrics: final)
            }
            body = stream
        }
        return TransportResponse(status: status, headers: headers, body: .stream(body), url: url, metrics: head)
    }

    private static func feed(
        _ chunks: [Data], status: Int, limit: Int64?, progress: (@Sendable (TransferProgress) -> Void)?,
        source: ResponseBodyStream.Source
    ) {
        var received: Int64 = 0
        for chunk in chunks {
            received += Int64(chunk.count)
            if let tooLarge = ResponseSizeRule.check(received: received, status: status, limit: limit) {
                source.finish(throwing: tooLarge, metrics: nil)
                return
            }
            progress?(TransferProgress(direction: .download, completed: received, total: nil))
            if source.yield(chunk) == .stopped { return }
        }
    }

    private static func end(_ source: ResponseBodyStream.Source, failure: ServerAPIError?, metrics: TransportMetrics) {
        if let failure {
            source.finish(throwing: failure, metrics: metrics)
        } else {
            source.finish(metrics: metrics)
        }
    }
}
