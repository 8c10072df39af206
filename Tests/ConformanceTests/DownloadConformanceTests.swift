import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Downloads to a file: progress, resume, error bodies, 416 and servers that ignore Range.
@Suite("Conformance: downloads")
struct DownloadConformanceTests {
    static let size = 1_500_000

    private func download(
        _ kind: TransportKind, _ transport: any RequestPerforming, _ path: String, to target: DownloadTarget,
        progress: ProgressRecorder? = nil
    ) async throws -> TransportResponse {
        try await transport.send(try kind.fixture(path)) {
            $0.download = target
            $0.progress = progress?.record
        }
    }

    @Test("a download is written to its file, with progress up to the total", arguments: TransportKind.allCases)
    func plain(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("plain.bin"))
        let recorder = ProgressRecorder()
        let response = try await download(
            kind,
            kind.make(), "/resource?size=\(Self.size)&seed=3", to: target, progress: recorder)
        recorder.markReturned()
        #expect(response.status == 200)
        #expect(response.body == .file(target.destination, bytes: Int64(Self.size)))
        #expect(try await FixturePayload(seed: 3).verify(fileAt: target.destination, size: Self.size))
        #expect(!scratch.exists(target.partialURL))
        #expect(!scratch.exists(target.validatorURL))
        let reports = recorder.reports(.download)
        #expect(
            reports.last == TransferProgress(direction: .download, completed: Int64(Self.size), total: Int64(Self.size))
        )
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed <= $1.completed })
        #expect(recorder.lateReports == 0)
    }

    @Test(
        "an error status is never written into the download file",
        arguments: TransportKind.allCases, [404, 500])
    func errorStatus(kind: TransportKind, status: Int) async throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("error.bin"), resume: true)
        // A partial file from an earlier attempt must survive the error untouched.
        let partial = FixturePayload().bytes(0..<1000)
        try writeFile(partial, to: target.partialURL)
        let response = try await download(kind, kind.make(), "/resource/error/\(status)", to: target)
        #expect(response.status == status)
        #expect(String(decoding: response.data ?? Data(), as: UTF8.self).contains("error \(status)"))
        #expect(!scratch.exists(target.destination))
        #expect(try Data(contentsOf: target.partialURL) == partial)
    }

    @Test("an interrupted download resumes with Range and ends byte-identical", arguments: TransportKind.allCases)
    func resume(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let transport = kind.make()
        let target = DownloadTarget(destination: scratch.file("resumed.bin"), resume: true)
        let path = "/resource?size=\(Self.size)&seed=11&drop_after=600000"

        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await download(kind, transport, path, to: target)
        }
        #expect(error?.kind == .network)
        #expect(!scratch.exists(target.destination))
        let kept = scratch.size(target.partialURL) ?? 0
        #expect(kept > 0 && kept <= 600_000)
        #expect(scratch.exists(target.validatorURL))

        let recorder = ProgressRecorder()
        let response = try await download(kind, transport, path, to: target, progress: recorder)
        #expect(response.status == 206)
        #expect(response.body == .file(target.destination, bytes: Int64(Self.size)))
        #expect(recorder.reports(.download).first?.completed == kept)
        let expected = try await transport.send(try kind.fixture("/resource/sha256?size=\(Self.size)&seed=11"))
        #expect(
            try await Self.sha256(of: target.destination) == String(decoding: expected.data ?? Data(), as: UTF8.self))
        #expect(!scratch.exists(target.partialURL))
        #expect(!scratch.exists(target.validatorURL))
    }

    @Test(
        "a resumed download counts only the bytes the 206 carried as received", arguments: TransportKind.allCases)
    func resumedBytesReceived(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("counted.bin"), resume: true)
        let size = 4_000_000
        let kept = 1_000_000
        try FixturePayload(seed: 13).write(size: kept, to: target.partialURL)
        let recorder = ProgressRecorder()
        let response = try await download(
            kind,
            kind.make(), "/resource?size=\(size)&seed=13", to: target, progress: recorder)
        #expect(response.status == 206)
        #expect(response.body == .file(target.destination, bytes: Int64(size)))
        #expect(response.metrics.bytesReceived == Int64(size - kept))
        // Progress still counts the whole file, the part already on disk included.
        #expect(recorder.reports(.download).first?.completed == Int64(kept))
        #expect(recorder.reports(.download).last?.completed == Int64(size))
        #expect(try await FixturePayload(seed: 13).verify(fileAt: target.destination, size: size))
    }

    @Test(
        "a download's error body is kept only up to the transport's maxErrorBodySize",
        arguments: TransportKind.allCases)
    func errorBodyLimit(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let limit = 100
        let manager = ServerAPIManager(transport: kind.make(maxErrorBodySize: limit))
        let destination = scratch.file("limited.bin")
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await manager.send(
                ServerAPI(url: try kind.fixture("/resource/error/404?size=5000")).download(to: destination))
        }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 404)
        // The fixture's body is ASCII text, so the excerpt is the first `limit` bytes exactly.
        let excerpt = error?.bodyExcerpt ?? ""
        #expect(excerpt.utf8.count == limit)
        #expect(excerpt.hasPrefix("error 404"))
        #expect(!scratch.exists(destination))
        #expect(!scratch.exists(DownloadTarget(destination: destination).partialURL))
    }

    @Test("a server that ignores Range restarts the file from zero", arguments: TransportKind.allCases)
    func ignoredRange(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("norange.bin"), resume: true)
        try writeFile(Data(repeating: 0xEE, count: 400_000), to: target.partialURL)
        let response = try await download(kind, kind.make(), "/resource/norange?size=\(Self.size)&seed=4", to: target)
        #expect(response.status == 200)
        #expect(try await FixturePayload(seed: 4).verify(fileAt: target.destination, size: Self.size))
    }

    @Test(
        "a stale validator makes the server send the whole file, which replaces the partial one",
        arguments: TransportKind.allCases)
    func staleValidator(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("stale.bin"), resume: true)
        try writeFile(Data(repeating: 0xEE, count: 400_000), to: target.partialURL)
        try writeFile(Data("\"an-old-version\"".utf8), to: target.validatorURL)
        let response = try await download(kind, kind.make(), "/resource?size=\(Self.size)&seed=6", to: target)
        #expect(response.status == 200)
        #expect(try await FixturePayload(seed: 6).verify(fileAt: target.destination, size: Self.size))
    }

    @Test("a 416 for a partial file that is already whole completes it", arguments: TransportKind.allCases)
    func alreadyComplete(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("complete.bin"), resume: true)
        try FixturePayload(seed: 8).write(size: 100_000, to: target.partialURL)
        let response = try await download(kind, kind.make(), "/resource?size=100000&seed=8", to: target)
        #expect(response.status == 200)
        #expect(response.body == .file(target.destination, bytes: 100_000))
        #expect(try await FixturePayload(seed: 8).verify(fileAt: target.destination, size: 100_000))
        #expect(!scratch.exists(target.partialURL))
    }

    @Test("a 416 for a partial file longer than the resource restarts it", arguments: TransportKind.allCases)
    func rangeNotSatisfiable(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("longer.bin"), resume: true)
        try writeFile(Data(repeating: 0xEE, count: 200_000), to: target.partialURL)
        let response = try await download(kind, kind.make(), "/resource?size=100000&seed=2", to: target)
        #expect(response.status == 200)
        #expect(try await FixturePayload(seed: 2).verify(fileAt: target.destination, size: 100_000))
    }

    @Test(
        "a server that answers 416 even without Range ends in that 416 response, not a loop",
        arguments: TransportKind.allCases)
    func always416(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("416.bin"), resume: true)
        try writeFile(Data(repeating: 0xEE, count: 5000), to: target.partialURL)
        let response = try await download(kind, kind.make(), "/resource/416?size=100000", to: target)
        #expect(response.status == 416)
        #expect(!scratch.exists(target.destination))
    }

    @Test("a download through the manager gives the file as its result", arguments: TransportKind.allCases)
    func throughManager(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let manager = ServerAPIManager(transport: kind.make())
        let destination = scratch.file("managed.bin")
        let result = try await manager.send(
            ServerAPI(url: try kind.fixture("/resource?size=300000&seed=12")).download(to: destination))
        #expect(result.fileURL == destination)
        #expect(try await FixturePayload(seed: 12).verify(fileAt: destination, size: 300_000))

        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await manager.send(
                ServerAPI(url: try kind.fixture("/resource/error/404")).download(to: destination))
        }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 404)
        #expect(error?.bodyExcerpt?.contains("error 404") == true)
        // The earlier, complete download is still there and unchanged.
        #expect(try await FixturePayload(seed: 12).verify(fileAt: destination, size: 300_000))
    }

    /// The file's SHA-256 (the core's implementation), computed off the Swift concurrency pool.
    static func sha256(of url: URL) async throws -> String {
        try await offThePool {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            var hash = SHA256()
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(chunk) }
            return hash.finalize().map { String(format: "%02x", $0) }.joined()
        }
    }
}
