import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import SapiCommand

#if canImport(Glibc)
    import Glibc
#endif

/// `sapi --stream` (`-S`), the built binary against the local httpbin and fault fixture, with both backends.
@Suite("sapi --stream end to end")
struct SapiStreamTests {
    static let backends = ["curl", "urlsession"]

    @Test("httpbin's /stream/5 prints its 5 JSON lines as they came", arguments: backends)
    func jsonLines(backend: String) async throws {
        let outcome = try await SapiProcess.run(["--backend", backend, "-S", "\(try SapiProcess.httpbin)/stream/5"])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        let lines = outcome.text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 6 && lines.last == "", "\(outcome.text)")
        let ids = lines.dropLast().map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))).flatMap { ($0 as? [String: Any])?["id"] as? Int }
        }
        #expect(ids == [0, 1, 2, 3, 4])
    }

    @Test("--key-path applies to each JSON line", arguments: backends)
    func keyPathPerLine(backend: String) async throws {
        let httpbin = try SapiProcess.httpbin
        let ids = try await SapiProcess.run(["--backend", backend, "-S", "\(httpbin)/stream/5", "--key-path", "id"])
        #expect(ids.code == 0, "\(ids.stderr)")
        #expect(ids.text == "0\n1\n2\n3\n4\n")
        #expect(ids.stderr.isEmpty)

        // A key path that finds nothing in any line: exit 9, naming what the lines have.
        let missing = try await SapiProcess.run([
            "--backend", backend, "-S", "\(httpbin)/stream/2", "--key-path", "nope",
        ])
        #expect(missing.code == 9, "\(missing.stderr)")
        #expect(missing.text.isEmpty)
        #expect(missing.stderr.hasPrefix("sapi: error: ") && missing.stderr.contains("no key \"nope\""))

        // A JSON document over many lines is one document: the key path applies to it whole.
        let document = try await SapiProcess.run([
            "--backend", backend, "-S", "\(httpbin)/json", "--key-path", "slideshow.slides[1].title",
        ])
        #expect(document.code == 0, "\(document.stderr)")
        #expect(document.json as? String == "Overview")
    }

    @Test("server-sent events are printed one at a time: event type, changed id, retry, data", arguments: backends)
    func events(backend: String) async throws {
        let fixture = try SapiProcess.fixture
        let basic = try await SapiProcess.run(["--backend", backend, "--stream", "\(fixture)/sse/basic"])
        #expect(basic.code == 0, "\(basic.stderr)")
        // /sse/basic/expected: "one" (id 1), update "line1\nline2" (id 2), "nospace", "", "after-unknown".
        #expect(basic.text == "id: 1\none\n\nevent: update\nid: 2\nline1\nline2\n\nnospace\n\n\n\nafter-unknown\n")
        #expect(!basic.text.contains("\u{1B}["), "no colour when piped")

        for style in ["lf", "crlf", "cr"] {
            let outcome = try await SapiProcess.run([
                "--backend", backend, "-S", "\(fixture)/sse/lineends?style=\(style)",
            ])
            #expect(outcome.code == 0, "\(outcome.stderr)")
            #expect(
                outcome.text == "id: a\nalpha\n\nevent: beta\nbeta1\nbeta2\n\nid: c\nretry: 2000\ngamma\n",
                "style \(style)")
        }
    }

    @Test(
        "--key-path on events whose data is not JSON: a warning per event, and exit 9 when nothing matched",
        arguments: backends)
    func eventsNotJSON(backend: String) async throws {
        let outcome = try await SapiProcess.run([
            "--backend", backend, "-S", "\(try SapiProcess.fixture)/sse/basic", "--key-path",
            "choices[0].delta.content",
        ])
        #expect(outcome.code == 9, "\(outcome.stderr)")
        #expect(outcome.text.isEmpty)
        let warnings = outcome.stderr.split(separator: "\n").filter { $0.hasPrefix("sapi: warning: event ") }
        // Events 1, 2, 3 and 5; event 4's data is empty, which is skipped without a word.
        #expect(warnings.count == 4, "\(outcome.stderr)")
        #expect(warnings.first == #"sapi: warning: event 1 (id 1) is not JSON, skipped: "one""#)
        #expect(outcome.stderr.contains("sapi: error: no event's data was JSON"))
    }

    @Test("a 4xx or 5xx status: its body as it came, and exit 4 or 5 with --check-status", arguments: backends)
    func errorStatus(backend: String) async throws {
        let httpbin = try SapiProcess.httpbin
        let fixture = try SapiProcess.fixture
        let notFound = try await SapiProcess.run([
            "--backend", backend, "-S", "--check-status", "\(httpbin)/status/404",
        ])
        #expect(notFound.code == 4, "\(notFound.stderr)")
        #expect(notFound.stderr.contains("sapi: warning: HTTP 404 Not Found"))

        let events = try await SapiProcess.run([
            "--backend", backend, "-S", "--check-status", "--key-path", "a", "\(fixture)/sse/status/503",
        ])
        #expect(events.code == 5, "\(events.stderr)")
        #expect(events.text == "status 503\n", "an error body is printed as it came, key path or not")

        // Without --check-status the status is no failure, as without --stream.
        let plain = try await SapiProcess.run(["--backend", backend, "-S", "\(fixture)/sse/status/404"])
        #expect(plain.code == 0, "\(plain.stderr)")
        #expect(plain.text == "status 404\n")

        // A status a retry is for fails the call: exit 5 once the retries are spent.
        let retried = try await SapiProcess.run(["--backend", backend, "-S", "--retry", "1", "\(httpbin)/status/503"])
        #expect(retried.code == 5, "\(retried.stderr)")
    }

    @Test("-v prints the request, then the response head, then the events")
    func head() async throws {
        let outcome = try await SapiProcess.run(["-S", "-v", "\(try SapiProcess.fixture)/sse/slow?n=2&interval_ms=1"])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.text.hasPrefix("GET /sse/slow?n=2&interval_ms=1 HTTP/1.1\n"), "\(outcome.text)")
        #expect(outcome.text.contains("\n\nHTTP/1.1 200 OK\n"))
        #expect(outcome.text.contains("Content-Type: text/event-stream\n"))
        #expect(outcome.text.hasSuffix("\n\nid: 1\ntick 1\n\nid: 2\ntick 2\n"))
    }

    @Test(
        "a connection dropped mid-stream: an error on stderr, its exit code, stdout on a line boundary",
        arguments: backends)
    func droppedMidStream(backend: String) async throws {
        let outcome = try await SapiProcess.run([
            "--backend", backend, "-S", "\(try SapiProcess.fixture)/sse/reconnect?key=\(UUID().uuidString)",
        ])
        #expect(outcome.code == 7, "\(outcome.stderr)")
        #expect(outcome.stderr.hasPrefix("sapi: error: network"))
        #expect(outcome.text.isEmpty || outcome.text.hasSuffix("\n"))
    }

    @Test("--stream with --download, the cache options or --envelope is a usage error with a hint")
    func usage() async throws {
        let httpbin = try SapiProcess.httpbin
        let download = try await SapiProcess.run(["--stream", "\(httpbin)/get", "--download", "-o", "x"])
        #expect(download.code == 1)
        #expect(download.stderr.contains("sapi: error: --stream") && download.stderr.contains("  try: "))
        #expect(!FileManager.default.fileExists(atPath: "x"))
        for extra in [
            ["--cache", "memory"], ["--cache-mode", "cache-only"], ["--cache-dir", "/tmp"], ["--envelope"],
        ] {
            #expect(throws: UsageError.self, "\(extra)") { try Options.parse(["-S", "x.test"] + extra) }
        }
        #expect(try Options.parse(["-S", "x.test"]).stream)
        #expect(try Options.parse(["--stream", "x.test", "--cache", "none"]).stream)
    }

    @Test("--help lists -S, --stream and explains the output")
    func help() async throws {
        let outcome = try await SapiProcess.run(["--help"])
        #expect(outcome.code == 0)
        #expect(outcome.text.contains("  --stream, -S "))
        #expect(outcome.text.contains("streaming (--stream, -S):"))
    }

    // MARK: - On a terminal

    @Test("Ctrl-C in a terminal stops the stream: exit 130, the server sees the client leave", arguments: backends)
    func interrupt(backend: String) async throws {
        let fixture = try SapiProcess.fixture
        let key = UUID().uuidString
        try await Terminal.with { terminal in
            try await terminal.run(
                "\(try SapiProcess.binary.path) --backend \(backend) -S '\(fixture)/sse/slow?n=200&interval_ms=200&key=\(key)'"
            )
            // The stream is open once the fixture has written its first event.
            try await poll("the fixture to send the first event", within: .seconds(30), every: .milliseconds(20)) {
                try await slowState(fixture, key)["sent"] as? Int ?? 0 >= 1
            }
            try await terminal.press("C-c")
            let screen = try await terminal.waitForExit()
            #expect(screen.exitCode == 130, "\(screen.text)")
            #expect(screen.text.contains("sapi: interrupted"))
            try await poll("the fixture to see the client leave", within: .seconds(30), every: .milliseconds(20)) {
                try await slowState(fixture, key)["client_left"] as? Bool == true
            }
        }
    }

    @Test("events are coloured on a terminal")
    func colours() async throws {
        let fixture = try SapiProcess.fixture
        try await Terminal.with { terminal in
            try await terminal.run("\(try SapiProcess.binary.path) -S '\(fixture)/sse/basic'")
            let screen = try await terminal.waitForExit(escapes: true)
            #expect(screen.exitCode == 0, "\(screen.text)")
            #expect(screen.text.contains("\u{1B}[36mid"), "\(screen.text.debugDescription)")
            #expect(screen.text.contains("\u{1B}[36mevent"))
            #expect(screen.text.contains("after-unknown"))
        }
    }

    // MARK: - Incremental delivery

    @Test("--key-path on an LLM-style completion stream prints the answer as one text", arguments: backends)
    func completion(backend: String) async throws {
        let outcome = try await SapiProcess.run([
            "--backend", backend, "-S", "\(try SapiProcess.fixture)/sse/completion",
            "--key-path", "choices[0].delta.content",
        ])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.text == "Hello, world!\n")
        #expect(outcome.stderr.isEmpty, "the role chunk, the finish chunk and [DONE] are skipped quietly")
    }

    @Test("what arrived is on stdout while the server holds the rest back; Ctrl-C then exits 130", arguments: backends)
    func incremental(backend: String) async throws {
        let key = UUID().uuidString
        let started = try await SapiProcess.start([
            "--backend", backend, "-S", "\(try SapiProcess.fixture)/hold-body?key=\(key)",
        ])
        let out = started.1
        // The fixture sends "first\n" and then nothing until the client leaves: only a streamed body
        // can show it before the end.
        try await poll("the first line on stdout", within: .seconds(30), every: .milliseconds(20)) {
            (try? Data(contentsOf: out)) == Data("first\n".utf8)
        }
        kill(started.0.processIdentifier, SIGINT)
        let outcome = try await SapiProcess.finish(started)
        #expect(outcome.code == 130, "\(outcome.stderr)")
        #expect(outcome.text == "first\n")
    }

    @Test("on a terminal, the first event shows before Ctrl-C, which ends the line cleanly", arguments: backends)
    func incrementalOnTerminal(backend: String) async throws {
        let fixture = try SapiProcess.fixture
        try await Terminal.with { terminal in
            try await terminal.run(
                "\(try SapiProcess.binary.path) --backend \(backend) -S '\(fixture)/sse/slow?n=200&interval_ms=200'")
            _ = try await terminal.waitFor { $0.contains("tick 1") }
            try await terminal.press("C-c")
            let screen = try await terminal.waitForExit()
            #expect(screen.exitCode == 130, "\(screen.text)")
        }
    }

    @Test("what arrived before a dropped connection is printed", arguments: backends)
    func partialBeforeDrop(backend: String) async throws {
        let outcome = try await SapiProcess.run([
            "--backend", backend, "-S", "\(try SapiProcess.fixture)/sse/reconnect?key=\(UUID().uuidString)",
        ])
        #expect(outcome.code == 7, "\(outcome.stderr)")
        #expect(outcome.text == "id: 1\nretry: 50\nevent 1\n\nid: 2\nevent 2\n\nid: 3\nevent 3\n")
    }

    @Test(
        "-S --timeout N bounds the whole stream, as curl -m does: a body that trickles on stops with exit 2",
        arguments: backends)
    func timeoutBoundsTheStream(backend: String) async throws {
        // One byte a second for 10 minutes: the stream is still coming when the process's own limit (3 minutes)
        // would end it, so only --timeout can end it with sapi's exit code.
        let started = try await SapiProcess.start([
            "--backend", backend, "-S", "--timeout", "3", "\(try SapiProcess.fixture)/drip?size=600&interval_ms=1000",
        ])
        let outcome = try await SapiProcess.finish(started, limit: .seconds(180))
        #expect(outcome.code == 2, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("timed out"), "\(outcome.stderr)")
        #expect(!outcome.stdout.isEmpty && outcome.stdout.count < 600, "\(outcome.stdout.count) bytes")
    }

    private func slowState(_ fixture: String, _ key: String) async throws -> [String: Any] {
        let outcome = try await SapiProcess.run(["\(fixture)/sse/slow/state?key=\(key)"])
        return outcome.json as? [String: Any] ?? [:]
    }
}

/// `StreamPrinter` on bodies made in memory, split into chunks anywhere: what the fixtures do not serve.
@Suite("sapi --stream: printing")
struct StreamPrinterTests {
    final class Output {
        var stdout = Data()
        var stderr: [String] = []
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    private func run(
        _ chunks: [String], mode: StreamPrinter.Mode, keyPath: String? = nil, colors: Bool = false
    ) async throws -> (Output, (any Error)?) {
        let output = Output()
        let style = OutputStyle.resolve(pretty: nil, sorted: nil, theme: nil, terminal: colors, environment: [:])
        var printer = StreamPrinter(style: style, terminal: colors)
        if let keyPath { printer.keyPath = try JSONKeyPath(parsing: keyPath) }
        printer.write = { output.stdout.append($0) }
        printer.warn = { output.stderr.append($0) }
        do {
            try await printer.body(ResponseBodyStream(chunks: chunks.map { Data($0.utf8) }), mode: mode)
            return (output, nil)
        } catch {
            return (output, error)
        }
    }

    /// An OpenAI-style completion stream: a role chunk, content fragments, a finish chunk, `[DONE]`.
    static let completion = [
        #"data: {"choices":[{"delta":{"role":"assistant"},"index":0}]}"# + "\n\n",
        #"data: {"choices":[{"delta":{"content":"Hel"},"index":0}]}"# + "\n\ndata: {\"choi",
        #"ces":[{"delta":{"content":"lo, wo"},"index":0}]}"# + "\n\n",
        #"data: {"choices":[{"delta":{"content":"rld!"},"index":0}]}"# + "\n\n",
        #"data: {"choices":[{"delta":{},"finish_reason":"stop","index":0}]}"# + "\n\n",
        "data: [DONE]\n\n",
    ]

    @Test("a completion stream's text fragments join up into one answer, ended by a newline")
    func completion() async throws {
        let (output, error) = try await run(
            Self.completion, mode: .eventValues, keyPath: "choices[0].delta.content")
        #expect(error == nil)
        #expect(output.text == "Hello, world!\n")
        #expect(output.stderr.isEmpty)
    }

    @Test("values that are not strings are one line of JSON each; non-JSON data is warned about and skipped")
    func eventValues() async throws {
        let chunks = [
            "id: 1\ndata: {\"n\": 1, \"o\": {\"b\": 2, \"a\": [true, null]}}\n\n",
            "data: tick\n\n", "data: {\"n\": 2.5}\n\n", "data: {\"m\": 3}\n\n",
        ]
        let (numbers, error) = try await run(chunks, mode: .eventValues, keyPath: "n")
        #expect(error == nil)
        #expect(numbers.text == "1\n2.5\n")
        #expect(numbers.stderr == [#"sapi: warning: event 2 (id 1) is not JSON, skipped: "tick""#])
        let (objects, _) = try await run(chunks, mode: .eventValues, keyPath: "o")
        #expect(objects.text == #"{"a":[true,null],"b":2}"# + "\n")
    }

    @Test("a key path that finds nothing in any event is a decoding error naming what is there")
    func missing() async throws {
        let (output, error) = try await run(Self.completion, mode: .eventValues, keyPath: "choices[0].text")
        #expect(output.text.isEmpty)
        let failure = try #require(error as? ServerAPIError)
        #expect(failure.kind == .decoding)
        #expect(failure.message.hasPrefix("the key path found nothing in any event"))
    }

    @Test("events without a key path: JSON data coloured on a terminal")
    func colouredEvents() async throws {
        let (output, _) = try await run(["event: x\nid: 7\ndata: {\"a\":1}\n\n"], mode: .events, colors: true)
        #expect(
            output.text
                == "\u{1B}[36mevent\u{1B}[0m: x\n\u{1B}[36mid\u{1B}[0m: 7\n{\u{1B}[34m\"a\"\u{1B}[0m:\u{1B}[36m1\u{1B}[0m}\n"
        )
    }

    @Test("JSON lines split anywhere: NDJSON, JSON text sequences, a last line without its newline")
    func lines() async throws {
        let (ndjson, _) = try await run(
            ["{\"id\":1}\n{\"i", "d\":2}\r\n\n{\"id\":\"three\"}"], mode: .lineValues, keyPath: "id")
        #expect(ndjson.text == "1\n2\n\"three\"\n")
        let (sequence, _) = try await run(["\u{1E}{\"id\":1}\n\u{1E}{\"id\":2}\n"], mode: .lineValues, keyPath: "id")
        #expect(sequence.text == "1\n2\n")
        let (mixed, _) = try await run(["{\"id\":1}\nnot json\n"], mode: .jsonBody, keyPath: "id")
        #expect(mixed.text == "1\n")
        #expect(mixed.stderr == [#"sapi: warning: line 2 is not JSON, skipped: "not json""#])
    }

    @Test("application/json whose first line is not a whole value is one document")
    func document() async throws {
        let (output, error) = try await run(
            ["\n{\n  \"a\": {\"b\"", ": [1, 2]}\n}\n"], mode: .jsonBody, keyPath: "a.b[1]")
        #expect(error == nil)
        #expect(output.text == "2\n")
        let (empty, failure) = try await run([], mode: .jsonBody, keyPath: "a")
        #expect(empty.text.isEmpty)
        #expect((failure as? ServerAPIError)?.kind == .decoding)
    }

    @Test("the mode follows the status, the Content-Type and whether there is a key path")
    func modes() {
        #expect(
            StreamPrinter.mode(contentType: "text/event-stream; charset=utf-8", status: 200, hasKeyPath: false)
                == .events)
        #expect(StreamPrinter.mode(contentType: "Text/Event-Stream", status: 200, hasKeyPath: true) == .eventValues)
        #expect(StreamPrinter.mode(contentType: "text/event-stream", status: 500, hasKeyPath: true) == .bytes)
        #expect(StreamPrinter.mode(contentType: "application/x-ndjson", status: 200, hasKeyPath: false) == .bytes)
        #expect(StreamPrinter.mode(contentType: "application/x-ndjson", status: 200, hasKeyPath: true) == .lineValues)
        #expect(StreamPrinter.mode(contentType: "application/json-seq", status: 200, hasKeyPath: true) == .lineValues)
        #expect(StreamPrinter.mode(contentType: "application/json", status: 200, hasKeyPath: true) == .jsonBody)
        #expect(StreamPrinter.mode(contentType: nil, status: 200, hasKeyPath: true) == .lineValues)
    }

    @Test("bytes go out as they come; a terminal gets a last newline, a pipe gets the bytes exactly")
    func bytes() async throws {
        let (piped, _) = try await run(["ab", "c"], mode: .bytes)
        #expect(piped.text == "abc")
        let (terminal, _) = try await run(["ab", "c"], mode: .bytes, colors: true)
        #expect(terminal.text == "abc\n")
        let (binary, _) = try await run(["ab\u{0}c"], mode: .bytes, colors: true)
        #expect(binary.text.contains("binary data not shown"))
    }
}
