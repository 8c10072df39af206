import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPICurl

/// A download writer with the core writer's shape and simple semantics, to test how the transport
/// drives a writer: 2xx bodies to the partial file then the destination, others in memory.
final class TestDownloadWriter: CurlDownloadWriting {
    let target: DownloadTarget
    let log: Recorder<String>
    /// Dispositions to answer before the natural one (to force a restart).
    var scripted: [DownloadFileWriter.Disposition]
    private var handle: FileHandle?
    private var memory = Data()
    private var disposition: DownloadFileWriter.Disposition?
    private var prepared = 0
    private(set) var bytesOnDisk: Int64 = 0
    private(set) var expectedTotal: Int64?

    init(target: DownloadTarget, log: Recorder<String>, scripted: [DownloadFileWriter.Disposition]) {
        self.target = target
        self.log = log
        self.scripted = scripted
    }

    func prepare(_ request: inout TransportRequest) -> Int64 {
        prepared += 1
        log.append("prepare")
        request.headers.replaceOrAdd(name: "X-Prepared", value: "\(prepared)")
        return 0
    }

    func receiveHead(status: Int, headers: HTTPHeaders) throws(ServerAPIError) -> DownloadFileWriter.Disposition {
        log.append("head \(status)")
        if !scripted.isEmpty { return scripted.removeFirst() }
        if (200..<300).contains(status) {
            _ = FileManager.default.createFile(atPath: target.partialURL.path, contents: nil)
            handle = try? FileHandle(forWritingTo: target.partialURL)
            expectedTotal = headers["Content-Length"].flatMap { Int64($0) }
            disposition = .file
        } else {
            disposition = .memory
        }
        return disposition!
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ServerAPIError) {
        if disposition == .file {
            handle?.write(Data(bytes))
            bytesOnDisk += Int64(bytes.count)
        } else {
            memory.append(contentsOf: bytes)
        }
    }

    func finish() throws(ServerAPIError) -> ResponseBody {
        log.append("finish")
        guard disposition == .file else { return .data(memory) }
        try? handle?.close()
        try? FileManager.default.moveItem(at: target.partialURL, to: target.destination)
        return .file(target.destination, bytes: bytesOnDisk)
    }

    func abandon() {
        log.append("abandon \(bytesOnDisk)")
        try? handle?.close()
    }
}

@Suite("CurlTransport: downloads through a writer")
struct CurlDownloadTests {
    func transport(log: Recorder<String>, scripted: [DownloadFileWriter.Disposition] = []) -> CurlTransport {
        CurlTransport { target, _, _ in TestDownloadWriter(target: target, log: log, scripted: scripted) }
    }

    @Test("a download is written to disk as it arrives and the response points at the file")
    func toFile() async throws {
        try await CurlTestServer.with { server in
            try await withTemporaryDirectory { directory in
                let log = Recorder<String>()
                let progress = ProgressRecorder()
                let target = DownloadTarget(destination: directory.appendingPathComponent("file.bin"))
                let response = try await transport(log: log).perform(
                    TransportRequest(
                        url: server.url("/bytes/300000"), download: target, progress: progress.record))
                #expect(response.body == .file(target.destination, bytes: 300_000))
                #expect(try Data(contentsOf: target.destination) == patternBytes(300_000))
                #expect(log.all == ["prepare", "head 200", "finish"])
                #expect(
                    progress.reports(.download).last
                        == TransferProgress(direction: .download, completed: 300_000, total: 300_000))
                #expect(response.metrics.bytesReceived == 300_000)
            }
        }
    }

    @Test("an error status stays in memory and no file appears")
    func errorStatus() async throws {
        try await CurlTestServer.with { server in
            try await withTemporaryDirectory { directory in
                let log = Recorder<String>()
                let target = DownloadTarget(destination: directory.appendingPathComponent("file.bin"))
                let response = try await transport(log: log).perform(
                    TransportRequest(url: server.url("/status/404"), download: target))
                #expect(response.status == 404)
                #expect(response.body == .data(Data("status 404".utf8)))
                #expect(!FileManager.default.fileExists(atPath: target.destination.path))
            }
        }
    }

    @Test("a restart drops the response and sends the request the writer prepared again")
    func restart() async throws {
        try await CurlTestServer.with { server in
            try await withTemporaryDirectory { directory in
                let log = Recorder<String>()
                let target = DownloadTarget(destination: directory.appendingPathComponent("echo.json"))
                let response = try await transport(log: log, scripted: [.restart]).perform(
                    TransportRequest(url: server.url("/echo"), download: target))
                #expect(log.all == ["prepare", "head 200", "prepare", "head 200", "finish"])
                let echo = try JSONDecoder().decode(Echo.self, from: Data(contentsOf: target.destination))
                #expect(echo.values("X-Prepared") == ["2"])
                #expect(response.status == 200)
            }
        }
    }

    @Test("a followed redirect's head never reaches the writer")
    func redirect() async throws {
        try await CurlTestServer.with { server in
            try await withTemporaryDirectory { directory in
                let log = Recorder<String>()
                let target = DownloadTarget(destination: directory.appendingPathComponent("file.json"))
                let response = try await transport(log: log).perform(
                    TransportRequest(url: server.url("/redirect/2"), download: target))
                #expect(log.all == ["prepare", "head 200", "finish"])
                #expect(response.metrics.redirects == 2)
            }
        }
    }

    @Test("a cancelled download abandons the writer, which keeps what arrived")
    func cancelled() async throws {
        try await CurlTestServer.with { server in
            try await withTemporaryDirectory { directory in
                let log = Recorder<String>()
                let arrived = EventCounter()
                let transport = transport(log: log)
                let target = DownloadTarget(destination: directory.appendingPathComponent("file.bin"))
                let task = Task {
                    try await transport.perform(
                        TransportRequest(
                            url: server.url("/drip?bytes=500&seconds=60"), download: target,
                            progress: {
                                if $0.direction == .download, $0.completed > 0 { arrived.fire() }
                            }))
                }
                await arrived.wait()
                task.cancel()
                let error = await expectError { try await task.value }
                #expect(error?.kind == .cancelled)
                #expect(log.all.first == "prepare")
                #expect(log.all.last?.hasPrefix("abandon") == true)
                #expect(!log.all.contains("finish"))
                #expect(!FileManager.default.fileExists(atPath: target.destination.path))
                #expect(transport.activeTransferCount == 0)
            }
        }
    }

    @Test("with the core's DownloadFileWriter a download lands whole at its destination, an error body never does")
    func coreWriter() async throws {
        try await CurlTestServer.with { server in
            try await withTemporaryDirectory { directory in
                let transport = CurlTransport()
                let target = DownloadTarget(destination: directory.appendingPathComponent("file.bin"))
                let response = try await transport.perform(
                    TransportRequest(url: server.url("/bytes/250000"), download: target))
                #expect(response.body == .file(target.destination, bytes: 250_000))
                #expect(try Data(contentsOf: target.destination) == patternBytes(250_000))
                #expect(!FileManager.default.fileExists(atPath: target.partialURL.path))

                let missing = DownloadTarget(destination: directory.appendingPathComponent("missing.bin"))
                let notFound = try await transport.perform(
                    TransportRequest(url: server.url("/status/404"), download: missing))
                #expect(notFound.status == 404)
                #expect(notFound.body == .data(Data("status 404".utf8)))
                #expect(!FileManager.default.fileExists(atPath: missing.destination.path))
                #expect(!FileManager.default.fileExists(atPath: missing.partialURL.path))
            }
        }
    }
}
