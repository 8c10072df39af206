import Foundation
import ServerAPIKit
import Testing

@testable import sapi

/// `TerminalText`, the visible form of what came from the network.
@Suite("sapi: control characters from the network shown visibly")
struct TerminalTextTests {
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
}
