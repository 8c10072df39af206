import Foundation
import ServerAPIKit
import Testing

@testable import SapiCommand

/// `TerminalText`, the visible form of what came from the network, and the printers that use it: on a terminal
/// every piece from the server is shown in it, with sapi's own colours intact; piped, the bytes are as received.
@Suite("sapi: control characters from the network shown visibly")
struct TerminalTextTests {
    static let terminal = OutputStyle.resolve(pretty: nil, sorted: nil, theme: nil, terminal: true, environment: [:])
    static let piped = OutputStyle.resolve(pretty: .all, sorted: nil, theme: nil, terminal: false, environment: [:])

    @Test("C0 controls and DEL in caret notation; line feeds, tabs and CRLF stay, a lone CR shows")
    func caretNotation() {
        #expect(TerminalText.visible("a\u{1B}]0;PWNED\u{07}b") == "a^[]0;PWNED^Gb")
        #expect(TerminalText.visible("\u{1B}[2J\u{0}\u{1F}\u{7F}") == "^[[2J^@^_^?")
        #expect(TerminalText.visible("one\r\ntwo\tthree\n") == "one\r\ntwo\tthree\n")
        #expect(TerminalText.visible("over\rwrite\r") == "over^Mwrite^M")
        #expect(TerminalText.visible("\r\r\n") == "^M\r\n")
    }

    @Test("C1 controls and bidirectional overrides and isolates as <U+XXXX>; any other text as it is")
    func codePoints() {
        #expect(TerminalText.visible("\u{9B}2J") == "<U+009B>2J")
        #expect(TerminalText.visible("\u{80}\u{9F}") == "<U+0080><U+009F>")
        #expect(TerminalText.visible("a\u{202A}\u{202E}b\u{2066}c\u{2069}") == "a<U+202A><U+202E>b<U+2066>c<U+2069>")
        // Accents, emoji, a no-break space, U+00A0, and the directional marks stay.
        let text = "héllo wörld 👋 e\u{301}\u{A0}\u{200E}\u{200F}\u{61C}"
        #expect(TerminalText.visible(text).unicodeScalars.elementsEqual(text.unicodeScalars))
    }

    @Test("bytes are read as UTF-8, and are returned as they are when nothing in them changes")
    func bytes() {
        let plain = Data("plain {\"a\": 1}\n\tend".utf8)
        #expect(TerminalText.visible(plain) == plain)
        #expect(TerminalText.visible(Data("a\u{1B}[2Jb\r\n".utf8)) == Data("a^[[2Jb\r\n".utf8))
        #expect(TerminalText.visible(Data([0x61, 0xFF])) == Data("a\u{FFFD}".utf8))
    }

    @Test("chunk by chunk: a character or a CRLF split between chunks shows as when whole; not text is nil")
    func chunks() {
        var chunks = TerminalText.Chunks()
        // U+009B is C2 9B in UTF-8.
        #expect(chunks.visible(Data([0x61, 0xC2])) == Data("a".utf8))
        #expect(chunks.visible(Data([0x9B, 0x0D])) == Data("<U+009B>".utf8))
        #expect(chunks.visible(Data([0x0A, 0x0D])) == Data("\r\n".utf8))
        #expect(chunks.visible(Data("x".utf8)) == Data("^Mx".utf8))
        #expect(chunks.visible(Data([0x0D])) == Data())
        #expect(chunks.finish() == Data("^M".utf8))
        var withNUL = TerminalText.Chunks()
        #expect(withNUL.visible(Data([0x61, 0x00])) == nil)
        var notUTF8 = TerminalText.Chunks()
        #expect(notUTF8.visible(Data([0xFF, 0x61])) == nil)
    }

    @Test("the style shows controls on a terminal only, whatever --pretty says; piped, text is as it came")
    func style() {
        let plainTerminal = OutputStyle.resolve(
            pretty: OutputStyle.Pretty.none, sorted: nil, theme: nil, terminal: true, environment: [:])
        #expect(Self.terminal.visibleControls && plainTerminal.visibleControls && !Self.piped.visibleControls)
        #expect(plainTerminal.shown("\u{1B}[2J") == "^[[2J")
        #expect(Self.piped.shown("\u{1B}[2J") == "\u{1B}[2J")
        #expect(Self.piped.shown(Self.hostile) == Self.hostile)
    }

    @Test("--help says how control characters are shown")
    func help() {
        #expect(Options.helpText.contains("ESC as ^["))
        #expect(Options.helpText.contains("Lines on stderr"))
    }

    @Test("header fields: the server's escapes visible, sapi's colours intact")
    func headerFields() throws {
        let palette = try #require(Self.terminal.palette)
        let fields = Printer.fields([(name: "X-\u{1B}]0;T\u{07}", value: "\u{1B}[2J\u{9B}")], style: Self.terminal)
        #expect(fields == palette.fieldName + "X-^[]0;T^G" + OutputStyle.Palette.reset + ": ^[[2J<U+009B>\n")
        let piped = Printer.fields([(name: "X-A", value: "\u{1B}[2J")], style: Self.piped)
        #expect(piped == palette.fieldName + "X-A" + OutputStyle.Palette.reset + ": \u{1B}[2J\n")
    }

    /// JSON with an escaped and a raw C1 control, a raw right-to-left override and a raw DEL in its strings.
    static let json = Data("{\"b\": \"\\u009b \u{9B}\", \"a\": \"\u{202E}x\u{7F}\"}".utf8)

    @Test("JSON: a string's controls, escaped or raw, show in the sorted and the unsorted form on a terminal")
    func json() throws {
        let sorted = OutputStyle(palette: nil, format: true, sorted: true, visibleControls: true)
        let rendered = try #require(Printer.formatJSON(Self.json, style: sorted))
        #expect(
            String(decoding: rendered, as: UTF8.self)
                == "{\n    \"a\": \"<U+202E>x^?\",\n    \"b\": \"<U+009B> <U+009B>\"\n}\n")
        let unsorted = OutputStyle(palette: nil, format: true, sorted: false, visibleControls: true)
        let formatted = try #require(Printer.formatJSON(Self.json, style: unsorted))
        #expect(
            String(decoding: formatted, as: UTF8.self)
                == "{\n    \"b\": \"\\u009b <U+009B>\",\n    \"a\": \"<U+202E>x^?\"\n}\n")
        let coloured = try #require(JSONPrinter.coloured(Self.json, style: Self.terminal))
        #expect(String(decoding: coloured, as: UTF8.self).contains("<U+202E>x^?"))
        let piped = try #require(JSONPrinter.coloured(Self.json, style: Self.piped))
        #expect(String(decoding: piped, as: UTF8.self).contains("\u{202E}x\u{7F}"))
    }

    /// Text with a title set, a screen cleared and a lone CR.
    static let hostile = Data("a \u{1B}]0;PWNED\u{07} \u{1B}[2J \r b\n".utf8)

    @Test("a body: visible on a terminal, exact when piped; binary still shows the note on a terminal")
    func body() throws {
        let options = try Options.parse(["x.test"])
        let onTerminal = Printer(
            options: options, formatter: PlainFormatter(), style: Self.terminal, parts: ["b"], terminal: true)
        #expect(onTerminal.body(Self.hostile, contentType: "text/plain") == Data("a ^[]0;PWNED^G ^[[2J ^M b\n".utf8))
        #expect(onTerminal.body(Data([0x61, 0xFF]), contentType: nil) == Data(Printer.binaryNote.utf8))
        let piped = Printer(
            options: options, formatter: PlainFormatter(), style: Self.piped, parts: ["b"], terminal: false)
        #expect(piped.body(Self.hostile, contentType: "text/plain") == Self.hostile)
    }

    /// What a `StreamPrinter` or `MessagePrinter` wrote.
    final class Written {
        var stdout = Data()
        var stderr: [String] = []
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Prints `chunks` as a streamed body in `mode`, on a terminal or piped.
    static func streamed(_ chunks: [Data], mode: StreamPrinter.Mode, terminal: Bool) async throws -> Written {
        let written = Written()
        var printer = StreamPrinter(style: terminal ? Self.terminal : Self.piped, terminal: terminal)
        printer.write = { written.stdout.append($0) }
        printer.warn = { written.stderr.append($0) }
        try await printer.body(ResponseBodyStream(chunks: chunks), mode: mode)
        return written
    }

    @Test("--stream: bytes and events visible on a terminal, split anywhere; piped bytes exact")
    func stream() async throws {
        // The CR of a CRLF and the two bytes of U+009B each split between chunks.
        let split = [Data("a\u{1B}[2J\r".utf8), Data([0x0A, 0xC2]), Data([0x9B, 0x0D])]
        let shown = try await Self.streamed(split, mode: .bytes, terminal: true)
        #expect(shown.text == "a^[[2J\r\n<U+009B>^M\n")
        let piped = try await Self.streamed(split, mode: .bytes, terminal: false)
        #expect(piped.stdout == split.reduce(Data(), +))
        let binary = try await Self.streamed([Data("a\n".utf8), Data([0xFF, 0x61])], mode: .bytes, terminal: true)
        #expect(binary.text == "a\n" + Printer.binaryNote)

        let event = Data("event: \u{1B}]0;T\u{07}\nid: \u{9B}\ndata: \u{1B}[2J\n\n".utf8)
        let events = try await Self.streamed([event], mode: .events, terminal: true)
        let fieldName = try #require(Self.terminal.palette).fieldName
        let name = { (field: String) in fieldName + field + OutputStyle.Palette.reset + ": " }
        #expect(events.text == name("event") + "^[]0;T^G\n" + name("id") + "<U+009B>\n^[[2J\n")
    }

    @Test("a WebSocket text message: visible on a terminal, exact when piped")
    func message() throws {
        for terminal in [true, false] {
            let written = Written()
            var printer = MessagePrinter(style: terminal ? Self.terminal : Self.piped, printsMessages: true)
            printer.write = { written.stdout.append($0) }
            try printer.print(.text("m \u{1B}]0;T\u{07}\u{9B}"))
            #expect(written.text == (terminal ? "m ^[]0;T^G<U+009B>\n" : "m \u{1B}]0;T\u{07}\u{9B}\n"))
        }
    }
}
