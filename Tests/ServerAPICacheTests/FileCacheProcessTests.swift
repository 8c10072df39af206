import Foundation
import ServerAPIFileCache
import ServerAPIKit
import ServerAPITestSupport
import Testing

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
            configuration: .init(sizeLimit: 1 << 30, defaultTTL: nil, synchronizesWrites: false))
        switch Self.childTask {
        case "store":
            for (index, size) in Self.sizes.enumerated() {
                try await cache.store(
                    makeEntry(size: size, seed: UInt8(index), expiresAt: .distantFuture), for: .test("k\(index)"))
            }
        case "churn":
            // Stores until killed (bounded, should the parent die first), saying so after each store.
            for step in 0..<5_000 {
                let seed = UInt8(step % 200)
                try await cache.store(makeEntry(size: 2 << 20, seed: seed), for: .test("k\(step % 4)"))
                // Written straight to the pipe, unbuffered.
                FileHandle.standardOutput.write(Data("CHILD-STORED \(step)\n".utf8))
            }
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

    @Test("a writer process killed mid-write never leaves an entry that reads back wrong", .enabled(if: canRunItself))
    func killedWriter() async throws {
        try await withTemporaryDirectory { directory in
            let child = try Child(task: "churn", directory: directory)
            await child.waitForLines(containing: "CHILD-STORED", count: 6)
            child.kill()
            _ = await child.exit()

            let cache = FileCache(directory: directory)
            var found = 0
            for index in 0..<4 {
                guard let entry = await cache.lookup(.test("k\(index)")) else { continue }
                found += 1
                let seed = entry.headers["X-Seed"].flatMap { UInt8($0) }
                #expect(seed != nil)
                #expect(entry.body == makeEntry(size: 2 << 20, seed: seed ?? 0).body)
            }
            #expect(found == 4)
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
        // The handler holds the child until the pipe closes, then lets go.
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                self.lines.continuation.finish()
                return
            }
            self.output.withLock { $0.append(data) }
            self.lines.continuation.yield()
        }
        try process.run()
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
