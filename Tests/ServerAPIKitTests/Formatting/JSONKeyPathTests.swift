import Foundation
import ServerAPIKit
import Testing

@Suite struct JSONKeyPathTests {
    @Test(
        "Key paths parse into anchors, keys and indices",
        arguments: [
            ("a.b.c", JSONKeyPath(components: [.key("a"), .key("b"), .key("c")])),
            ("list[0]", JSONKeyPath(components: [.key("list"), .index(0)])),
            ("a.b[2].c", JSONKeyPath(components: [.key("a"), .key("b"), .index(2), .key("c")])),
            ("[0]", JSONKeyPath(components: [.index(0)])),
            ("[0][12]", JSONKeyPath(components: [.index(0), .index(12)])),
            ("matrix[1][2].x", JSONKeyPath(components: [.key("matrix"), .index(1), .index(2), .key("x")])),
            ("#.items", JSONKeyPath(anchor: .data, components: [.key("items")])),
            ("#[3]", JSONKeyPath(anchor: .data, components: [.index(3)])),
            ("#", JSONKeyPath(anchor: .data)),
            ("~.meta.page", JSONKeyPath(anchor: .root, components: [.key("meta"), .key("page")])),
            ("~", JSONKeyPath(anchor: .root)),
            ("", JSONKeyPath()),
            (#"a\.b.c"#, JSONKeyPath(components: [.key("a.b"), .key("c")])),
            (#"["a.b"].c"#, JSONKeyPath(components: [.key("a.b"), .key("c")])),
            (#"["say \"hi\""]"#, JSONKeyPath(components: [.key(#"say "hi""#)])),
            (#"a"b"#, JSONKeyPath(components: [.key(#"a"b"#)])),
            (##"\#tag"##, JSONKeyPath(components: [.key("#tag")])),
            ("🍎.名前[1]", JSONKeyPath(components: [.key("🍎"), .key("名前"), .index(1)])),
            ("with space", JSONKeyPath(components: [.key("with space")])),
        ])
    func parses(text: String, expected: JSONKeyPath) throws {
        #expect(try JSONKeyPath(parsing: text) == expected)
    }

    @Test(
        "A key path's description parses back to the same key path",
        arguments: ["a.b.c", "list[0]", "#.items", "~.meta", "#", "~", "[0].x", #"a\.b"#, ##"\#x"##, "🍎[2]", #"a\\b"#])
    func roundTrips(text: String) throws {
        let path = try JSONKeyPath(parsing: text)
        #expect(try JSONKeyPath(parsing: path.description) == path)
    }

    // Found by scripts/fuzz.sh (json): a `.` followed by a key that starts with a combining mark is one
    // character, so the description `a.\u{301}b` read back as the single key `a.\u{301}b`.
    @Test("Keys that start with a combining mark are written and read apart from the separator before them")
    func combiningMarks() throws {
        let path = JSONKeyPath(
            anchor: .root, components: [.index(0), .key("\u{0D00}x"), .key("\u{301}"), .key(".\u{301}]")])
        #expect(try JSONKeyPath(parsing: path.description) == path)
        let dotted = "a.\u{301}b"
        let bracketed = "a[\"\u{301}b\"]"
        let escaped = "a.\\\u{301}b"
        let expected = JSONKeyPath(components: [.key("a"), .key("\u{301}b")])
        #expect(try JSONKeyPath(parsing: dotted) == expected)
        #expect(try JSONKeyPath(parsing: bracketed) == expected)
        #expect(try JSONKeyPath(parsing: escaped) == expected)
    }

    @Test(
        "Bad syntax is an invalid-request error naming the key path and the problem",
        arguments: [
            ("a..b", "empty key"),
            ("a.", "ends with \".\""),
            (".a", "empty key"),
            ("a[", "unclosed \"[\""),
            ("a[x]", "is not an array index"),
            ("a[-1]", "is not an array index"),
            ("a[]", "is not an array index"),
            ("a]", "unmatched \"]\""),
            ("#x", "must be followed by"),
            ("~x", "must be followed by"),
            ("a[0]b", "must follow a \".\""),
            (#"a\"#, "lone \"\\\""),
            (#"["a"#, "unclosed quoted key"),
            ("a[99999999999999999999]", "is not an array index"),
        ])
    func rejects(text: String, reason: String) {
        let error = FormattingFixture.error { _ = try JSONKeyPath(parsing: text) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("key path \"\(text)\"") == true)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
        #expect(error?.keyPath == text)
    }
}
