import Foundation
import ServerAPIKit
import Testing

/// An HTTPS server for the TLS cases: the libcurl tests' fixture server (`curl_test_server.py`) with
/// certificates that its `make_test_certificates.sh` makes in a temporary directory for each test. The
/// certificates are signed by a throw-away CA that no transport trusts unless told.
struct TLSTestServer: Sendable {
    /// `https://127.0.0.1:PORT`.
    let base: String
    /// The directory holding the certificates (`ca.pem`, `server.pin`, …).
    let certificates: URL

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ServerAPICurlTests/Fixtures")


    /// A URL on the server.
    func url(_ path: String) throws -> URL { try #require(URL(string: base + path)) }

    /// A certificate file of the set.
    func file(_ name: String) -> URL { certificates.appendingPathComponent(name) }

    /// The base64 SHA-256 pin in `name` (`"server.pin"`, `"backup.pin"`).
    func pin(_ name: String) throws -> String {
        let pin = try String(contentsOf: file(name), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(Data(base64Encoded: pin)?.count == 32)
        return pin
    }

    /// Runs `body` with a server presenting `certificate` (`"server"`: for 127.0.0.1), stopped afterwards.
    static func with(certificate: String = "server", _ body: (TLSTestServer) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await run("/bin/bash", [fixtures.appendingPathComponent("make_test_certificates.sh").path, directory.path])

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", fixtures.appendingPathComponent("curl_test_server.py").path,
            "--certfile", directory.appendingPathComponent("\(certificate).pem").path,
            "--keyfile", directory.appendingPathComponent("\(certificate).key").path,
        ]
        let output = Pipe()
        let input = Pipe()  // the server exits when its stdin closes: also when this process dies
        process.standardOutput = output
        process.standardInput = input
        let exited = Signal()
        process.terminationHandler = { _ in exited.fire() }
        try process.run()
        let reader = output.fileHandleForReading
        // Read the "PORT n" line off the cooperative pool: tests run in parallel.
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
        var failure: (any Error)?
        if line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)) {
            do {
                try await body(TLSTestServer(base: "https://127.0.0.1:\(port)", certificates: directory))
            } catch {
                failure = error
            }
        } else {
            failure = ServerAPIError(.cannotConnect, "the TLS test server did not start: \(line)")
        }
        process.terminate()
        try? input.fileHandleForWriting.close()
        await exited.wait()
        if let failure { throw failure }
    }

    private static func run(_ executable: String, _ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let exited = Signal()
        process.terminationHandler = { _ in exited.fire() }
        try process.run()
        await exited.wait()
        try #require(process.terminationStatus == 0, "\(executable) \(arguments) failed")
    }
}
