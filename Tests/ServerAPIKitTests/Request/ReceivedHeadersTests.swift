import Testing

@testable import ServerAPIKit

/// Headers a transport fills from received bytes (`HTTPHeaders(receiving:)`, `addReceived`) behave as headers built
/// from fields: the same lookups, order, equality and changes.
@Suite struct ReceivedHeadersTests {
    static let lines: [(String, String)] = [
        ("Content-Type", "application/json; charset=utf-8"), ("set-cookie", "a=1"), ("Date", "Mon, 30 Nov 2026"),
        ("Set-Cookie", "b=2"), ("X-Empty", ""), ("Content-Length", "1024"),
    ]

    static func received(_ lines: [(String, String)] = lines) -> HTTPHeaders {
        var headers = HTTPHeaders(receiving: 2)
        for (name, value) in lines {
            Array(name.utf8).withUnsafeBytes { name in
                Array(value.utf8).withUnsafeBytes { value in headers.addReceived(name: name, value: value) }
            }
        }
        return headers
    }

    @Test("lookups, order and counts match headers built from the same fields")
    func sameAsFields() {
        let received = Self.received()
        let built = HTTPHeaders(Self.lines)
        #expect(received == built)
        #expect(received.hashValue == built.hashValue)
        #expect(received.fields == built.fields)
        #expect(received.count == 6)
        #expect(!received.isEmpty)
        #expect(HTTPHeaders(receiving: 4).isEmpty)
        #expect(received["content-TYPE"] == "application/json; charset=utf-8")
        #expect(received.first("Content-Typ") == nil)
        #expect(received.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(received.values(for: "x-empty") == [""])
        #expect(received.contains("date"))
        #expect(!received.contains("Dates"))
        #expect(received.everyValue(for: "Set-Cookie") { $0.hasSuffix("1") } == false)
        #expect(received.everyValue(for: "Set-Cookie") { $0.contains("=") })
        #expect(received.everyValue(for: "Absent") { _ in false })
        #expect(received.description == built.description)
    }

    @Test("a folded line continues the last value; changes keep every other field in order")
    func continuationAndChanges() {
        var received = Self.received([("A", "1"), ("B", "two")])
        let continued = Array("more  words".utf8).withUnsafeBytes { text in received.continueLastField(with: text) }
        #expect(continued)
        #expect(received["b"] == "two more  words")
        var nothing = HTTPHeaders(receiving: 1)
        let continuedNothing = Array("x".utf8).withUnsafeBytes { text in nothing.continueLastField(with: text) }
        #expect(!continuedNothing)

        received.add(name: "C", value: "3")
        #expect(received.fields.map(\.name) == ["A", "B", "C"])
        received["a"] = "one"
        received.remove(name: "B")
        #expect(received == HTTPHeaders([("A", "one"), ("C", "3")]))
        Array("after".utf8).withUnsafeBytes { name in
            Array("change".utf8).withUnsafeBytes { value in received.addReceived(name: name, value: value) }
        }
        #expect(received.fields.last == HTTPHeaders.Field(name: "after", value: "change"))
    }

    @Test("bytes that are not UTF-8 read as they always did: repaired, one field each")
    func invalidUTF8() {
        var received = HTTPHeaders(receiving: 1)
        [UInt8(0x58), 0xFF].withUnsafeBytes { name in
            [UInt8(0xC3), 0x28].withUnsafeBytes { value in received.addReceived(name: name, value: value) }
        }
        #expect(received.fields == [HTTPHeaders.Field(name: "X\u{FFFD}", value: "\u{FFFD}(")])
        #expect(received["X\u{FFFD}"] == "\u{FFFD}(")
    }
}
