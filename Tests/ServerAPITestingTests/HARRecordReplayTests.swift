import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import ServerAPITesting
import ServerAPIURLSession
import Testing

/// Records real traffic (httpbin and the fault fixture) through each real transport, then replays it with no
/// server behind the URLs: the same results, errors, streamed chunks and downloaded bytes.
@Suite("HAR record and replay through the real transports")
struct HARRecordReplayTests {
    enum Backend: String, CaseIterable, Sendable {
        case curl, urlsession

        func make() -> any RequestPerforming {
            switch self {
            case .curl: CurlTransport()
            case .urlsession: URLSessionTransport()
            }
        }
    }

    /// What a call gave, in a form two runs can be compared by (no ids, URLs or timings).
    enum Outcome: Hashable, CustomStringConvertible {
        case result(status: Int, headers: HTTPHeaders, value: ServerValue)
        case failure(kind: String, status: Int?, message: String)
        case streamed(status: Int, chunks: [Data], end: String)
        case downloaded(status: Int, bytes: Data)

        var description: String {
            switch self {
            case .result(let status, _, let value): "result \(status) \(String(describing: value).prefix(80))"
            case .failure(let kind, let status, let message): "failure \(kind) \(status ?? 0) \(message)"
            case .streamed(let status, let chunks, let end): "streamed \(status) \(chunks.map(\.count)) \(end)"
            case .downloaded(let status, let bytes): "downloaded \(status) \(bytes.count) bytes"
            }
        }
    }

    /// The calls: JSON with a query, a JSON POST, an error status, a download, server-sent events, a body cut
    /// off mid-stream, a refused connection and a timeout.
    static func scenario(
        _ manager: ServerAPIManager, httpbin: String, fixture: String, refused: Int, folder: URL
    ) async -> [Outcome] {
        func outcome(_ work: () async throws -> Outcome) async -> Outcome {
            do { return try await work() } catch {
                let failure = ServerAPIError.wrap(error)
                return .failure(kind: failure.kind.rawValue, status: failure.status, message: failure.message)
            }
        }
        func result(_ api: ServerAPI) async -> Outcome {
            await outcome {
                let result = try await manager.send(api)
                return .result(status: result.status, headers: result.headers, value: result.value)
            }
        }
        func streamed(_ api: ServerAPI) async -> Outcome {
            await outcome {
                let response = try await manager.stream(api)
                var chunks: [Data] = []
                do {
                    for try await chunk in response.body { chunks.append(chunk) }
                } catch {
                    return .streamed(
                        status: response.status, chunks: chunks, end: ServerAPIError.wrap(error).kind.rawValue)
                }
                return .streamed(status: response.status, chunks: chunks, end: "end")
            }
        }
        var outcomes: [Outcome] = []
        outcomes.append(
            await result(
                ServerAPI(host: httpbin, path: "/get").query("b", "2").query("a", "1").header("X-Trace", "42")
                    .format(.json)))
        outcomes.append(
            await result(ServerAPI(host: httpbin, path: "/anything", method: .post).json(["name": "Zoë"]).format(.json))
        )
        outcomes.append(await result(ServerAPI(host: httpbin, path: "/status/418")))
        let file = folder.appendingPathComponent("download-\(UUID().uuidString).bin")
        outcomes.append(
            await outcome {
                let result = try await manager.send(
                    ServerAPI(host: fixture, path: "/resource").query("size", "70000").query("seed", "7")
                        .download(to: file))
                return .downloaded(status: result.status, bytes: try Data(contentsOf: try #require(result.fileURL)))
            })
        outcomes.append(await streamed(ServerAPI(host: fixture, path: "/sse/basic")))
        outcomes.append(
            await streamed(
                ServerAPI(host: fixture, path: "/close-mid-body").query("size", "200000").query("after", "70000")))
        outcomes.append(await result(ServerAPI(host: "http://127.0.0.1:\(refused)", path: "/refused")))
        outcomes.append(await result(ServerAPI(host: fixture, path: "/hang").timeout(.milliseconds(300))))
        return outcomes
    }

    @Test(
        "a recording replays with the servers out of reach: same results, errors, chunks and bytes",
        arguments: Backend.allCases)
    func recordThenReplay(backend: Backend) async throws {
        let scratch = try Scratch()
        let har = scratch.file("session.har")
        let httpbin = try TestServers.httpbin()
        let fixture = try TestServers.fixture()
        let refused = try closedPort()

        let recording = RecordingTransport(recording: backend.make(), to: har)
        let recorded = await Self.scenario(
            ServerAPIManager(transport: recording), httpbin: httpbin, fixture: fixture, refused: refused,
            folder: scratch.folder)
        #expect(HARValidator.problems(try Data(contentsOf: har)) == [])
        #expect(recording.archive.entries.count == recorded.count)
        // The recording saw what a live run sees: the errors of the last three calls are real ones.
        #expect(recorded.count == 8)
        if case .failure(let kind, _, _) = recorded[6] {
            #expect(kind == "cannot connect")
        } else {
            Issue.record("\(recorded[6])")
        }
        if case .failure(let kind, _, _) = recorded[7] {
            #expect(kind == "timed out")
        } else {
            Issue.record("\(recorded[7])")
        }
        if case .streamed(_, let chunks, let end) = recorded[5] {
            #expect(end == "network")
            #expect(chunks.reduce(0) { $0 + $1.count } == 70000)
        } else {
            Issue.record("\(recorded[5])")
        }

        // The same calls, to ports nothing listens on: only the recording can answer them.
        let offline = (httpbin: "http://127.0.0.1:\(try closedPort())", fixture: "http://127.0.0.1:\(try closedPort())")
        // Only the requests' URLs move: the bodies keep what the servers said (httpbin echoes its URL).
        var archive = try HARArchive(contentsOf: har)
        for index in archive.entries.indices {
            archive.entries[index].request.url = archive.entries[index].request.url
                .replacingOccurrences(of: httpbin, with: offline.httpbin)
                .replacingOccurrences(of: fixture, with: offline.fixture)
        }
        let moved = scratch.file("moved.har")
        try archive.write(to: moved)

        let replay = try ReplayingTransport(file: moved)
        let replayed = await Self.scenario(
            ServerAPIManager(transport: replay), httpbin: offline.httpbin, fixture: offline.fixture, refused: refused,
            folder: scratch.folder)
        #expect(replayed == recorded)
        #expect(replay.unusedEntries.isEmpty)
    }

    @Test(
        "record missing through a real transport: the file answers what it has, the network the rest (which is then recorded, failure included)",
        arguments: Backend.allCases)
    func recordMissing(backend: Backend) async throws {
        let scratch = try Scratch()
        let har = scratch.file("partial.har")
        let httpbin = try TestServers.httpbin()
        _ = try await ServerAPIManager(transport: RecordingTransport(recording: backend.make(), to: har)).send(
            ServerAPI(host: httpbin, path: "/uuid"))
        // Moved to a port nothing listens on: an answer means the file gave it, a refusal that the network was asked.
        let offline = "http://127.0.0.1:\(try closedPort())"
        var archive = try HARArchive(contentsOf: har)
        archive.entries[0].request.url = archive.entries[0].request.url.replacingOccurrences(of: httpbin, with: offline)
        try archive.write(to: har)
        let recorded = try #require(archive.entries.first?.response.content.text)

        let completing = try ReplayingTransport(
            file: har, configuration: .init(mode: .recordMissing), upstream: backend.make())
        let manager = ServerAPIManager(transport: completing)
        #expect(try await manager.send(ServerAPI(host: offline, path: "/uuid").format(.string)).string == recorded)
        let missing = await #expect(throws: ServerAPIError.self) {
            try await manager.send(ServerAPI(host: offline, path: "/headers"))
        }
        #expect(missing?.kind == .cannotConnect)

        // Replay only: the refusal the network gave is now in the file, replayed as the same typed error.
        let replay = ServerAPIManager(transport: try ReplayingTransport(file: har))
        let replayed = await #expect(throws: ServerAPIError.self) {
            try await replay.send(ServerAPI(host: offline, path: "/headers"))
        }
        #expect(replayed?.kind == .cannotConnect)
        #expect(replayed?.message == missing?.message)
        #expect(try HARArchive(contentsOf: har).entries.count == 2)
        #expect(HARValidator.problems(try Data(contentsOf: har)) == [])
    }
}
