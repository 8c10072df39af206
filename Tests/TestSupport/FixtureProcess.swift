import Foundation
@_spi(Backend) import ServerAPIKit
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A helper process that a test launches (a fixture server, a certificate script, a built executable),
/// whose exit the test awaits as an event, never by polling.
///
/// The exit is seen by a thread of this type's own that waits for the child with `waitpid`, not only by
/// Foundation: on Linux, swift-corelibs-foundation's `Process` learns of an exit when a socket the child
/// inherited reaches its end, so a grandchild that keeps that socket (a crashing child's crash reporter, a
/// daemon it forks) hides the exit, and the child stays a zombie that nobody reaps.
///
/// - Important: On Linux, swift-corelibs-foundation keeps a `Process` that has a termination handler, its
///   `Pipe`s and what the handler captures in a reference cycle, so they are never freed.
///   `scripts/leak-report.py` recognises those records by this type's symbol names and lists them
///   apart from the library's leaks: rename this type or move it, and update the script's patterns.
public final class FixtureProcess: Sendable {
    /// Who knows the child's exit status.
    private struct Exit {
        /// The status, once known: the exit code, or the signal that ended the child.
        var status: Int32?
        /// What Foundation reported, which is the status only when Foundation reaped the child itself.
        var foundationStatus: Int32?
        /// The reaper found the child already reaped (by Foundation): Foundation's status is the one.
        var reapedByFoundation = false
    }

    #if canImport(Darwin)
        // Apple's `Process` is not declared `Sendable` (swift-corelibs-foundation's is, `@unchecked`): after
        // launch this type only reads its id and path.
        private nonisolated(unsafe) let process: Process
    #else
        private let process: Process
    #endif
    private let exit: Locked<Exit>
    private let exited: EventCounter

    /// Launches `executable` with `arguments`.
    /// - Parameters:
    ///   - executable: The program to run.
    ///   - arguments: Its arguments.
    ///   - configure: Sets up the process before it starts: standard streams, environment.
    /// - Returns: The running process.
    /// - Throws: When the process cannot be launched, or what `configure` throws.
    /// - Important: The launch (`Process.run()`, a `posix_spawn` that takes tens of milliseconds here) runs on a
    ///   thread of its own: tests run in parallel on a cooperative pool of one thread per core, and a test that
    ///   launches processes on it held back every other test's continuations, past their time limits.
    public static func launch(
        _ executable: URL, _ arguments: [String], configure: (Process) throws -> Void = { _ in }
    ) async throws -> FixtureProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        try configure(process)
        let exit = Locked(Exit())
        let exited = EventCounter()
        process.terminationHandler = { process in
            let status = process.terminationStatus
            let known = exit.withLock { exit -> Bool in
                exit.foundationStatus = status
                guard exit.status == nil, exit.reapedByFoundation else { return false }
                exit.status = status
                return true
            }
            if known { exited.fire() }
        }
        #if canImport(Darwin)
            nonisolated(unsafe) let launched = process
        #else
            let launched = process
        #endif
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread { continuation.resume(with: Result { try launched.run() }) }.start()
        }
        reap(process.processIdentifier, into: exit, exited: exited)
        return FixtureProcess(process: process, exit: exit, exited: exited)
    }

    private init(process: Process, exit: Locked<Exit>, exited: EventCounter) {
        self.process = process
        self.exit = exit
        self.exited = exited
    }

    /// Waits for the child's exit on a thread of its own (blocking in `waitpid`), and records its status.
    ///
    /// Foundation waits for the same child. Whichever reaps it first has the status: when Foundation did,
    /// `waitpid` answers `ECHILD` and Foundation's termination handler (called after Foundation stored
    /// the status) gives it; when this thread did, Foundation's own `waitpid` fails and its status (0) is
    /// ignored.
    private static func reap(_ pid: Int32, into exit: Locked<Exit>, exited: EventCounter) {
        Thread {
            var raw: Int32 = 0
            var result: Int32
            repeat { result = waitpid(pid, &raw, 0) } while result == -1 && errno == EINTR
            let known = exit.withLock { exit -> Bool in
                if result == pid {
                    // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import.
                    let signal = raw & 0x7f
                    exit.status = signal != 0 ? signal : (raw >> 8) & 0xff
                    return true
                }
                exit.reapedByFoundation = true
                guard let status = exit.foundationStatus else { return false }
                exit.status = status
                return true
            }
            if known { exited.fire() }
        }.start()
    }

    /// The process's id, for signals a test sends it.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// The exit status, once the process exited.
    private var status: Int32? { exit.withLock { $0.status } }

    /// Asks the process to end (SIGTERM); its exit is awaited with `exitStatus()`.
    public func terminate() { send(SIGTERM) }

    /// Sends `signal` while the process has not been reaped (after that its id may name another process).
    private func send(_ signal: Int32) {
        let pid = process.processIdentifier
        exit.withLock { exit in
            if exit.status == nil { _ = kill(pid, signal) }
        }
    }

    /// Waits until the process exited.
    /// - Returns: Its exit status (the signal's number when a signal ended it).
    /// - Important: Cancellation does not end this wait: the status of a process that still runs cannot
    ///   be read, and a fixture has to be gone before its test ends.
    public func exitStatus() async -> Int32 {
        let exited = self.exited
        // A task of its own, which the caller's cancellation does not reach (EventCounter's waits end when
        // their task is cancelled).
        await Task { await exited.wait() }.value
        return status ?? -1
    }

    /// Waits at most `limit` for the process to exit; ends it when it did not.
    /// - Parameter limit: How long the process may still run.
    /// - Returns: Its exit status (the signal's number when a signal ended it).
    /// - Throws: `Failure` when the process was still running after `limit` (it is then terminated, killed
    ///   if it ignores that, and reaped).
    public func exitStatus(within limit: Duration) async throws -> Int32 {
        guard await waitForExit(within: limit) else {
            terminate()
            // Bounded: a child that ignores SIGTERM is killed, so that one test fails instead of the run hanging.
            if await !waitForExit(within: .seconds(10)) {
                send(SIGKILL)
                _ = await waitForExit(within: .seconds(10))
            }
            throw Failure(description: "\(process.executableURL?.path ?? "the process") did not exit within \(limit)")
        }
        return status ?? -1
    }

    /// Waits for the exit, at most `limit`.
    /// - Returns: Whether the process exited.
    private func waitForExit(within limit: Duration) async -> Bool {
        let exited = self.exited
        // The sleep is the time limit, not synchronisation: whichever ends first ends both.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await exited.wait() }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
        return exited.count > 0
    }

    /// Runs `executable` to its end.
    /// - Parameters:
    ///   - executable: The program to run, such as `/bin/bash`.
    ///   - arguments: Its arguments.
    /// - Throws: When it cannot be launched; records an issue and throws when it exits with a status
    ///   other than 0.
    public static func run(_ executable: URL, _ arguments: [String]) async throws {
        let status = try await FixtureProcess.launch(executable, arguments).exitStatus()
        try #require(status == 0, "\(executable.path) \(arguments.joined(separator: " ")) exited with \(status)")
    }

    /// Runs `body` with a fixture server that a Python script starts, stopped afterwards whatever happens.
    ///
    /// The script must listen on a free loopback port, print `PORT n` as its first line once it listens,
    /// and exit when its standard input closes (so that it also ends when the test process dies).
    /// - Parameters:
    ///   - script: The script, run with `python3` from the `PATH`.
    ///   - arguments: The script's arguments.
    ///   - body: Work that gets the server's port.
    /// - Returns: What `body` returns.
    /// - Throws: `Failure` when the server did not start, or what `body` throws.
    /// - Important: Waiting for the port line happens on a thread of its own: tests run in parallel, and
    ///   blocking a cooperative thread would delay every other test's continuations.
    public static func withServer<T>(
        script: URL, arguments: [String] = [], _ body: (Int) async throws -> T
    ) async throws -> T {
        let output = Pipe()
        let input = Pipe()
        let server = try await FixtureProcess.launch(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path] + arguments
        ) {
            $0.standardOutput = output
            $0.standardInput = input
        }
        func stop() async {
            server.terminate()
            try? input.fileHandleForWriting.close()
            _ = await server.exitStatus()
        }
        let line = await firstLine(of: output.fileHandleForReading)
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            await stop()
            throw Failure(description: "\(script.lastPathComponent) did not start: \(line)")
        }
        do {
            let result = try await body(port)
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }

    /// Reads up to the first newline (or the end) on a thread of its own.
    private static func firstLine(of reader: FileHandle) async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            Thread {
                var data = Data()
                while !data.contains(UInt8(ascii: "\n")), let chunk = readChunk(reader) { data.append(chunk) }
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }.start()
        }
    }

    /// What a blocking read of a pipe returns next, or `nil` at its end (or on an error other than `EINTR`).
    ///
    /// `read(2)` is retried on `EINTR`: a signal to the test process (a child's exit) interrupts a blocked read,
    /// and `FileHandle.availableData` ends the whole test process on that error instead of reading again.
    public static func readChunk(_ reader: FileHandle) -> Data? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(reader.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            return count > 0 ? Data(buffer[..<count]) : nil
        }
    }

    /// A fixture process that did not start or did not end as the test needs.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }
}
