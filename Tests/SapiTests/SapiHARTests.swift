import Foundation
import ServerAPITestSupport
import Testing

@testable import sapi

/// `sapi --har FILE` records a run as HAR 1.2; `sapi --replay FILE` answers from it with no network.
@Suite("sapi --har and --replay")
struct SapiHARTests {
    static let backends = ["curl", "urlsession"]

    /// The HAR file with every request URL moved from `base` to `newBase` (the bodies keep what the server said).
    static func move(_ file: URL, from base: String, to newBase: String) throws -> URL {
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var log = try #require(root["log"] as? [String: Any])
        var entries = try #require(log["entries"] as? [[String: Any]])
        for index in entries.indices {
            var request = try #require(entries[index]["request"] as? [String: Any])
            request["url"] = (request["url"] as? String)?.replacingOccurrences(of: base, with: newBase)
            entries[index]["request"] = request
        }
        log["entries"] = entries
        root["log"] = log
        let moved = file.deletingLastPathComponent().appendingPathComponent("moved-" + file.lastPathComponent)
        try JSONSerialization.data(withJSONObject: root).write(to: moved)
        return moved
    }

    @Test(
        "--har writes the run with credentials redacted; --replay prints the same answer with the server out of reach",
        arguments: backends)
    func recordAndReplay(backend: String) async throws {
        let scratch = try Scratch()
        let har = scratch.file("run.har")
        let httpbin = try SapiProcess.httpbin
        let recorded = try await SapiProcess.run([
            "--backend", backend, "--har", har.path, "\(httpbin)/anything", "q==1", "X-Trace:42",
            "Authorization:Bearer s3cret-token", "Cookie:sid=cookie-secret",
        ])
        #expect(recorded.code == 0, "\(recorded.stderr)")
        let text = try String(contentsOf: har, encoding: .utf8)
        #expect(text.contains("\"version\""))
        #expect(text.contains("X-Trace"))
        #expect(!text.contains("s3cret-token"))
        #expect(!text.contains("cookie-secret"))
        // httpbin echoes the request: the secrets were sent, and the echo of them was scrubbed from the file.
        let echo = try #require(recorded.json as? [String: Any])
        #expect((echo["headers"] as? [String: String])?["Authorization"] == "Bearer s3cret-token")

        let offline = "http://127.0.0.1:\(try closedPort())"
        let moved = try Self.move(har, from: httpbin, to: offline)
        let replayed = try await SapiProcess.run(["--replay", moved.path, "\(offline)/anything", "X-Trace:42", "q==1"])
        #expect(replayed.code == 0, "\(replayed.stderr)")
        #expect(
            replayed.text
                == recorded.text.replacingOccurrences(of: "s3cret-token", with: "REDACTED")
                .replacingOccurrences(of: "cookie-secret", with: "REDACTED"))
    }

    @Test("--show-credentials keeps the credentials in the --har file")
    func showCredentials() async throws {
        let scratch = try Scratch()
        let har = scratch.file("creds.har")
        let outcome = try await SapiProcess.run([
            "--har", har.path, "--show-credentials", "\(try SapiProcess.httpbin)/get",
            "Authorization:Bearer s3cret-token",
        ])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(try String(contentsOf: har, encoding: .utf8).contains("Bearer s3cret-token"))
    }

    @Test("a streamed response is recorded in its chunks and replayed as the same stream")
    func stream() async throws {
        let scratch = try Scratch()
        let har = scratch.file("stream.har")
        let fixture = try SapiProcess.fixture
        let recorded = try await SapiProcess.run(["-S", "--har", har.path, "\(fixture)/sse/basic"])
        #expect(recorded.code == 0, "\(recorded.stderr)")
        #expect(try String(contentsOf: har, encoding: .utf8).contains("\"_chunks\""))
        let offline = "http://127.0.0.1:\(try closedPort())"
        let replayed = try await SapiProcess.run([
            "-S", "--replay", try Self.move(har, from: fixture, to: offline).path, "\(offline)/sse/basic",
        ])
        #expect(replayed.code == 0, "\(replayed.stderr)")
        #expect(!replayed.stdout.isEmpty)
        #expect(replayed.stdout == recorded.stdout)
    }

    @Test(
        "a request the file lacks fails, naming the closest entry; --har and --replay together, or a missing file, are usage errors"
    )
    func failures() async throws {
        let scratch = try Scratch()
        let har = scratch.file("one.har")
        let httpbin = try SapiProcess.httpbin
        #expect(try await SapiProcess.run(["--har", har.path, "\(httpbin)/get"]).code == 0)
        let unmatched = try await SapiProcess.run(["--replay", har.path, "POST", "\(httpbin)/get", "a=1"])
        #expect(unmatched.code != 0)
        #expect(unmatched.stderr.contains("not recorded"), "\(unmatched.stderr)")
        #expect(unmatched.stderr.contains("closest is entry 1 of 1, GET \(httpbin)/get"), "\(unmatched.stderr)")
        #expect(unmatched.stderr.contains("method (recorded GET)"), "\(unmatched.stderr)")

        let both = try await SapiProcess.run(["--har", har.path, "--replay", har.path, "\(httpbin)/get"])
        #expect(both.code == 1)
        #expect(both.stderr.contains("give one"))
        let missing = try await SapiProcess.run(["--replay", scratch.file("none.har").path, "\(httpbin)/get"])
        #expect(missing.code == 1)
        #expect(missing.stderr.contains("no HAR file"))
        #expect(missing.stderr.contains("sapi --har"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("SAPI_HAR_MODE"), "\(missing.stderr)")
    }

    @Test("the advice for a request the file lacks is what works for sapi: record it with --har, then it replays")
    func recordingAdvice() async throws {
        let scratch = try Scratch()
        let har = scratch.file("one.har")
        let httpbin = try SapiProcess.httpbin
        #expect(try await SapiProcess.run(["--har", har.path, "\(httpbin)/get"]).code == 0)
        let asked = ["POST", "\(httpbin)/post", "a=1"]
        let unmatched = try await SapiProcess.run(["--replay", har.path] + asked)
        #expect(unmatched.stderr.contains("not recorded"), "\(unmatched.stderr)")
        // SAPI_HAR_MODE is read by ServerAPIManager.replaying in a test, never by sapi.
        #expect(!unmatched.stderr.contains("SAPI_HAR_MODE"), "\(unmatched.stderr)")
        let advice = "Record it with sapi --har NEW.har and the same arguments"
        #expect(unmatched.stderr.contains(advice), "\(unmatched.stderr)")

        let recorded = scratch.file("NEW.har")
        #expect(try await SapiProcess.run(["--har", recorded.path] + asked).code == 0)
        let replayed = try await SapiProcess.run(["--replay", recorded.path] + asked)
        #expect(replayed.code == 0, "\(replayed.stderr)")
    }
}

@Suite("sapi: --har and --replay options")
struct SapiHAROptionsTests {
    @Test("--har and --replay take a file; together they are refused")
    func parsing() throws {
        let recording = try Options.parse(["--har", "run.har", "http://x/get"])
        #expect(recording.har == "run.har")
        #expect(recording.replay == nil)
        let replaying = try Options.parse(["--replay=run.har", "http://x/get"])
        #expect(replaying.replay == "run.har")
        #expect(throws: UsageError.self) { try Options.parse(["--har", "a.har", "--replay", "b.har", "http://x/get"]) }
        #expect(throws: UsageError.self) { try Options.parse(["--har", "", "http://x/get"]) }
        #expect(Options.helpText.contains("--har FILE"))
        #expect(Options.helpText.contains("--replay FILE"))
    }
}
