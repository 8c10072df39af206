import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPIServiceLifecycle
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The manager as a swift-service-lifecycle service")
struct ServiceShutdownTests {
    @Test("the service runs until the graceful shutdown, then shuts the manager down", .timeLimit(.minutes(1)))
    func gracefulShutdownShutsDown() async throws {
        let manager = ServerAPIManager(transport: CurlTransport())
        let url = try TestServers.httpbin("/get")
        try await testGracefulShutdown { trigger in
            let service = Task { try await ServerAPIManagerService(manager, gracePeriod: .seconds(10)).run() }
            #expect(try await manager.send(ServerAPI(url: url)).status == 200)
            #expect(!manager.isShuttingDown)
            trigger.triggerGracefulShutdown()
            try await service.value
        }
        #expect(manager.isShuttingDown)
        let error = await expectServerAPIError { try await manager.send(ServerAPI(url: url)) }
        #expect(error?.kind == .shuttingDown)
    }

    @Test("a cancelled service shuts the manager down without a grace period", .timeLimit(.minutes(1)))
    func cancelledShutsDownAtOnce() async throws {
        let manager = ServerAPIManager(transport: CurlTransport())
        let hanging = Task {
            try await manager.send(ServerAPI(url: try TestServers.fixture("/hang?key=service-\(UUID().uuidString)")))
        }
        #expect(await poll { manager.inFlight.count == 1 })
        let service = Task { try await ServerAPIManagerService(manager, gracePeriod: .seconds(3600)).run() }
        service.cancel()
        try await service.value
        let error = await expectServerAPIError { try await hanging.value }
        #expect(error?.kind == .cancelled)
    }

    @Test(
        "SIGTERM to a server app drains its upstream calls: the slow ones finish, the endless one is cancelled",
        .timeLimit(.minutes(2)))
    func sigtermDrains() async throws {
        let probe = try ProbeProcess.start(environment: [
            "SAPI_FIXTURE_URL": try TestServers.fixture(), "PROBE_CALLS": "20", "PROBE_DELAY_MS": "1500",
            "PROBE_GRACE_MS": "\(Int(TestTiming.scale) * 8000)",
        ])
        await probe.ready.wait()
        #expect(probe.lines.contains("ready"), "the probe ended early: \(probe.lines)")
        kill(probe.process.processIdentifier, SIGTERM)
        await probe.exited.wait()
        let lines = probe.lines
        #expect(probe.process.terminationStatus == 0, "\(lines)")
        #expect(lines.filter { $0 == "slow ok 200" }.count == 20, "\(lines)")
        #expect(
            lines.contains(
                "hanging error cancelled: the call was cancelled: the manager shut down, and its grace "
                    + "period ended first"), "\(lines)")
        #expect(
            lines.contains("late error shutting down: the manager is shutting down: it takes no new calls"), "\(lines)")
        #expect(lines.last == "exited", "\(lines)")
    }
}

/// What a blocking read of a pipe returns next, or `nil` at its end (or on an error other than `EINTR`): `read(2)`,
/// retried on `EINTR`, since `FileHandle.availableData` ends the whole test process when a signal (a child's exit)
/// interrupts the read.
private func readChunk(_ reader: FileHandle) -> Data? {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(reader.fileDescriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        return count > 0 ? Data(buffer[..<count]) : nil
    }
}

/// `serverapi-service-probe`, started from the build folder the tests run from; its standard output read line by
/// line on a thread of its own.
final class ProbeProcess: Sendable {
    let process: Process
    /// Fires when the probe printed "ready", or ended.
    let ready = SignalCounter()
    /// Fires when the probe has exited and its output is read.
    let exited = SignalCounter()
    private let output = Mutex([String]())

    /// The lines printed so far.
    var lines: [String] { output.withLock { $0 } }

    private init(process: Process) { self.process = process }

    static func start(environment: [String: String]) throws -> ProbeProcess {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        var binary: URL?
        for _ in 0..<4 where binary == nil {
            let candidate = directory.appendingPathComponent("serverapi-service-probe")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { binary = candidate }
            directory = directory.deletingLastPathComponent()
        }
        guard let binary else {
            throw TestServers.Missing(
                description: "serverapi-service-probe was not found next to the tests: swift build")
        }
        let process = Process()
        process.executableURL = binary
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        let probe = ProbeProcess(process: process)
        try process.run()
        let reader = Thread {
            var pending = Data()
            let handle = pipe.fileHandleForReading
            while let data = readChunk(handle) {
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    probe.output.withLock { $0.append(line) }
                    if line == "ready" { probe.ready.fire() }
                }
            }
            process.waitUntilExit()
            probe.ready.fire()
            probe.exited.fire()
        }
        reader.start()
        return probe
    }
}
