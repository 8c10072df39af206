import Foundation
import ServerAPIKit
import Testing

@Suite("Content-Disposition")
struct ContentDispositionTests {
    @Test(
        "the file name a download is saved under, from odd but real header values",
        arguments: [
            ("attachment; filename=report.pdf", "report.pdf"),
            ("attachment; filename=\"annual report.pdf\"", "annual report.pdf"),
            ("ATTACHMENT; FILENAME=\"a.txt\"", "a.txt"),
            ("attachment;filename=a.txt", "a.txt"),
            ("attachment; filename = \"spaced.txt\" ", "spaced.txt"),
            ("attachment; filename=\"quote\\\"d.txt\"", "quote\"d.txt"),
            ("attachment; filename=\"back\\\\slash.txt\"", "slash.txt"),
            ("attachment; filename=\"semi;colon.txt\"", "semi;colon.txt"),
            ("attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
            ("attachment; filename*=utf-8'en'na%C3%AFve.txt", "naïve.txt"),
            ("attachment; filename*=ISO-8859-1''caf%E9.txt", "café.txt"),
            ("attachment; filename=\"fallback.txt\"; filename*=UTF-8''%E2%82%AC.txt", "€.txt"),
            ("attachment; filename*=UTF-8''%E2%82%AC.txt; filename=\"fallback.txt\"", "€.txt"),
            ("attachment; filename*=UTF-8''%FF%FE.txt; filename=\"fallback.txt\"", "fallback.txt"),
            ("attachment; filename*=UTF-8''%E2%8.txt; filename=\"fallback.txt\"", "fallback.txt"),
            ("attachment; filename*=KOI8-R''%F0.txt; filename=\"fallback.txt\"", "fallback.txt"),
            ("attachment; filename*=no-quotes.txt; filename=\"fallback.txt\"", "fallback.txt"),
            ("attachment; filename=first.txt; filename=second.txt", "first.txt"),
            ("attachment; size=12; filename=a.txt; creation-date=\"Wed, 12 Feb 1997 16:29:51 -0500\"", "a.txt"),
            ("attachment; ; filename=a.txt", "a.txt"),
            ("attachment; junk; filename=a.txt", "a.txt"),
            ("attachment; filename=\"unclosed; filename=b.txt", nil),
            ("attachment; filename=a b.txt; filename=c.txt", "c.txt"),
            ("inline; filename=page.html", "page.html"),
            ("attachment; filename=\"../../etc/passwd\"", "passwd"),
            ("attachment; filename=\"/etc/passwd\"", "passwd"),
            ("attachment; filename=\"C:\\\\Windows\\\\evil.exe\"", "evil.exe"),
            ("attachment; filename*=UTF-8''..%2F..%2Fescape.sh", "escape.sh"),
            ("attachment; filename=\"..\"", nil),
            ("attachment; filename=\"dir/..\"", nil),
            ("attachment; filename=\".bashrc\"", "bashrc"),
            ("attachment; filename=\"...\"", nil),
            ("attachment; filename=\"\"", nil),
            ("attachment; filename=\"   \"", nil),
            ("attachment; filename=\"a\u{7}b\u{0}c.txt\"", "abc.txt"),
            ("attachment; filename=\"name/\"", "name"),
            ("attachment", nil),
            ("attachment; filename=", nil),
        ] as [(String, String?)])
    func fileName(value: String, expected: String?) throws {
        let disposition = try #require(ContentDisposition(value))
        #expect(disposition.fileName == expected, "\(value)")
    }

    @Test(
        "a value that does not start with a disposition type is not a Content-Disposition",
        arguments: [
            "", "   ", "; filename=a.txt", "\"attachment\"; filename=a.txt", "=x", "attachment filename=a.txt",
            "attach/ment; filename=a.txt",
        ])
    func garbage(value: String) {
        #expect(ContentDisposition(value) == nil)
    }

    @Test("the type and parameters are read, names lowercased, values decoded")
    func parts() throws {
        let disposition = try #require(
            ContentDisposition("Form-Data; Name=\"field\"; filename*=UTF-8''a%20b; x=\"y\""))
        #expect(disposition.type == "form-data")
        #expect(disposition.parameters == ["name": "field", "filename*": "a b", "x": "y"])
    }

    @Test("a long name is cut to 200 UTF-8 bytes without splitting a character")
    func longName() throws {
        let name = String(repeating: "é", count: 150)
        let disposition = try #require(ContentDisposition("attachment; filename=\"\(name)\""))
        let fileName = try #require(disposition.fileName)
        #expect(fileName.utf8.count <= 200)
        #expect(fileName == String(repeating: "é", count: 100))
    }

    // Found by scripts/fuzz.sh (contentdisposition): `\` or `/` followed by a combining mark is one
    // character, so splitting by characters kept the separator inside the "safe" name.
    @Test("a separator followed by a combining mark still ends the path")
    func separatorJoinedToAMark() throws {
        let backslashed = "dir\\\u{0619}evil"
        let name = try #require(ContentDisposition.safeFileName(backslashed))
        #expect(name == "\u{0619}evil")
        let header = "attachment; filename=\"../\u{301}x\""
        let other = try #require(ContentDisposition(header)?.fileName)
        #expect(!other.utf8.contains(UInt8(ascii: "/")))
        #expect(other == "\u{301}x")
    }

    @Test("a name cut to 200 bytes does not end on a space, so a safe name stays as it is")
    func cutThenTrimmed() throws {
        let name = try #require(ContentDisposition.safeFileName(String(repeating: "a", count: 199) + " b"))
        #expect(name == String(repeating: "a", count: 199))
        #expect(ContentDisposition.safeFileName(name) == name)
    }

    @Test("any input parses or is refused without a crash, and a file name is never a path")
    func arbitraryInput() {
        // Seeded, so a failure can be replayed; counted, so the check below is known to have run.
        var generator = JSONScannerFuzzTests.Generator(state: 20_261_127)
        // Built from pieces of real values rather than single characters: random characters almost never
        // spell "attachment; filename=", and the check is about the names that come out.
        let types = ["attachment", "inline", "", "\""]
        let parameters = [
            "; filename=", ";filename=", "; filename*=UTF-8''", "; filename*=", "; name=", "; ; filename=",
        ]
        let pieces = [
            "\"", "\\", "/", ".", "..", "%2F", "%5C", "%2E", "%E2%82%AC", "%E2", "a", "é", " ", ";", "=", "'",
            "\u{0}", "\u{7}", "\u{301}", "\u{0619}", "filename=",
        ]
        var named = 0
        var unnamed = 0
        for _ in 0..<2_000 {
            var value = types.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 0...2, using: &generator) {
                value += parameters.randomElement(using: &generator)!
                for _ in 0..<Int.random(in: 0..<10, using: &generator) {
                    value += pieces.randomElement(using: &generator)!
                }
            }
            guard let name = ContentDisposition(value)?.fileName else {
                unnamed += 1
                continue
            }
            named += 1
            let bytes = Array(name.utf8)
            #expect(
                !bytes.contains(UInt8(ascii: "/")) && !bytes.contains(UInt8(ascii: "\\"))
                    && bytes.first != UInt8(ascii: ".") && !bytes.isEmpty, "\(value)")
        }
        // Both outcomes occur: an input that never yields a name would check nothing.
        #expect(named >= 100, "\(named) of 2000 inputs gave a file name")
        #expect(unnamed > 0)
    }
}
