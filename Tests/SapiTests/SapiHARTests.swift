import Foundation
import ServerAPITestSupport
import Testing

@testable import SapiCommand

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

    /// A crafted file: what `sapi --replay` is given, what it is asked, and what its error must name.
    struct CraftedFile: Sendable, CustomTestStringConvertible {
        var name: String
        var arguments: [String] = []
        var time = "12"
        var wait = "10"
        var status = "200"
        var content = #"{"size": 2, "mimeType": "text/plain", "text": "hi"}"#
        var chunks = "null"
        var field: String

        var testDescription: String { name }

        /// The HAR file: one entry that answers `GET url`.
        func json(_ url: String) -> String {
            """
            {"log": {"version": "1.2", "creator": {"name": "crafted", "version": "1"}, "entries": [
              {"startedDateTime": "2026-01-01T00:00:00.000Z", "time": \(time), "cache": {},
               "request": {"method": "GET", "url": "\(url)", "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                 "queryString": [], "headersSize": -1, "bodySize": 0},
               "response": {"status": \(status), "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
                 "headers": [{"name": "Content-Type", "value": "text/plain"}], "content": \(content),
                 "redirectURL": "", "headersSize": -1, "bodySize": -1, "_chunks": \(chunks)},
               "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": \(wait),
                 "receive": 2}}]}}
            """
        }
    }

    static let craftedFiles = [
        CraftedFile(name: "time 1e300", time: "1e300", field: "time is 1e+300"),
        CraftedFile(name: "timings.wait 1e300", wait: "1e300", field: "timings.wait is 1e+300"),
        CraftedFile(
            name: "a streamed chunk at 1e16 ms", arguments: ["-S"], chunks: #"[{"size": 1, "time": 1e16}]"#,
            field: "the time of chunk 1 in response._chunks is 1e+16"),
        CraftedFile(
            name: "chunk sizes past Int64.max", arguments: ["-S"],
            chunks: #"[{"size": 1, "time": 0}, {"size": 9223372036854775807, "time": 0}]"#,
            field: "the sizes of response._chunks add up past"),
        CraftedFile(name: "status -1", status: "-1", field: "response.status is -1"),
        CraftedFile(
            name: "a body that is not base64",
            content: #"{"size": 4, "mimeType": "text/plain", "text": "*not base64*", "encoding": "base64"}"#,
            field: "response.content.text is not base64"),
    ]

    @Test(
        "--replay of a file with an absurd number or a bad encoding is a decoding error naming the entry and field",
        arguments: craftedFiles)
    func craftedFile(_ crafted: CraftedFile) async throws {
        let scratch = try Scratch()
        let file = scratch.file("crafted.har")
        let url = "http://127.0.0.1:\(try closedPort())/x"
        try Data(crafted.json(url).utf8).write(to: file)
        let outcome = try await SapiProcess.run(crafted.arguments + ["--replay", file.path, url])
        // A trap (SIGILL, SIGABRT, SIGSEGV) is reported as its signal's number, and says so on standard error.
        let crashed = outcome.stderr.contains("Fatal error") || outcome.stderr.contains("crashed")
        #expect(!crashed, "sapi crashed: \(outcome.code) \(outcome.stderr)")
        #expect(outcome.code == 9, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("entry 1 of 1 in crafted.har: \(crafted.field)"), "\(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)
    }

    @Test("--replay of a file over 256 MiB fails at once, from its size, without reading it")
    func oversizedFile() async throws {
        let scratch = try Scratch()
        let file = scratch.file("huge.har")
        // Sparse: 300 MiB long with no block written, so the test stays cheap.
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 300 << 20)
        try handle.close()
        let outcome = try await SapiProcess.run(["--replay", file.path, "http://127.0.0.1:\(try closedPort())/x"])
        #expect(outcome.code == 1, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("huge.har is 314572800 bytes"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("268435456"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("try: give --replay a HAR 1.2 file of at most 256 MiB"), "\(outcome.stderr)")
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
