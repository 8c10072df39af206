import Foundation
import ServerAPITestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `sapi` binary as a user would, against the local test servers.
enum SapiProcess {
    struct Outcome {
        var code: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
        var json: Any? { try? JSONSerialization.jsonObject(with: stdout, options: [.fragmentsAllowed]) }
    }

    /// The `sapi` executable next to the test binary.
    static var binary: URL {
        get throws {
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
                .deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("sapi")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                directory = directory.deletingLastPathComponent()
            }
            throw TestFailure("the sapi binary was not found next to the tests: build it with `swift build`")
        }
    }

    /// httpbin's base URL, from `scripts/test.sh`.
    static var httpbin: String { get throws { try TestServers.httpbin() } }
    /// The fault fixture server's base URL, from `scripts/test.sh`.
    static var fixture: String { get throws { try TestServers.fixture() } }

    /// Starts `sapi` with arguments (in `directory`, when given); output goes to files so that no pipe can
    /// fill up. Standard input is `input` (a file, so never a terminal), else the pipe `stdin` (which the test
    /// writes to, and closes for the end of input), else `inputHandle`, else empty; `environment` is added to this
    /// process's. `executable` runs in place of the built `sapi`.
    static func start(
        _ arguments: [String], input: Data? = nil, stdin: Pipe? = nil, inputHandle: FileHandle? = nil,
        environment: [String: String] = [:], in directory: URL? = nil, executable: URL? = nil
    ) async throws -> (FixtureProcess, URL, URL) {
        let workingDirectory = directory
        let directory = FileManager.default.temporaryDirectory
        let out = directory.appendingPathComponent("sapi-out-\(UUID().uuidString)")
        let err = directory.appendingPathComponent("sapi-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = try await FixtureProcess.launch(try executable ?? binary, arguments) { process in
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardError = try FileHandle(forWritingTo: err)
            if let input {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-in-\(UUID().uuidString)")
                try input.write(to: file)
                process.standardInput = try FileHandle(forReadingFrom: file)
                // The open handle keeps the bytes readable; the name is not needed any more.
                try FileManager.default.removeItem(at: file)
            } else if let stdin {
                process.standardInput = stdin
            } else if let inputHandle {
                process.standardInput = inputHandle
            } else {
                process.standardInput = FileHandle.nullDevice
            }
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        }
        return (process, out, err)
    }

    /// Waits for a started `sapi` to exit (terminating it after `limit`) and collects what it printed.
    static func finish(_ started: (FixtureProcess, URL, URL), limit: Duration = .seconds(60)) async throws -> Outcome {
        let (process, out, err) = started
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let code = try await process.exitStatus(within: limit)
        return Outcome(
            code: code, stdout: try Data(contentsOf: out),
            stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }

    /// Runs `sapi` (or `executable`) to its end (in `directory`, when given).
    static func run(
        _ arguments: [String], input: Data? = nil, environment: [String: String] = [:], in directory: URL? = nil,
        executable: URL? = nil
    ) async throws -> Outcome {
        try await finish(
            await start(arguments, input: input, environment: environment, in: directory, executable: executable))
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
