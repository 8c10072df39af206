import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPICurl

/// The hex SHA-256 of some chunks.
private func sha256(_ chunks: [Data]) -> String {
    var hash = SHA256()
    for chunk in chunks { hash.update(chunk) }
    return hash.finalize().map { String(format: "%02x", $0) }.joined()
}

/// The streamed body of a response, or a failure when the transport did not stream.
private func body(of response: TransportResponse) throws -> ResponseBodyStream {
    guard case .stream(let stream) = response.body else {
        throw ServerAPIError(.network, "the response's body is not streamed")
    }
    return stream
}

/// Runs `body` with time bounds scaled by 1, then 2, then 4: for a case whose check needs the response head within a
/// bound of a second or so (a timeout, a stall limit). On a machine too busy to give it that, the call rightly ends
/// before its head with `timedOut`, which says nothing of what the case checks; the case then runs again with bounds
/// twice as long, and says so. Any other outcome, and a `timedOut` head at the last scale, is the case's result.
private func withScaledBounds(_ body: (_ scale: Int) async throws -> Void) async throws {
    var scale = 1
    while true {
        do {
            return try await body(scale)
        } catch let error as HeadTooLate where scale < 4 {
            print("the head came after the bound (\(error.error)); again with bounds \(scale * 2) times as long")
            scale *= 2
        } catch let error as HeadTooLate {
            throw error.error
        }
    }
}

/// A call that ended with `timedOut` before its head came (see `withScaledBounds`).
private struct HeadTooLate: Error {
    let error: ServerAPIError
}

/// The streamed response to `request`, with a `timedOut` failure before the head thrown as `HeadTooLate`.
private func streamedHead(_ transport: CurlTransport, _ request: TransportRequest) async throws -> TransportResponse {
    do {
        return try await transport.stream(request)
    } catch let error as ServerAPIError where error.kind == .timedOut {
        throw HeadTooLate(error: error)
    }
}

/// `count` chunks of `size` bytes made as they are asked for (each byte is its chunk's index), with an
/// error instead of chunk `failAt`.
private struct GeneratedChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let count: Int
    let size: Int
    var failAt: Int? = nil

    struct Broken: Error {}

    static func chunk(_ index: Int, size: Int) -> Data { Data(repeating: UInt8(index % 251), count: size) }

    var all: [Data] { (0..<count).map { Self.chunk($0, size: size) } }

    struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: GeneratedChunks
        var index = 0

        mutating func next() async throws -> Data? {
            guard index < sequence.count else { return nil }
            if index == sequence.failAt { throw Broken() }
            // Let the transport run between chunks: a producer that takes its time.
            await Task.yield()
            defer { index += 1 }
            return GeneratedChunks.chunk(index, size: sequence.size)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(sequence: self) }
}

/// What the fault fixture's `/echo` says it received.
private struct Echo {
    let headers: [(name: String, value: String)]
    let length: Int
    let sha256: String

    init(_ data: Data) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let pairs = try #require(object["headers"] as? [[String]])
        headers = pairs.map { ($0[0], $0[1]) }
        length = try #require(object["length"] as? Int)
        sha256 = try #require(object["sha256"] as? String)
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

@Suite("CurlTransport: streamed responses and request bodies")
struct CurlStreamingTests {
    // MARK: Responses

    @Test("the head and the first chunk arrive while the server still holds the rest back", .timeLimit(.minutes(1)))
    func firstChunkEarly() async throws {
        let transport = CurlTransport()
        let key = UUID().uuidString
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.fixture("/hold-body?key=\(key)")))
        #expect(response.status == 200)
        var chunks = try body(of: response).makeAsyncIterator()
        // The server sends "first\n" and then nothing until the client leaves: a transport that waited
        // for the end of the body would never deliver it.
        #expect(try await chunks.next() == Data("first\n".utf8))
        try body(of: response).cancel()
        try await poll("0 active transfers") { transport.activeTransferCount == 0 }
    }

    @Test("a dripped body arrives whole, its first chunk before the end", .timeLimit(.minutes(1)))
    func drip() async throws {
        let transport = CurlTransport()
        let started = ContinuousClock.now
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.httpbin("/drip?duration=2&numbytes=5&delay=0")))
        #expect(response.status == 200)
        var chunks = try body(of: response).makeAsyncIterator()
        let first = try await chunks.next()
        let firstAt = ContinuousClock.now - started
        #expect(first?.isEmpty == false)
        var data = first ?? Data()
        while let chunk = try await chunks.next() { data.append(chunk) }
        let total = ContinuousClock.now - started
        #expect(data == Data("*****".utf8))
        // Timings are printed, not asserted: a busy machine may delay the reader past the whole drip.
        print("drip over curl: first chunk after \(firstAt), whole body after \(total)")
        let metrics = try #require(try body(of: response).metrics)
        #expect(metrics.bytesReceived == 5)
        try await poll("0 active transfers") { transport.activeTransferCount == 0 }
    }

    @Test("a streamed body read through the manager comes as lines", .timeLimit(.minutes(1)))
    func lines() async throws {
        let manager = ServerAPIManager(transport: CurlTransport())
        let response = try await manager.stream(ServerAPI(url: try TestServers.httpbin("/stream/20")))
        var lines: [String] = []
        for try await line in response.lines { lines.append(line) }
        #expect(lines.count == 20)
        for (index, line) in lines.enumerated() {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["id"] as? Int == index)
        }
    }

    @Test(
        "a 64 MiB body read slowly through a tiny buffer arrives byte-exact, and the transfer pauses and resumes",
        .timeLimit(.minutes(3)))
    func largeBodyWithBackpressure() async throws {
        let size = 64 << 20
        let transport = CurlTransport(configuration: .init(streamBufferSize: 64 << 10))
        let expected = String(
            decoding: try await transport.perform(
                TransportRequest(url: try TestServers.fixture("/resource/sha256?size=\(size)"))
            ).data ?? Data(), as: UTF8.self
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.fixture("/resource?size=\(size)"), timeout: .seconds(30)))
        #expect(response.status == 200)
        var hash = SHA256()
        var received = 0
        for try await chunk in try body(of: response) {
            hash.update(chunk)
            received += chunk.count
            // A slow reader (the network is far faster than this), which also leaves the cooperative
            // threads to the tests running beside it.
            await Task.yield()
        }
        #expect(received == size)
        #expect(hash.finalize().map { String(format: "%02x", $0) }.joined() == expected)
        let counts = transport.streamPauseCounts
        #expect(counts.paused > 0)
        #expect(counts.resumed > 0)
        #expect(try body(of: response).metrics?.bytesReceived == Int64(size))
        try await poll("0 active transfers") { transport.activeTransferCount == 0 }
    }

    @Test("cancelling the stream mid-body ends the transfer", .timeLimit(.minutes(1)))
    func cancelMidBody() async throws {
        let transport = CurlTransport()
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.fixture("/hang-body?size=1000000&after=1000")))
        let stream = try body(of: response)
        var chunks = stream.makeAsyncIterator()
        let first = try await chunks.next()
        #expect(first?.isEmpty == false)
        #expect(transport.activeTransferCount == 1)
        stream.cancel()
        // Cancelled, not any error: the request's 60 s timeout would end the read too, as timedOut.
        let error = await #expect(throws: ServerAPIError.self) {
            while try await chunks.next() != nil {}
        }
        #expect(error?.kind == .cancelled, "\(String(describing: error))")
        try await poll("0 active transfers") { transport.activeTransferCount == 0 }
        // The transport still works.
        let after = try await transport.perform(TransportRequest(url: try TestServers.fixture("/health")))
        #expect(after.status == 200)
    }

    @Test("leaving the reading loop early ends the transfer", .timeLimit(.minutes(1)))
    func leaveLoopEarly() async throws {
        let transport = CurlTransport()
        let response = try await transport.stream(
            TransportRequest(url: try TestServers.fixture("/hang-body?size=1000000&after=1000")))
        var seen = 0
        for try await chunk in try body(of: response) {
            seen += chunk.count
            break
        }
        #expect(seen > 0)
        try await poll("0 active transfers") { transport.activeTransferCount == 0 }
    }

    @Test("a streamed call's timeout bounds the head only, not a body that keeps moving", .timeLimit(.minutes(1)))
    func timeoutBoundsHeadOnly() async throws {
        try await withScaledBounds { scale in
            // Eight bytes 300 ms apart: the body takes 2.4 times the timeout.
            let response = try await streamedHead(
                CurlTransport(),
                TransportRequest(
                    url: try TestServers.fixture("/drip?size=8&interval_ms=\(300 * scale)&chunk=1"),
                    timeout: .seconds(scale)))
            let data = try await body(of: response).collect(upTo: 1 << 20)
            #expect(data.count == 8)
        }
    }

    @Test("a head that does not come within the timeout fails the call", .timeLimit(.minutes(1)))
    func headTimeout() async throws {
        let transport = CurlTransport()
        let started = ContinuousClock.now
        let error = await expectError {
            try await transport.stream(
                TransportRequest(url: try TestServers.fixture("/hang"), timeout: .milliseconds(500)))
        }
        #expect(error?.kind == .timedOut)
        #expect(ContinuousClock.now - started < TestTiming.bound(.seconds(10)))
        try await poll("0 active transfers") { transport.activeTransferCount == 0 }
    }

    @Test("a dropped connection mid-body ends the stream with network", .timeLimit(.minutes(1)))
    func droppedMidBody() async throws {
        let response = try await CurlTransport().stream(
            TransportRequest(url: try TestServers.fixture("/close-mid-body?size=100000&after=5000")))
        let error = await expectError { try await body(of: response).collect(upTo: 1 << 20) }
        #expect(error?.kind == .network)
        #expect(error?.requestID != nil)
    }

    @Test("maxResponseSize ends a body without a length as it arrives", .timeLimit(.minutes(1)))
    func tooLarge() async throws {
        let response = try await CurlTransport().stream(
            TransportRequest(
                url: try TestServers.fixture("/resource?size=1000000&chunked=1"), maxResponseSize: 100_000))
        let error = await expectError { try await body(of: response).collect(upTo: 10 << 20) }
        #expect(error?.kind == .responseTooLarge)
    }

    @Test("a stall timeout ends a body that stops arriving", .timeLimit(.minutes(1)))
    func stall() async throws {
        try await withScaledBounds { scale in
            let response = try await streamedHead(
                CurlTransport(),
                TransportRequest(
                    url: try TestServers.fixture("/hang-body?size=1000000&after=1000"),
                    stallTimeout: StallTimeout(bytesPerSecond: 100, duration: .seconds(scale))))
            let error = await expectError { try await body(of: response).collect(upTo: 10 << 20) }
            #expect(error?.kind == .timedOut)
            #expect(error?.isStalled == true)
        }
    }

    @Test("1xx and redirect heads are not delivered: the final head is", .timeLimit(.minutes(1)))
    func finalHeadOnly() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport()
            let informational = try await transport.stream(TransportRequest(url: server.url("/informational")))
            #expect(informational.status == 200)
            #expect(informational.headers["X-Final"] == "yes")
            #expect(try await body(of: informational).collect(upTo: 1 << 20) == Data("final".utf8))
            let redirected = try await transport.stream(TransportRequest(url: server.url("/redirect/2")))
            #expect(redirected.status == 200)
            #expect(redirected.url.path == "/redirect/0")
            _ = try await body(of: redirected).collect(upTo: 1 << 20)
            #expect(try body(of: redirected).metrics?.redirects == 2)
        }
    }

    // MARK: Request bodies

    // A bound, not a measure: alone it takes a tenth of a second; beside the full suites on two cores, each chunk
    // waits behind them in the cooperative pool, and it took 30 to 80 seconds.
    @Test("a streamed body of unknown length is sent chunked and arrives intact", .timeLimit(.minutes(3)))
    func uploadUnknownLength() async throws {
        // Few chunks, each larger than libcurl's upload buffer (read in parts): every chunk is a hop through the
        // cooperative pool, where the suites running beside this test queue ahead of it.
        let chunks = GeneratedChunks(count: 16, size: 256 << 10)
        let response = try await CurlTransport().perform(
            TransportRequest(
                url: try TestServers.fixture("/echo"), method: .post,
                body: .stream(RequestBodyStream(chunks))))
        #expect(response.status == 200)
        let echo = try Echo(response.data ?? Data())
        #expect(echo.header("Transfer-Encoding")?.lowercased() == "chunked")
        #expect(echo.header("Content-Length") == nil)
        #expect(echo.length == 16 * (256 << 10))
        // The digest of these 4 MiB, computed once with Python's hashlib: hashing them here took most of the
        // test's time in a debug build.
        #expect(echo.sha256 == "16d39eabac06ff50805be1abb7031c813fca6f836805a8f344e2604c712a1bd7")
    }

    @Test("a streamed body of known length is sent with Content-Length", .timeLimit(.minutes(1)))
    func uploadKnownLength() async throws {
        let chunks = GeneratedChunks(count: 10, size: 10_000)
        let response = try await CurlTransport().perform(
            TransportRequest(
                url: try TestServers.fixture("/echo"), method: .put,
                body: .stream(RequestBodyStream(chunks, length: 100_000))))
        let echo = try Echo(response.data ?? Data())
        #expect(echo.header("Content-Length") == "100000")
        #expect(echo.header("Transfer-Encoding") == nil)
        #expect(echo.length == 100_000)
        #expect(echo.sha256 == sha256(chunks.all))
    }

    @Test("a streamed upload reaches httpbin and a streamed response can carry it back", .timeLimit(.minutes(1)))
    func uploadThenStream() async throws {
        let chunks = GeneratedChunks(count: 3, size: 1000)
        let response = try await CurlTransport().stream(
            TransportRequest(
                url: try TestServers.httpbin("/post"), method: .post,
                body: .stream(RequestBodyStream(chunks, length: 3000))))
        #expect(response.status == 200)
        let data = try await body(of: response).collect(upTo: 1 << 20)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let headers = object?["headers"] as? [String: String]
        #expect(headers?["Content-Length"] == "3000")
    }

    @Test("a sequence that throws mid-way fails the call with invalidRequest", .timeLimit(.minutes(1)))
    func failingSequence() async throws {
        let transport = CurlTransport()
        let error = await expectError {
            try await transport.perform(
                TransportRequest(
                    url: try TestServers.fixture("/echo"), method: .post,
                    body: .stream(RequestBodyStream(GeneratedChunks(count: 10, size: 10_000, failAt: 5)))))
        }
        #expect(error?.kind == .invalidRequest)
        try await poll("0 active transfers") { transport.activeTransferCount == 0 }
    }

    @Test(
        "a declared length the sequence does not match fails the call", .timeLimit(.minutes(1)),
        arguments: [50_000, 150_000])
    func wrongLength(declared: Int64) async throws {
        let transport = CurlTransport()
        let error = await expectError {
            try await transport.perform(
                TransportRequest(
                    url: try TestServers.fixture("/echo"), method: .post,
                    body: .stream(RequestBodyStream(GeneratedChunks(count: 10, size: 10_000), length: declared))))
        }
        #expect(error?.kind == .invalidRequest)
        try await poll("0 active transfers") { transport.activeTransferCount == 0 }
    }

    @Test("a 307 redirect that needs the streamed body again fails clearly", .timeLimit(.minutes(1)))
    func redirectNeedsBodyAgain() async throws {
        let error = await expectError {
            try await CurlTransport().perform(
                TransportRequest(
                    url: try TestServers.fixture("/redirect-to?url=/echo&status=307"), method: .post,
                    body: .stream(RequestBodyStream(GeneratedChunks(count: 2, size: 100)))))
        }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("only once") == true)
    }

    @Test("a task cancelled while its streamed body waits for its producer ends promptly", .timeLimit(.minutes(1)))
    func cancelWhileProducerWaits() async throws {
        let transport = CurlTransport()
        let (chunks, continuation) = AsyncStream<Data>.makeStream()
        continuation.yield(Data("first".utf8))
        let task = Task {
            try await transport.perform(
                TransportRequest(
                    url: try TestServers.fixture("/echo"), method: .post, body: .stream(RequestBodyStream(chunks))))
        }
        try await poll("1 active transfers") { transport.activeTransferCount == 1 }
        task.cancel()
        let error = await expectError { try await task.value }
        #expect(error?.kind == .cancelled)
        continuation.finish()
        try await poll("0 active transfers") { transport.activeTransferCount == 0 }
    }
}
