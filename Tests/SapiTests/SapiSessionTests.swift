import Foundation
import ServerAPIKit
import Testing

@testable import SapiCommand

/// `sapi --session`: cookies kept in a file between runs.
@Suite("sapi sessions")
struct SapiSessionTests {
    @Test("two runs share a session's cookies", arguments: ["curl", "urlsession"])
    func shared(backend: String) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-session-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("session.json").path
        let set = try await SapiProcess.run([
            "--backend", backend, "--session", file, "\(try SapiProcess.httpbin)/cookies/set?team=blue",
        ])
        #expect(set.code == 0, "\(set.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let shown = try await SapiProcess.run([
            "--backend", backend, "--session", file, "\(try SapiProcess.httpbin)/cookies", "--key-path", "cookies",
        ])
        #expect(shown.code == 0, "\(shown.stderr)")
        #expect(shown.json as? [String: String] == ["team": "blue"])
        let without = try await SapiProcess.run([
            "--backend", backend, "\(try SapiProcess.httpbin)/cookies", "--key-path", "cookies",
        ])
        #expect(without.json as? [String: String] == [:])
    }

    @Test("a named session lives under the config folder, by host and port")
    func namedFile() throws {
        let home = ["HOME": "/home/u"]
        #expect(
            try Composition.sessionFile("work", url: "http://api.test:8080/x", environment: home).path
                == "/home/u/.config/sapi/sessions/api.test_8080/work.json")
        #expect(
            try Composition.sessionFile("me", url: "example.com/a", environment: ["XDG_CONFIG_HOME": "/cfg"]).path
                == "/cfg/sapi/sessions/example.com/me.json")
        #expect(try Composition.sessionFile("./s.json", url: "x.test", environment: home).path.hasSuffix("/s.json"))
        #expect(throws: UsageError.self) { try Composition.sessionFile("..", url: "x.test", environment: home) }
    }
}

/// `sapi --unix-socket`: a call through httpbin's socket.
@Suite("sapi Unix sockets")
struct SapiUnixSocketTests {
    @Test("--unix-socket reaches httpbin; the URL's host is the Host header")
    func unixSocket() async throws {
        guard let socket = ProcessInfo.processInfo.environment["SAPI_HTTPBIN_SOCKET"] else {
            Issue.record("SAPI_HTTPBIN_SOCKET is not set: restart scripts/test-server.sh")
            return
        }
        let outcome = try await SapiProcess.run([
            "--unix-socket", socket, "http://sock.test/headers", "--key-path", "headers.Host",
        ])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.json as? String == "sock.test")
    }

    @Test("--unix-socket with the urlsession backend is a usage error")
    func urlsession() async throws {
        let outcome = try await SapiProcess.run([
            "--backend", "urlsession", "--unix-socket", "/tmp/none.sock", "http://sock.test/get",
        ])
        #expect(outcome.code == 1)
        #expect(outcome.stderr.contains("--backend curl"))
    }
}
