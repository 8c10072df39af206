import Foundation
import ServerAPICurl
import ServerAPIKit
import Testing

/// A running `Tests/Fixtures/forward_proxy.py`: one per test, on a free loopback port.
struct ProxyServer: Sendable {
    /// The port it listens on.
    let port: Int
    /// `http://127.0.0.1:PORT` (or https).
    let base: String

    /// What went through the proxy so far.
    struct Stats: Decodable, Equatable {
        var forwarded: Int
        var tunnels: Int
        var rejected: Int
    }

    /// Asks the proxy (directly, never through itself) what it has forwarded.
    func stats() async throws -> Stats {
        let transport = CurlTransport(configuration: .init(insecureHosts: ["127.0.0.1"]))
        let response = try await transport.perform(TransportRequest(url: URL(string: base + "/__proxy/stats")!))
        return try JSONDecoder().decode(Stats.self, from: response.data ?? Data())
    }
}

enum ProxyFixture {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/forward_proxy.py")

    /// Runs `body` with a fresh proxy, stopped afterwards whatever happens.
    /// - Parameters:
    ///   - user: `NAME:PASSWORD` the proxy demands (407 otherwise); `nil` for an open proxy.
    ///   - tls: A certificate and key: the proxy itself speaks TLS.
    static func withProxy<T>(
        user: String? = nil, tls: (certificate: URL, key: URL)? = nil, _ body: (ProxyServer) async throws -> T
    ) async throws -> T {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", script.path]
        if let user { arguments += ["--user", user] }
        if let tls { arguments += ["--certfile", tls.certificate.path, "--keyfile", tls.key.path] }
        process.arguments = arguments
        let output = Pipe()
        // The proxy exits when its stdin closes: also when this test process dies.
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
        // Read off the cooperative pool: tests run in parallel.
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
            throw ServerAPIError(.cannotConnect, "the proxy fixture did not start: \(line)")
        }
        let scheme = tls == nil ? "http" : "https"
        do {
            let result = try await body(ProxyServer(port: port, base: "\(scheme)://127.0.0.1:\(port)"))
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }
}
