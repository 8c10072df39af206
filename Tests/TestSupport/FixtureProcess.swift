import Foundation
import Testing

/// A helper process that a test launches (a fixture server, a certificate script, a built executable),
/// whose exit the test awaits as an event, never by polling.
///
/// - Important: On Linux, swift-corelibs-foundation keeps a `Process` that has a termination handler, its
///   `Pipe`s and what the handler captures in a reference cycle, so they are never freed.
///   `scripts/leak-report.py` recognises those records by this type's symbol names and lists them
///   apart from the library's leaks: rename this type or move it, and update the script's patterns.
public final class FixtureProcess: Sendable {
    #if canImport(Darwin)
        // Apple's `Process` is not declared `Sendable` (swift-corelibs-foundation's is, `@unchecked`): after
        // launch this type only reads its id and, once it exited, its status, and sends it `terminate()`.
        private nonisolated(unsafe) let process: Process
    #else
        private let process: Process
    #endif
    private let exited: EventCounter

    /// Launches `executable` with `arguments`.
    /// - Parameters:
    ///   - executable: The program to run.
    ///   - arguments: Its arguments.
    ///   - configure: Sets up the process before it starts: standard streams, environment.
    /// - Throws: When the process cannot be launched, or what `configure` throws.
    public init(_ executable: URL, _ arguments: [String], configure: (Process) throws -> Void = { _ in }) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        try configure(process)
        let exited = EventCounter()
        process.terminationHandler = { _ in exited.fire() }
        try process.run()
        self.process = process
        self.exited = exited
    }

    /// The process's id, for signals a test sends it.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Asks the process to end (SIGTERM); its exit is awaited with `exitStatus()`.
    public func terminate() { process.terminate() }

    /// Waits until the process exited.
    /// - Returns: Its exit status.
    /// - Important: Cancellation does not end this wait: the status of a process that still runs cannot
    ///   be read, and a fixture has to be gone before its test ends.
    public func exitStatus() async -> Int32 {
        let exited = self.exited
        // A task of its own, which the caller's cancellation does not reach (EventCounter's waits end when
        // their task is cancelled).
        await Task { await exited.wait() }.value
        return process.terminationStatus
    }

    /// Waits at most `limit` for the process to exit; terminates it when it did not.
    /// - Parameter limit: How long the process may still run.
    /// - Returns: Its exit status.
    /// - Throws: `Failure` when the process was still running after `limit` (it is then terminated and
    ///   reaped), or when the waiting task was cancelled.
    public func exitStatus(within limit: Duration) async throws -> Int32 {
        let exited = self.exited
        // The sleep is the time limit, not synchronisation: whichever ends first ends both.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await exited.wait() }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
        guard exited.count > 0 else {
            terminate()
            // Bounded too: Foundation's Process has been seen to miss a child's exit altogether (a zombie under
            // ThreadSanitizer), and an unbounded wait here would hang the whole run instead of failing one test.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await exited.wait() }
                group.addTask { try? await Task.sleep(for: .seconds(10)) }
                await group.next()
                group.cancelAll()
            }
            throw Failure(description: "\(process.executableURL?.path ?? "the process") did not exit within \(limit)")
        }
        return process.terminationStatus
    }

    /// Runs `executable` to its end.
    /// - Parameters:
    ///   - executable: The program to run, such as `/bin/bash`.
    ///   - arguments: Its arguments.
    /// - Throws: When it cannot be launched; records an issue and throws when it exits with a status
    ///   other than 0.
    public static func run(_ executable: URL, _ arguments: [String]) async throws {
        let status = try await FixtureProcess(executable, arguments).exitStatus()
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
        let server = try FixtureProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path] + arguments) {
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
                while !data.contains(UInt8(ascii: "\n")) {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    data.append(chunk)
                }
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }.start()
        }
    }

    /// A fixture process that did not start or did not end as the test needs.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }
}
