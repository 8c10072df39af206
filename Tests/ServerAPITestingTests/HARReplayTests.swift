import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPITesting

/// Matching, modes, ordering and timing of `ReplayingTransport`, with `MockTransport` as the upstream.
@Suite("HAR replay: matching, modes, order, timing")
struct HARReplayTests {
    static let host = "https://api.test"

    /// Records `calls` through a mock into `file` and returns the mock.
    @discardableResult
    static func record(_ file: URL, _ calls: [ServerAPI], stub: (MockTransport) -> Void) async throws -> MockTransport {
        let mock = MockTransport()
        stub(mock)
        let manager = ServerAPIManager(transport: RecordingTransport(recording: mock, to: file))
        for call in calls { _ = try? await manager.send(call) }
        return mock
    }

    @Test("identical requests are answered in recorded order, then the last one repeats")
    func recordedOrder() async throws {
        let scratch = try Scratch()
        let file = scratch.file("order.har")
        let call = ServerAPI(host: Self.host, path: "/counter").format(.string)
        try await Self.record(file, [call, call]) { $0.stub(.get, "/counter", .text("one"), .text("two")) }

        let manager = ServerAPIManager(transport: try ReplayingTransport(file: file))
        var answers: [String?] = []
        for _ in 0..<3 { answers.append(try await manager.send(call).string) }
        #expect(answers == ["one", "two", "two"])

        let strict = try ReplayingTransport(file: file, configuration: .init(repeatsLastAnswer: false))
        let strictManager = ServerAPIManager(transport: strict)
        _ = try await strictManager.send(call)
        _ = try await strictManager.send(call)
        let error = await #expect(throws: ServerAPIError.self) { try await strictManager.send(call) }
        #expect(error?.kind == .notRecorded)
        #expect(error?.message.contains("already used") == true)
    }

    @Test("the query's order does not matter; an unmatched request names the closest entry and what differed")
    func matching() async throws {
        let scratch = try Scratch()
        let file = scratch.file("match.har")
        try await Self.record(
            file,
            [
                ServerAPI(host: Self.host, path: "/items").query("page", "2").query("size", "10"),
                ServerAPI(host: Self.host, path: "/users", method: .post).json(["name": "Ada"]),
            ]
        ) {
            $0.stub(nil, "/items", .json("[1,2]"))
            $0.stub(nil, "/users", .json(#"{"id":1}"#, status: 201))
        }
        let manager = ServerAPIManager(transport: try ReplayingTransport(file: file))

        let items = try await manager.send(
            ServerAPI(host: Self.host, path: "/items").query("size", "10").query("page", "2").format(.data))
        #expect(items.data == Data("[1,2]".utf8))

        let wrongMethod = await #expect(throws: ServerAPIError.self) {
            try await manager.send(ServerAPI(host: Self.host, path: "/users", method: .put).json(["name": "Ada"]))
        }
        #expect(wrongMethod?.kind == .notRecorded)
        #expect(wrongMethod?.message.contains("closest is entry 2 of 2, POST https://api.test/users") == true)
        #expect(wrongMethod?.message.contains("method (recorded POST)") == true)

        let wrongQuery = await #expect(throws: ServerAPIError.self) {
            try await manager.send(ServerAPI(host: Self.host, path: "/items").query("page", "3").query("size", "10"))
        }
        #expect(wrongQuery?.kind == .notRecorded)
        #expect(wrongQuery?.message.contains("entry 1 of 2") == true)
        #expect(wrongQuery?.message.contains("query (recorded page=2; not recorded page=3)") == true)
    }

    @Test("with body matching, a different JSON body is not the recorded one; key order is not a difference")
    func bodyMatching() async throws {
        let scratch = try Scratch()
        let file = scratch.file("body.har")
        try await Self.record(
            file,
            [ServerAPI(host: Self.host, path: "/search", method: .post).body(.data(Data(#"{"a":1,"b":[true]}"#.utf8)))]
        ) {
            $0.stub(.post, "/search", .json("[]"))
        }
        let replay = try ReplayingTransport(file: file, configuration: .init(matchesBody: true))
        let manager = ServerAPIManager(transport: replay)
        let same = try await manager.send(
            ServerAPI(host: Self.host, path: "/search", method: .post).body(
                .data(Data(#"{ "b": [true], "a": 1 }"#.utf8))))
        #expect(same.status == 200)
        let other = await #expect(throws: ServerAPIError.self) {
            try await manager.send(
                ServerAPI(host: Self.host, path: "/search", method: .post).body(.data(Data(#"{"a":2}"#.utf8))))
        }
        #expect(other?.kind == .notRecorded)
        #expect(other?.message.contains("body (recorded") == true)
    }

    @Test(
        "replay only never asks the upstream; record missing asks it only for what the file lacks; record all asks it for everything"
    )
    func modes() async throws {
        let scratch = try Scratch()
        let file = scratch.file("modes.har")
        let known = ServerAPI(host: Self.host, path: "/known").format(.string)
        let unknown = ServerAPI(host: Self.host, path: "/unknown").format(.string)
        try await Self.record(file, [known]) { $0.stub(.get, "/known", .text("recorded")) }

        let upstream = MockTransport()
        upstream.stub(.get, "/known", .text("live known"))
        upstream.stub(.get, "/unknown", .text("live unknown"))

        // Replay only: the upstream is not even kept.
        let replayOnly = ServerAPIManager(transport: try ReplayingTransport(file: file, upstream: upstream))
        #expect(try await replayOnly.send(known).string == "recorded")
        let missing = await #expect(throws: ServerAPIError.self) { try await replayOnly.send(unknown) }
        #expect(missing?.kind == .notRecorded)
        #expect(upstream.requestCount == 0)

        // Record missing: the known call from the file, the unknown one live, then added to the file.
        let completing = try ReplayingTransport(
            file: file, configuration: .init(mode: .recordMissing), upstream: upstream)
        let completingManager = ServerAPIManager(transport: completing)
        #expect(try await completingManager.send(known).string == "recorded")
        #expect(try await completingManager.send(unknown).string == "live unknown")
        #expect(upstream.requests.map(\.url.path) == ["/unknown"])
        let completed = try HARArchive(contentsOf: file)
        #expect(completed.entries.map { URL(string: $0.request.url)?.path } == ["/known", "/unknown"])
        #expect(
            try await ServerAPIManager(transport: ReplayingTransport(file: file)).send(unknown).string == "live unknown"
        )

        // Record all: both live, and the file holds only the new session.
        upstream.reset()
        upstream.stub(.get, "/known", .text("live known"))
        let rerecording = try ReplayingTransport(file: file, configuration: .init(mode: .recordAll), upstream: upstream)
        #expect(try await ServerAPIManager(transport: rerecording).send(known).string == "live known")
        #expect(upstream.requestCount == 1)
        let rerecorded = try HARArchive(contentsOf: file)
        #expect(rerecorded.entries.count == 1)
        #expect(rerecorded.entries.first?.response.content.text == "live known")

        // A record mode without an upstream cannot record.
        let noUpstream = #expect(throws: ServerAPIError.self) {
            try ReplayingTransport(file: file, configuration: .init(mode: .recordAll))
        }
        #expect(noUpstream?.kind == .invalidRequest)
    }

    @Test("replaying a file that does not exist fails at once and says how to record it")
    func missingFile() throws {
        let error = #expect(throws: ServerAPIError.self) {
            try ReplayingTransport(file: URL(fileURLWithPath: "/nonexistent/recording.har"))
        }
        #expect(error?.kind == .fileSystem)
        #expect(error?.message.contains("record it with the mode .recordMissing") == true)
    }

    @Test("recorded timing: chunks arrive after their recorded delays on a TestClock, in their recorded boundaries")
    func streamTiming() async throws {
        var response = HARArchive.Response(
            status: 200, headers: [.init(name: "Content-Type", value: "text/event-stream")],
            content: HARArchive.Content(size: 9, mimeType: "text/event-stream", text: "onetwothr"))
        response.chunks = [.init(size: 3, time: 0), .init(size: 3, time: 1000), .init(size: 3, time: 2500)]
        let entry = HARArchive.Entry(
            startedDateTime: "2026-01-01T00:00:00.000Z", time: 2600,
            request: HARArchive.Request(method: "GET", url: "\(Self.host)/feed"), response: response,
            timings: HARArchive.Timings(wait: 100, receive: 2500))
        let clock = TestClock()
        let replay = try ReplayingTransport(
            archive: HARArchive(entries: [entry]), configuration: .init(streamTiming: .recorded(clock: clock)))
        let streamed = try await ServerAPIManager(transport: replay).stream(ServerAPI(host: Self.host, path: "/feed"))
        let reader = Task {
            var chunks: [String] = []
            for try await chunk in streamed.body { chunks.append(String(decoding: chunk, as: UTF8.self)) }
            return chunks
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(1500))
        #expect(try await reader.value == ["one", "two", "thr"])
        #expect(clock.requestedSleeps == [.seconds(1), .milliseconds(1500)])
    }

    @Test("a streamed recording replays its chunks and then its mid-body failure as the same typed error")
    func streamedFailure() async throws {
        let scratch = try Scratch()
        let file = scratch.file("stream.har")
        let mock = MockTransport()
        mock.stub(.get, "/feed", .stream([.text("a"), .text("bb"), .failure(ServerAPIError(.network, "dropped"))]))
        let recorder = ServerAPIManager(transport: RecordingTransport(recording: mock, to: file))
        let live = try await recorder.stream(ServerAPI(host: Self.host, path: "/feed"))
        var liveChunks: [Data] = []
        let liveError = await #expect(throws: ServerAPIError.self) {
            for try await chunk in live.body { liveChunks.append(chunk) }
        }

        let replayed = try await ServerAPIManager(transport: ReplayingTransport(file: file)).stream(
            ServerAPI(host: Self.host, path: "/feed"))
        var chunks: [Data] = []
        let error = await #expect(throws: ServerAPIError.self) {
            for try await chunk in replayed.body { chunks.append(chunk) }
        }
        #expect(chunks == liveChunks)
        #expect(chunks == [Data("a".utf8), Data("bb".utf8)])
        #expect(error?.kind == liveError?.kind)
        #expect(error?.message == "dropped")
        // A whole-body call to the same entry gets the failure too.
        let whole = await #expect(throws: ServerAPIError.self) {
            try await ServerAPIManager(transport: ReplayingTransport(file: file)).send(
                ServerAPI(host: Self.host, path: "/feed"))
        }
        #expect(whole?.kind == .network)
    }

    @Test("ServerAPIManager.replaying: one line, Recordings/NAME.har beside the test, SAPI_HAR_MODE overrides the mode")
    func helper() async throws {
        let scratch = try Scratch()
        let file = scratch.file("Recordings/hello.har")
        try await Self.record(file, [ServerAPI(host: Self.host, path: "/hello")]) {
            $0.stub(.get, "/hello", .text("hi"))
        }
        let fakeTest = scratch.file("HelloTests.swift").path

        let manager = try ServerAPIManager.replaying("hello", filePath: fakeTest)
        #expect(try await manager.send(ServerAPI(host: Self.host, path: "/hello").format(.string)).string == "hi")

        #expect(
            HARMode.recordingFile("Shop/cart", filePath: "/src/Tests/A/ATests.swift").path
                == "/src/Tests/A/Recordings/Shop/cart.har")
        #expect(HARMode.recordingFile("/abs/x.har", filePath: "/src/T.swift").path == "/abs/x.har")
        #expect(try HARMode.resolve(.replay, environment: ["SAPI_HAR_MODE": "record-all"]) == .recordAll)
        #expect(try HARMode.resolve(.recordMissing, environment: [:]) == .recordMissing)
        let unknownMode = #expect(throws: ServerAPIError.self) {
            try HARMode.resolve(.replay, environment: ["SAPI_HAR_MODE": "sometimes"])
        }
        #expect(unknownMode?.kind == .invalidRequest)
        #expect(unknownMode?.message.contains("sometimes") == true)
    }

    @Test("a replayed download is written to its file; an error status writes nothing")
    func download() async throws {
        let scratch = try Scratch()
        let file = scratch.file("download.har")
        let bytes = Data((0..<5000).map { UInt8($0 % 251) })
        try await Self.record(
            file,
            [
                ServerAPI(host: Self.host, path: "/blob").download(to: scratch.file("live.bin")),
                ServerAPI(host: Self.host, path: "/gone").download(to: scratch.file("live-gone.bin")),
            ]
        ) {
            $0.stub(.get, "/blob", .data(bytes, headers: ["Content-Type": "application/octet-stream"]))
            $0.stub(.get, "/gone", .status(404))
        }
        let archive = try HARArchive(contentsOf: file)
        #expect(archive.entries.first?.response.content.encoding == "base64")

        let manager = ServerAPIManager(transport: try ReplayingTransport(file: file))
        let target = scratch.file("replayed.bin")
        let result = try await manager.send(ServerAPI(host: Self.host, path: "/blob").download(to: target))
        #expect(result.fileURL == target)
        #expect(try Data(contentsOf: target) == bytes)
        let gone = scratch.file("gone.bin")
        let goneError = await #expect(throws: ServerAPIError.self) {
            try await manager.send(ServerAPI(host: Self.host, path: "/gone").download(to: gone))
        }
        #expect(goneError?.kind == .httpStatus)
        #expect(goneError?.status == 404)
        #expect(!scratch.exists(gone))
    }
}
