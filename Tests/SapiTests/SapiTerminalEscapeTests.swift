import Foundation
import ServerAPITestSupport
import Testing

/// `sapi` against servers that send terminal escapes (the fault fixture's `/hostile/` routes, the WebSocket peer's
/// `/hostile`): in a real terminal (tmux), what came from the network shows its control characters, so the pane's
/// title stays and its screen is not cleared; standard error shows them the same way wherever it goes; piped, the
/// bytes are written exactly as received.
@Suite("sapi: a server's escapes never reach the terminal")
struct SapiTerminalEscapeTests {
    static let backends = ["curl", "urlsession"]

    /// The fixture's HOSTILE_TEXT, byte for byte: a title set, a screen cleared, an 8-bit CSI, a right-to-left
    /// override, DEL and a lone CR.
    static let hostileText = Data(
        "title \u{1B}]0;PWNED\u{07} clear \u{1B}[2J csi \u{9B}2J rlo \u{202E}evil del \u{7F} cr \r end\n".utf8)
    /// HOSTILE_TEXT as sapi shows it on a terminal.
    static let visibleText = "title ^[]0;PWNED^G clear ^[[2J csi <U+009B>2J rlo <U+202E>evil del ^? cr ^M end"
    /// The fixture's HOSTILE_HEADER (ESC ] 0 ; PWNED BEL ESC [ 2 J) as sapi shows it.
    static let visibleHeader = "^[]0;PWNED^G^[[2J"
    /// The WebSocket peer's HOSTILE_MESSAGE, byte for byte.
    static let hostileMessage = Data("message \u{1B}]0;PWNED\u{07}\u{1B}[2J\u{9B}2J end".utf8)

    /// Runs `command` on a cleared screen after a marker line, and returns the screen once it has exited, having
    /// checked that the marker is still on it (no escape cleared the screen) and that the title is what it was.
    static func run(_ command: String, in terminal: Terminal) async throws -> Terminal.Screen {
        let title = try await terminal.title()
        let marker = "marker-\(UUID().uuidString.prefix(8))"
        try await terminal.run("clear; echo \(marker); \(command)")
        let screen = try await terminal.waitForExit()
        #expect(screen.text.split(separator: "\n").contains { $0 == marker }, "cleared: \(screen.text)")
        let after = try await terminal.title()
        #expect(after == title, "the title was set: \(after)")
        return screen
    }

    @Test(
        "on a terminal, a body, a header value, JSON strings and events show the server's escapes", arguments: backends)
    func responses(backend: String) async throws {
        let sapi = "\(try SapiProcess.binary.path) --backend \(backend)"
        let fixture = try SapiProcess.fixture
        try await Terminal.with { terminal in
            let text = try await Self.run("\(sapi) '\(fixture)/hostile/text'", in: terminal)
            #expect(text.exitCode == 0, "\(text.text)")
            #expect(text.text.contains("X-Hostile: \(Self.visibleHeader)\n"), "\(text.text)")
            #expect(text.text.contains(Self.visibleText + "\n"), "\(text.text)")

            let json = try await Self.run("\(sapi) '\(fixture)/hostile/json'", in: terminal)
            #expect(json.exitCode == 0, "\(json.text)")
            // Escaped in the body, a control stays escaped; raw, it is visible.
            #expect(json.text.contains(#""escaped": "\u001b]0;PWNED\u0007""#), "\(json.text)")
            #expect(json.text.contains(#""csi": "<U+009B>2J""#), "\(json.text)")
            #expect(json.text.contains(#""rlo": "<U+202E>evil^?""#), "\(json.text)")

            let events = try await Self.run("\(sapi) -S '\(fixture)/hostile/sse'", in: terminal)
            #expect(events.exitCode == 0, "\(events.text)")
            for field in ["event", "id"] {
                #expect(events.text.contains("\(field): \(Self.visibleHeader)\n"), "\(events.text)")
            }
            #expect(events.text.contains("\n\(Self.visibleHeader)\n"), "\(events.text)")
        }
    }

    @Test(
        "an error quoting a redirect's Location shows its escapes, on a terminal or not; piped, a body is exact",
        arguments: backends)
    func redirectLocation(backend: String) async throws {
        let sapi = "\(try SapiProcess.binary.path) --backend \(backend)"
        let fixture = try SapiProcess.fixture
        let quoted =
            "the server redirected to \"ftp://example.invalid/\(Self.visibleHeader)\", which is not an http(s) URL"
        try await withTemporaryDirectory { directory in
            let body = directory.appendingPathComponent("body")
            let output = directory.appendingPathComponent("redirect")
            try await Terminal.with { terminal in
                let screen = try await Self.run(
                    "\(sapi) '\(fixture)/hostile/text' > '\(body.path)'; "
                        + "\(sapi) '\(fixture)/hostile/redirect' > '\(output.path)'", in: terminal)
                #expect(screen.exitCode == 7, "\(screen.text)")
                #expect(screen.text.contains("sapi: error: network: \(quoted)"), "\(screen.text)")
            }
            #expect(try Data(contentsOf: body) == Self.hostileText)
            #expect(try Data(contentsOf: output).isEmpty)
        }
        // Standard error in a file: visible all the same (a log is read on a terminal later).
        let logged = try await SapiProcess.run(["--backend", backend, "\(fixture)/hostile/redirect"])
        #expect(logged.code == 7)
        #expect(logged.stderr.contains(quoted), "\(logged.stderr.debugDescription)")
        #expect(!logged.stderr.contains("\u{1B}"))
        for streamed in [false, true] {
            let piped = try await SapiProcess.run(
                ["--backend", backend, "\(fixture)/hostile/text"] + (streamed ? ["-S"] : []))
            #expect(piped.code == 0, "\(piped.stderr)")
            #expect(piped.stdout == Self.hostileText, "streamed: \(streamed)")
        }
    }

    @Test("a download's name from Content-Disposition shows its escapes on standard error", arguments: backends)
    func downloadName(backend: String) async throws {
        let disposition = "attachment; filename*=UTF-8''%E2%80%AEtxt.exe"
        let query = disposition.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        try await withTemporaryDirectory { directory in
            let outcome = try await SapiProcess.run(
                ["--backend", backend, "-d", "\(try SapiProcess.fixture)/resource?size=10&disposition=\(query)"],
                in: directory)
            #expect(outcome.code == 0, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("Saved 10 bytes to <U+202E>txt.exe"), "\(outcome.stderr.debugDescription)")
        }
    }

    @Test("on a terminal, a WebSocket message and close reason show their escapes; piped, the message is exact")
    func webSocket() async throws {
        let url = try SapiWebSocketTests.url("/hostile")
        let reason = "reason \(Self.visibleHeader) end"
        try await withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("messages")
            try await Terminal.with { terminal in
                let shown = try await Self.run(try SapiWebSocketTests.command("-I '\(url)'"), in: terminal)
                #expect(shown.exitCode == 7, "\(shown.text)")
                #expect(shown.text.contains("\nmessage \(Self.visibleHeader)<U+009B>2J end\n"), "\(shown.text)")
                #expect(shown.text.contains(reason), "\(shown.text)")

                let piped = try await Self.run(
                    try SapiWebSocketTests.command("-I '\(url)' > '\(file.path)'"), in: terminal)
                #expect(piped.exitCode == 7, "\(piped.text)")
                #expect(piped.text.contains(reason), "\(piped.text)")
            }
            #expect(try Data(contentsOf: file) == Self.hostileMessage + Data("\n".utf8))
        }
    }
}
