import Foundation
@_spi(Backend) import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPIFileCache

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Other processes on the same directory: this test binary runs itself as the child, with only
/// the `childProcess` test selected and its task in the environment.
@Suite struct FileCacheProcessTests {
    static let environment = ProcessInfo.processInfo.environment
    static let childDirectory = environment["SERVERAPI_CACHE_CHILD_DIRECTORY"]
    static let childTask = environment["SERVERAPI_CACHE_CHILD_TASK"] ?? ""

    static let sizes = [10, 5_000, 70_000, 300_000]

    /// Whether this process is the test binary itself (so it can run itself): `swift test` on Linux.
    static let canRunItself: Bool = {
        #if os(Linux)
            CommandLine.arguments.first?.hasSuffix(".xctest") == true
        #else
            false
        #endif
    }()

    @Test("child process side (runs only when started by the tests below)", .enabled(if: childDirectory != nil))
    func childProcess() async throws {
        let cache = FileCache(
            directory: URL(fileURLWithPath: Self.childDirectory ?? ""),
            configuration: .init(sizeLimit: 1 << 30, synchronizesWrites: false))
        switch Self.childTask {
        case "store":
            for (index, size) in Self.sizes.enumerated() {
                try await cache.store(
                    makeEntry(size: size, seed: UInt8(index), expiresAt: .distantFuture), for: .test("k\(index)"))
            }
        case "midwrite":
            // Four entries stored whole, then a new version of k1 stopped half-written: the parent kills
            // this process at that point, which the line below tells it has been reached.
            for index in 0..<4 {
                try await cache.store(makeEntry(size: 2 << 20, seed: UInt8(index)), for: .test("k\(index)"))
            }
            let stopped = FileCache(
                directory: URL(fileURLWithPath: Self.childDirectory ?? ""), configuration: cache.configuration,
                now: { Date() }, trustDelay: 1,
                midWriteHook: {
                    FileHandle.standardOutput.write(Data("CHILD-MIDWRITE\n".utf8))
                    // Waits here to be killed (bounded, should the parent die first).
                    sleep(120)
                })
            try await stopped.store(makeEntry(size: 2 << 20, seed: 99), for: .test("k1"))
        default:
            Issue.record("unknown child task \(Self.childTask)")
        }
    }

    @Test("entries stored by another process are read after it exits", .enabled(if: canRunItself))
    func restartAcrossProcesses() async throws {
        try await withTemporaryDirectory { directory in
            let child = try Child(task: "store", directory: directory)
            let status = await child.exit()
            #expect(status == 0)
            let cache = FileCache(directory: directory)
            for (index, size) in Self.sizes.enumerated() {
                let entry = await cache.lookup(.test("k\(index)"))
                #expect(
                    entry
                        == makeEntry(size: size, seed: UInt8(index), expiresAt: .distantFuture).with(
                            storedAt: entry?.storedAt))
            }
        }
    }

    @Test("a writer process killed mid-write leaves the entry it was replacing, whole", .enabled(if: canRunItself))
    func killedWriter() async throws {
        try await withTemporaryDirectory { directory in
            let child = try Child(task: "midwrite", directory: directory)
            // The child says when it is half-way through writing k1's new file; the kill lands there.
            await child.waitForLines(containing: "CHILD-MIDWRITE", count: 1)
            child.kill()
            _ = await child.exit()

            let cache = FileCache(directory: directory)
            for index in 0..<4 {
                // k1 is still the version stored whole: the half-written one was never renamed into place.
                let entry = await cache.lookup(.test("k\(index)"))
                #expect(entry?.headers["X-Seed"] == "\(index)", "k\(index)")
                #expect(entry?.body == makeEntry(size: 2 << 20, seed: UInt8(index)).body)
            }
            // The half-written file is still there, under a temporary name no lookup reads.
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                .filter { $0.hasPrefix(FileCache.temporaryPrefix) }
            #expect(leftovers.count == 1, "\(leftovers)")
            // Whatever the kill left behind, the cache still stores and reads.
            let entry = makeEntry(size: 1_000, seed: 9, expiresAt: .distantFuture)
            try await cache.store(entry, for: .test("after"))
            #expect(await cache.lookup(.test("after")) == entry)
        }
    }
}

extension CacheEntry {
    /// A copy with another `storedAt` (when given).
    func with(storedAt date: Date?) -> CacheEntry {
        var copy = self
        if let date { copy.storedAt = date }
        return copy
    }
}

/// This test binary, run again as a child process with one task.
final class Child: Sendable {
    private let process: Process
    private let output = Locked(Data())
    private let lines = AsyncStream<Void>.makeStream()
    private let exited: AsyncStream<Int32>

    init(task: String, directory: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--testing-library", "swift-testing", "--filter", "childProcess"]
        var environment = ProcessInfo.processInfo.environment
        environment["SERVERAPI_CACHE_CHILD_DIRECTORY"] = directory.path
        environment["SERVERAPI_CACHE_CHILD_TASK"] = task
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let (exited, exit) = AsyncStream<Int32>.makeStream()
        self.exited = exited
        self.process = process
        process.terminationHandler = { process in
            exit.yield(process.terminationStatus)
            exit.finish()
        }
        try process.run()
        // The output is read by a blocking thread of its own until the pipe closes, not by a `readabilityHandler`:
        // Foundation on Linux cancels that handler's Dispatch source asynchronously and closes the descriptor when the
        // handle goes away, so Dispatch can be left watching a descriptor that is closed or reused — the suspected
        // cause of a crash in `_dispatch_event_loop_drain` seen once in a release run of the cache suites.
        let reader = pipe.fileHandleForReading
        let (output, lines) = (output, lines.continuation)
        Thread {
            while let data = FixtureProcess.readChunk(reader) {
                output.withLock { $0.append(data) }
                lines.yield()
            }
            lines.finish()
        }.start()
    }

    /// Waits until the child has printed `count` lines containing `marker` (or its output ends).
    func waitForLines(containing marker: String, count: Int) async {
        for await _ in lines.stream {
            let text = output.withLock { String(decoding: $0, as: UTF8.self) }
            if text.components(separatedBy: "\n").filter({ $0.contains(marker) }).count >= count { return }
        }
    }

    /// Kills the child at once (SIGKILL: no chance to clean up).
    func kill() {
        sendKill(process.processIdentifier)
    }

    /// Waits for the child to end.
    /// - Returns: Its exit status (or signal number).
    func exit() async -> Int32 {
        for await status in exited { return status }
        return process.terminationStatus
    }
}

/// Sends SIGKILL to a process.
private func sendKill(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}
