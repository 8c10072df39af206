import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// 200 MB each way in bounded memory. Serialized, so the transfers do not overlap and each
/// one's memory growth is its own.
///
/// Re-run alone: `scripts/test.sh --filter LargeTransferTests` (memory numbers are printed).
@Suite("Conformance: large transfers", .serialized)
struct LargeTransferTests {
    static let size = 200 * 1024 * 1024
    /// The most resident memory a transfer may add, whatever its size.
    static let memoryBound: Int64 = 64 * 1024 * 1024

    @Test("a 200 MB download goes to disk as it arrives, in bounded memory", arguments: TransportKind.allCases)
    func download(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let transport = kind.make()
        let target = DownloadTarget(destination: scratch.file("big.bin"))
        let recorder = ProgressRecorder()
        let probe = MemoryProbe()
        probe.start()
        let started = ContinuousClock.now
        let response = try await transport.send(
            try kind.fixture("/resource?size=\(Self.size)&seed=21"), timeout: .seconds(120)
        ) {
            $0.download = target
            $0.progress = recorder.record
        }
        let elapsed = ContinuousClock.now - started
        let growth = probe.stop()
        print("200 MB download [\(kind)]: \(elapsed), resident memory grew by \(mebibytes(growth))")
        #expect(response.status == 200)
        #expect(response.body == .file(target.destination, bytes: Int64(Self.size)))
        #expect(growth < Self.memoryBound, "resident memory grew by \(mebibytes(growth))")
        let reports = recorder.reports(.download)
        #expect(reports.count > 10)
        #expect(reports.last?.completed == Int64(Self.size))
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed <= $1.completed })
        let destination = target.destination
        #expect(try await FixturePayload(seed: 21).verify(fileAt: destination, size: Self.size))
    }

    @Test("a 200 MB file upload streams from disk, in bounded memory", arguments: TransportKind.allCases)
    func uploadFile(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let transport = kind.make()
        let file = scratch.file("upload.bin")
        try await offThePool { try FixturePayload(seed: 22).write(size: Self.size, to: file) }
        let recorder = ProgressRecorder()
        let probe = MemoryProbe()
        probe.start()
        let started = ContinuousClock.now
        let response = try await transport.send(
            try kind.fixture("/upload-sink"), method: .put, body: .file(file), timeout: .seconds(120)
        ) { $0.progress = recorder.record }
        let elapsed = ContinuousClock.now - started
        let growth = probe.stop()
        print("200 MB file upload [\(kind)]: \(elapsed), resident memory grew by \(mebibytes(growth))")
        let echo = try Echo(response)
        #expect(echo.length == Self.size)
        #expect(echo.sha256 == (try await Self.expectedDigest(seed: 22, kind: kind, transport: transport)))
        #expect(growth < Self.memoryBound, "resident memory grew by \(mebibytes(growth))")
        #expect(recorder.reports(.upload).last?.completed == Int64(Self.size))
        #expect(response.metrics.bytesSent == Int64(Self.size))
    }

    @Test(
        "a 200 MB multipart upload streams its file part from disk, in bounded memory",
        arguments: TransportKind.allCases)
    func uploadMultipart(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let transport = kind.make()
        let file = scratch.file("part.bin")
        try await offThePool { try FixturePayload(seed: 23).write(size: Self.size, to: file) }
        let form = MultipartForm([.field("title", "big"), .file("upload", url: file)], boundary: "LargeBoundary")
        let segments = try form.encodedSegments()
        guard case .data(let head) = segments.first, case .data(let tail) = segments.last, segments.count == 3 else {
            Issue.record("unexpected segments: \(segments)")
            return
        }
        let path =
            "/upload-sink?range_start=\(head.count)&range_length=\(Self.size)&keep_head=\(head.count)&keep_tail=\(tail.count)"
        let probe = MemoryProbe()
        probe.start()
        let started = ContinuousClock.now
        let response = try await transport.perform(
            try ServerAPI(url: try kind.fixture(path), method: .post).body(.multipart(form)).timeout(
                .seconds(120)
            )
            .transportRequest())
        let elapsed = ContinuousClock.now - started
        let growth = probe.stop()
        print("200 MB multipart upload [\(kind)]: \(elapsed), resident memory grew by \(mebibytes(growth))")
        let json = try JSONDecoder().decode(JSONValue.self, from: response.data ?? Data())
        #expect(json["length"]?.intValue == Int64(head.count + Self.size + tail.count))
        #expect(
            json["range_sha256"]?.stringValue
                == (try await Self.expectedDigest(seed: 23, kind: kind, transport: transport)))
        #expect(json["head_base64"]?.stringValue.flatMap { Data(base64Encoded: $0) } == head)
        #expect(json["tail_base64"]?.stringValue.flatMap { Data(base64Encoded: $0) } == tail)
        #expect(growth < Self.memoryBound, "resident memory grew by \(mebibytes(growth))")
    }

    @Test(
        "a 1 GiB stream whose reader stops holds the server back, and is read in bounded memory",
        arguments: TransportKind.allCases.filter(\.pausesStreams))
    func pausedStream(kind: TransportKind) async throws {
        let size = 1 << 30
        let key = UUID().uuidString
        let manager = ServerAPIManager(transport: kind.make())
        let probe = MemoryProbe()
        probe.start()
        let response = try await manager.stream(
            ServerAPI(url: try kind.fixture("/stream-bytes?size=\(size)&key=\(key)")))
        var chunks = response.body.makeAsyncIterator()
        var received = try #require(try await chunks.next()).count
        // The reader stops. The server's count of bytes it sent stops growing once the transport has
        // paused and the socket buffers are full: polled, as the fixture offers no event for it.
        var sent = -1
        for _ in 0..<200 {
            let now = try await Self.sentBytes(kind, manager, key)
            if now == sent { break }
            sent = now
            try await Task.sleep(for: .milliseconds(250))
        }
        print(
            "paused 1 GiB stream [\(kind)]: the server sent \(mebibytes(Int64(sent))) while the reader had \(received) B"
        )
        #expect(sent < 64 << 20, "the server sent \(sent) bytes while the reader had stopped")
        while let chunk = try await chunks.next() { received += chunk.count }
        let growth = probe.stop()
        print("paused 1 GiB stream [\(kind)]: resident memory grew by \(mebibytes(growth))")
        #expect(received == size)
        // Over HTTP/2, libcurl goes on receiving a paused stream until the server has used up the stream's window,
        // 32 MiB (`CurlTransport.Configuration.streamBufferSize`'s note): the reader's pause holds that much more.
        // The server's count above (35 MiB sent for a 4 KiB read) shows it; the bound adds the window to what
        // any transfer may add. Without the pause the whole GiB would be held.
        let window: Int64 = kind == .curlHTTP2 ? 32 << 20 : 0
        #expect(growth < Self.memoryBound + window, "resident memory grew by \(mebibytes(growth))")
        #expect(await response.finalMetrics.transport?.bytesReceived == Int64(size))
    }

    private static func sentBytes(_ kind: TransportKind, _ manager: ServerAPIManager, _ key: String) async throws -> Int
    {
        let result = try await manager.send(
            ServerAPI(url: try kind.fixture("/stream-bytes/sent?key=\(key)")).format(.data))
        let state = try JSONSerialization.jsonObject(with: result.data ?? Data()) as? [String: Any]
        return state?["sent"] as? Int ?? -1
    }

    static func expectedDigest(seed: Int, kind: TransportKind, transport: any RequestPerforming) async throws -> String
    {
        let response = try await transport.send(try kind.fixture("/resource/sha256?size=\(size)&seed=\(seed)"))
        return String(decoding: response.data ?? Data(), as: UTF8.self)
    }
}
