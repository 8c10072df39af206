import Foundation
import Testing

/// `--pin`, `--cert`, `--key`, `--key-pass` and the TLS exit line, against an HTTPS server of the libcurl
/// tests' fixture (`curl_test_server.py`) with certificates its `make_test_certificates.sh` makes.
@Suite("sapi: TLS")
struct SapiTLSTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ServerAPICurlTests/Fixtures")

    /// Runs `body` with an HTTPS server for 127.0.0.1 (requiring a client certificate when asked) and the
    /// directory of its certificates.
    func withServer(requireClientCertificate: Bool = false, _ body: (String, URL) async throws -> Void)
        async throws
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/bin/bash")
        make.arguments = [Self.fixtures.appendingPathComponent("make_test_certificates.sh").path, directory.path]
        try make.run()
        await offThePool { make.waitUntilExit() }
        try #require(make.terminationStatus == 0)

        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments =
            [
                "python3", Self.fixtures.appendingPathComponent("curl_test_server.py").path,
                "--certfile", directory.appendingPathComponent("server.pem").path,
                "--keyfile", directory.appendingPathComponent("server.key").path,
            ]
            + (requireClientCertificate ? ["--client-ca", directory.appendingPathComponent("client-ca.pem").path] : [])
        let output = Pipe()
        let input = Pipe()  // the server exits when its stdin closes
        server.standardOutput = output
        server.standardInput = input
        try server.run()
        let reader = output.fileHandleForReading
        let line = await offThePool {
            var data = Data()
            while !data.contains(UInt8(ascii: "\n")) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                data.append(chunk)
            }
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var failure: (any Error)?
        do {
            let port = try #require(line.hasPrefix("PORT ") ? Int(line.dropFirst(5)) : nil, "server said \(line)")
            try await body("https://127.0.0.1:\(port)", directory)
        } catch {
            failure = error
        }
        server.terminate()
        try? input.fileHandleForWriting.close()
        await offThePool { server.waitUntilExit() }
        if let failure { throw failure }
    }

    /// Runs blocking work (waiting for a process or a pipe) on its own thread, off the cooperative pool
    /// that the tests running in parallel share.
    func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }

    func pin(_ directory: URL, _ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "--pin: the right pin answers, a wrong one exits 4 with a line naming the pin mismatch")
    func pins() async throws {
        try await withServer { base, directory in
            let ca = ["--insecure-ca", directory.appendingPathComponent("ca.pem").path]
            let right = try await SapiProcess.run(ca + ["--pin", try pin(directory, "server.pin"), "\(base)/echo"])
            #expect(right.code == 0, "\(right.stderr)")
            let wrong = try await SapiProcess.run(ca + ["--pin", try pin(directory, "backup.pin"), "\(base)/echo"])
            #expect(wrong.code == 4)
            #expect(wrong.stderr.hasPrefix("sapi: error: TLS pin mismatch: "), "\(wrong.stderr)")
            let untrusted = try await SapiProcess.run(["\(base)/echo"])
            #expect(untrusted.code == 4)
            #expect(untrusted.stderr.hasPrefix("sapi: error: TLS certificate not trusted: "), "\(untrusted.stderr)")
        }
    }

    @Test(
        "--cert and --key present a client certificate; without them the server's refusal exits 4")
    func clientCertificate() async throws {
        try await withServer(requireClientCertificate: true) { base, directory in
            let ca = ["--insecure-ca", directory.appendingPathComponent("ca.pem").path]
            let identity = [
                "--cert", directory.appendingPathComponent("client.pem").path,
                "--key", directory.appendingPathComponent("client-encrypted.key").path, "--key-pass", "test-passphrase",
            ]
            let accepted = try await SapiProcess.run(ca + identity + ["\(base)/whoami"])
            #expect(accepted.code == 0, "\(accepted.stderr)")
            #expect(accepted.text.contains("CN=ServerAPIKit Test Client"))
            let refused = try await SapiProcess.run(ca + ["\(base)/whoami"])
            #expect(refused.code == 4)
            #expect(refused.stderr.hasPrefix("sapi: error: TLS client certificate rejected: "), "\(refused.stderr)")
        }
    }

    @Test("a missing --cert file and the urlsession backend's refusal exit 1 with a clear line")
    func refusals() async throws {
        let missing = try await SapiProcess.run(["--cert", "/nonexistent/client.pem", "https://127.0.0.1:9/"])
        #expect(missing.code == 1)
        #expect(missing.stderr.contains("/nonexistent/client.pem"), "\(missing.stderr)")
        for option in [["--pin", "mx6zLy4JDCuIKsfDO3YIXY1XQdsGhHS7DaTIPXH0K/M="], ["--cert", "/etc/client.pem"]] {
            let outcome = try await SapiProcess.run(["--backend", "urlsession"] + option + ["https://127.0.0.1:9/"])
            #expect(outcome.code == 1)
            #expect(outcome.stderr.hasPrefix("sapi: error: URLSessionTransport cannot do "), "\(outcome.stderr)")
            #expect(outcome.stderr.contains("--backend curl"))
        }
    }
}
