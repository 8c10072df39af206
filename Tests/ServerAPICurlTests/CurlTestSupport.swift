import Foundation
import ServerAPIKit
import Testing

/// A running `Fixtures/curl_test_server.py`: one per test, on a free loopback port.
struct TestServer: Sendable {
    /// The port it listens on.
    let port: Int
    /// `http://127.0.0.1:PORT` (or https).
    let base: String

    /// A URL on this server.
    func url(_ path: String) -> URL { URL(string: base + path)! }

    /// A URL on this server, addressed by another host name (`localhost`): another origin.
    func otherHostURL(_ path: String) -> URL {
        URL(string: base.replacingOccurrences(of: "127.0.0.1", with: "localhost") + path)!
    }
}

enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    /// Runs `body` with a fresh server, which is stopped afterwards whatever happens.
    ///
    /// Waiting for the server to start and to stop happens off Swift's cooperative threads: tests run in
    /// parallel, and blocking those threads would delay every other test's continuations.
    /// - Parameters:
    ///   - tls: The server's certificate and key, for HTTPS.
    ///   - clientCA: With `tls`: the CA that client certificates must be signed by; the server then
    ///     requires one.
    static func withServer<T>(
        tls: (certificate: URL, key: URL)? = nil, clientCA: URL? = nil, _ body: (TestServer) async throws -> T
    ) async throws -> T {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", directory.appendingPathComponent("curl_test_server.py").path]
        if let tls { arguments += ["--certfile", tls.certificate.path, "--keyfile", tls.key.path] }
        if let clientCA { arguments += ["--client-ca", clientCA.path] }
        process.arguments = arguments
        let output = Pipe()
        // The server exits when its stdin closes: also when this test process dies.
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        let exited = Signal()
        process.terminationHandler = { _ in exited.fire() }
        try process.run()
        func stop() async {
            process.terminate()
            try? input.fileHandleForWriting.close()
            await exited.wait()
        }
        let reader = output.fileHandleForReading
        let line = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
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
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            await stop()
            throw ServerAPIError(.cannotConnect, "the test server did not start: \(line)")
        }
        let scheme = tls == nil ? "http" : "https"
        do {
            let result = try await body(TestServer(port: port, base: "\(scheme)://127.0.0.1:\(port)"))
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }

    /// A temporary directory removed after `body`.
    static func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "curl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }
}

/// What `/echo` answers: the request exactly as the server read it.
struct Echo: Decodable {
    var method: String
    var path: String
    var query: String
    var headers: [[String]]
    var body: String
    var bodyLength: Int

    enum CodingKeys: String, CodingKey {
        case method, path, query, headers, body
        case bodyLength = "body_length"
    }

    init(_ response: TransportResponse) throws {
        self = try JSONDecoder().decode(Echo.self, from: response.data ?? Data())
    }

    var bodyBytes: Data { Data(base64Encoded: body) ?? Data() }

    /// Every value of a header, compared case-insensitively.
    func values(_ name: String) -> [String] {
        headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap { $0.last }
    }

    var headerNames: [String] { headers.compactMap { $0.first?.lowercased() } }
}

/// Bytes `i % 251`, as `/bytes/N` sends them.
func patternBytes(_ count: Int) -> Data { Data((0..<count).map { UInt8($0 % 251) }) }

/// Deterministic pseudo-random bytes (every byte value, NULs included).
func noiseBytes(_ count: Int, seed: UInt64 = 42) -> Data {
    var state = seed
    var data = Data(count: count)
    for index in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        data[index] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return data
}

/// Runs `body` and returns the `ServerAPIError` it threw; records an issue when it threw nothing or another error.
func expectError(
    _ body: () async throws -> some Any, sourceLocation: SourceLocation = #_sourceLocation
) async -> ServerAPIError? {
    do {
        _ = try await body()
        Issue.record("expected an error, got a result", sourceLocation: sourceLocation)
        return nil
    } catch let error as ServerAPIError {
        return error
    } catch {
        Issue.record("expected a ServerAPIError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A one-shot signal a callback on any thread fires and a test awaits, without sleeping.
final class Signal: Sendable {
    private let state = Locked<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var hasFired: Bool { state.withLock { $0.fired } }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let fired = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if fired { continuation.resume() }
        }
    }
}

/// A thread-safe list of progress reports.
final class ProgressLog: Sendable {
    private let reports = Locked<[TransferProgress]>([])
    func append(_ report: TransferProgress) { reports.withLock { $0.append(report) } }
    var all: [TransferProgress] { reports.withLock { $0 } }
    func of(_ direction: TransferProgress.Direction) -> [TransferProgress] { all.filter { $0.direction == direction } }
}
