import Testing

@testable import ServerAPICurl

/// How the curl backend reads the header lines libcurl hands it (the pure part of its header callback).
@Suite struct CurlHeadLineTests {
    static func read(_ line: String) -> CurlHeadLine.Text {
        Array(line.utf8).withUnsafeBytes { CurlHeadLine($0).text }
    }

    @Test("Status lines give their three-digit code, or 0 when they have none")
    func statusLines() {
        #expect(Self.read("HTTP/1.1 200 OK\r\n") == .status(200))
        #expect(Self.read("HTTP/2 404\r\n") == .status(404))
        #expect(Self.read("HTTP/1.1 2x0 Odd\r\n") == .status(0))
        #expect(Self.read("HTTP/1.1\r\n") == .status(0))
        #expect(Self.read("HTTP/1.1 \r\n") == .status(0))
    }

    @Test("Only a line that starts with HTTP/ is a status line: shorter or other prefixes are fields or nothing")
    func statusLinePrefix() {
        #expect(Self.read("HTTP/\r\n") == .status(0))
        #expect(Self.read("HTTP\r\n") == .ignored)
        #expect(Self.read("HTTP:x\r\n") == .field(name: "HTTP", value: "x"))
        #expect(Self.read("HTTPS/1.1 200\r\n") == .ignored)
        #expect(Self.read("http/1.1 200 OK\r\n") == .ignored)
        #expect(Self.read("HTTX/1.1: 200\r\n") == .field(name: "HTTX/1.1", value: "200"))
    }

    @Test("Fields are split at the first colon and their values trimmed; folded lines continue a value")
    func fields() {
        #expect(Self.read("Content-Type: text/plain \t\r\n") == .field(name: "Content-Type", value: "text/plain"))
        #expect(Self.read("Location:http://a/b:c\n") == .field(name: "Location", value: "http://a/b:c"))
        #expect(Self.read("X-Empty:\r\n") == .field(name: "X-Empty", value: ""))
        #expect(Self.read(" \tmore text  \r\n") == .continuation("more text"))
        #expect(Self.read("no colon here\r\n") == .ignored)
    }

    @Test("A blank line ends a head, whatever its line break")
    func blankLines() {
        #expect(Self.read("\r\n") == .end)
        #expect(Self.read("\n") == .end)
        #expect(Self.read("") == .end)
    }
}
