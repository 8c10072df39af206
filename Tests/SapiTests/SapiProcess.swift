import Foundation
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

    /// The URL of a local test server, from `scripts/test.sh`.
    static func server(_ variable: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            throw TestFailure("\(variable) is not set: run the tests with scripts/test.sh, which starts the servers")
        }
        return value.hasSuffix("/") ? String(value.dropLast()) : value
    }

    static var httpbin: String { get throws { try server("SAPI_HTTPBIN_URL") } }
    static var fixture: String { get throws { try server("SAPI_FIXTURE_URL") } }

    /// Starts `sapi` with arguments; output goes to files so that no pipe can fill up.
    static func start(_ arguments: [String]) throws -> (Process, URL, URL) {
        let process = Process()
        process.executableURL = try binary
        process.arguments = arguments
        let directory = FileManager.default.temporaryDirectory
        let out = directory.appendingPathComponent("sapi-out-\(UUID().uuidString)")
        let err = directory.appendingPathComponent("sapi-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, out, err)
    }

    /// Waits for a started `sapi` (killing it after `limit`) and collects what it printed.
    static func finish(_ started: (Process, URL, URL), limit: Duration = .seconds(60)) async throws -> Outcome {
        let (process, out, err) = started
        let deadline = ContinuousClock.now + limit
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                throw TestFailure("sapi did not finish within \(limit)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        return Outcome(
            code: process.terminationStatus, stdout: try Data(contentsOf: out),
            stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }

    /// Runs `sapi` to its end.
    static func run(_ arguments: [String]) async throws -> Outcome {
        try await finish(start(arguments))
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
