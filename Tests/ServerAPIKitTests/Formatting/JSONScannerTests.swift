import Foundation
import Testing

@testable import ServerAPIKit

@Suite struct JSONScannerTests {
    // MARK: Malformed JSON

    @Test(
        "Malformed JSON is a decoding error that says what and at which byte",
        arguments: [
            (#"{"a":[1,2"#, 9, "unexpected end of the body"),
            (#"{"a":1} x"#, 8, "expected the end of the body"),
            (#"{"a":1}}"#, 7, "expected the end of the body"),
            (#"["\x"]"#, 2, #"invalid escape \x"#),
            (#"["\uD800"]"#, 2, "lone high surrogate"),
            (#"["\uD800x"]"#, 2, "lone high surrogate"),
            (#"["\uDC00"]"#, 2, "lone low surrogate"),
            (#"["\uD800\u0041"]"#, 2, "not a low surrogate"),
            (#"["\u12"]"#, 2, "four hex digits"),
            ("[\"a\u{1}b\"]", 3, "control character"),
            (#"["abc"#, 5, "inside a string"),
            ("[01]", 1, "leading zero"),
            ("[1,]", 3, "expected a value"),
            (#"{"a":1,}"#, 7, "expected a key"),
            (#"{"a" 1}"#, 5, #"expected ":""#),
            ("{a:1}", 1, "expected a key"),
            ("['a']", 1, "expected a value"),
            ("[1 2]", 3, #"expected "," or "]""#),
            (#"{"a":1 "b":2}"#, 7, #"expected "," or "}""#),
            ("[tru]", 4, #"expected "true""#),
            ("nul", 3, #"expected "null""#),
            ("-", 1, "expected a digit"),
            ("1.", 2, #"a digit after ".""#),
            ("1e", 2, "a digit in the exponent"),
            ("+1", 0, "expected a value"),
            ("", 0, "unexpected end of the body"),
            ("   ", 3, "unexpected end of the body"),
            ("NaN", 0, "expected a value"),
        ])
    func malformed(text: String, offset: Int, reason: String) {
        let error = FormattingFixture.error { try JSONScanner.validate(Data(text.utf8)) }
        #expect(error?.kind == .decoding)
        #expect(error?.message.contains("at byte \(offset)") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test("Invalid UTF-8 inside a string is rejected, with the offset of the bad byte")
    func invalidUTF8() {
        for bytes: [UInt8] in [
            [0xFF], [0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x28, 0xA1],
        ] {
            let body = Data([UInt8(ascii: "\""), UInt8(ascii: "x")] + bytes + [UInt8(ascii: "\"")])
            let error = FormattingFixture.error { try JSONScanner.validate(body) }
            #expect(error?.message.contains("not valid UTF-8 at byte 2") == true, "\(bytes): \(error?.message ?? "")")
        }
    }

    @Test("Valid documents pass: whitespace, a byte order mark, every kind of value, escapes")
    func valid() throws {
        let texts = [
            " { \"a\" : [ 1 , -2.5e+3 , 0 , 0.0 , 1E-2 , true , false , null , \"x\" ] , \"b\" : { } , \"c\" : [ ] } \n",
            "\u{FEFF}{\"a\":1}",
            #""\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#,
            "\"café 😀 名前\"",
            "0", "-0", "true", "null", "[]", "{}",
        ]
        for text in texts { try JSONScanner.validate(Data(text.utf8)) }
    }

    @Test("Nesting is accepted to 512 levels and rejected beyond, without exhausting the stack")
    func deepNesting() throws {
        func nested(_ depth: Int) -> Data {
            Data((String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)).utf8)
        }
        try JSONScanner.validate(nested(512))
        #expect(try JSONValue(parsing: nested(512)) != .null)
        for depth in [513, 100_000] {
            let error = FormattingFixture.error { try JSONScanner.validate(nested(depth)) }
            #expect(error?.message.contains("nested more than 512 levels") == true)
            let parseError = FormattingFixture.error { _ = try JSONValue(parsing: nested(depth)) }
            #expect(parseError?.kind == .decoding)
        }
        let deepObject = Data(
            (String(repeating: #"{"a":"#, count: 300) + "1" + String(repeating: "}", count: 300)).utf8)
        let path = JSONKeyPath(components: Array(repeating: .key("a"), count: 300))
        #expect(try JSONScanner.value(at: path, in: deepObject) == .int(1))
    }

    // MARK: Parsing

    @Test(
        "Numbers: integers that fit stay exact, others become doubles",
        arguments: [
            ("9223372036854775807", JSONValue.int(.max)),
            ("-9223372036854775808", .int(.min)),
            ("9223372036854775808", .double(9.223372036854775808e18)),
            ("-9223372036854775809", .double(-9.223372036854775808e18)),
            ("123456789012345678901234567890", .double(1.2345678901234568e29)),
            ("0", .int(0)),
            ("-0", .int(0)),
            ("42", .int(42)),
            ("1.0", .double(1)),
            ("1.5", .double(1.5)),
            ("1e2", .double(100)),
            ("-2.5E-3", .double(-0.0025)),
        ])
    func numbers(text: String, expected: JSONValue) throws {
        #expect(try JSONValue(parsing: Data(text.utf8)) == expected)
    }

    @Test("A number too large for a Double is a decoding error")
    func hugeExponent() {
        let error = FormattingFixture.error { _ = try JSONValue(parsing: Data("[1e400]".utf8)) }
        #expect(error?.message.contains("the number 1e400 does not fit in a Double at byte 1") == true)
    }

    @Test("Strings decode escapes, surrogate pairs, emoji; keys are decoded too; the first of two equal keys counts")
    func strings() throws {
        let text = #"{"a\"b":"\u00e9\ud83d\ude00\n\/", "名前":"🍎", "dup":1, "dup":2, "\u540d":"escaped key"}"#
        let value = try JSONValue(parsing: Data(text.utf8))
        #expect(value["a\"b"] == .string("é😀\n/"))
        #expect(value["名前"] == .string("🍎"))
        #expect(value["dup"] == .int(1))
        #expect(value["名"] == .string("escaped key"))
    }

    // MARK: Key paths

    static let document = #"""
        {"code":0,"data":{"shop":{"id":7,"name":"Ada's"},"list":[10,20,30],"title":"x","a\"b":{"名前":"🍎"},
         "\ud83c\udf4e":"apple","matrix":[[1,2],[3,4]]}}
        """#

    @Test("The range of a key path is the exact text of its value")
    func range() throws {
        let data = Data(Self.document.utf8)
        func text(_ path: String) throws -> String {
            String(decoding: data[try JSONScanner.range(of: JSONKeyPath(parsing: path), in: data)], as: UTF8.self)
        }
        #expect(try text("data.shop") == #"{"id":7,"name":"Ada's"}"#)
        #expect(try text("data.list[1]") == "20")
        #expect(try text("data.matrix[1][0]") == "3")
        #expect(try text(#"data.a"b.名前"#) == #""🍎""#)
        #expect(try text("data.🍎") == #""apple""#)
        #expect(try text("") == Self.document)
        // A slice keeps the indices of its parent: ranges are indices of the data passed in.
        let slice = data.dropFirst(0)[data.startIndex...]
        #expect(try JSONScanner.range(of: JSONKeyPath(parsing: "data.list[0]"), in: slice).count == 2)
    }

    @Test("A missing key names the key path and the keys that are there")
    func missingKey() {
        let error = FormattingFixture.error {
            _ = try JSONScanner.value(at: JSONKeyPath(parsing: "data.shop.items"), in: Data(Self.document.utf8))
        }
        #expect(error?.kind == .decoding)
        #expect(error?.keyPath == "data.shop.items")
        #expect(
            error?.message
                == #"key path "data.shop.items": no key "items" in the object at "data.shop", which has keys ["id", "name"]"#
        )
    }

    @Test("A wrong type names the key path, what was expected and what was found")
    func wrongType() {
        let data = Data(Self.document.utf8)
        let cases = [
            ("data.title[0]", #"key path "data.title[0]": expected an array at "data.title" but found a string"#),
            ("data.list.x", #"key path "data.list.x": expected an object at "data.list" but found an array"#),
            ("[0]", #"key path "[0]": expected an array at the root but found an object"#),
            ("code.x", #"key path "code.x": expected an object at "code" but found a number"#),
        ]
        for (path, message) in cases {
            let error = FormattingFixture.error { _ = try JSONScanner.value(at: JSONKeyPath(parsing: path), in: data) }
            #expect(error?.message == message)
            #expect(error?.keyPath == path)
        }
    }

    @Test("An index out of range names the index and the array's length")
    func indexOutOfRange() {
        let error = FormattingFixture.error {
            _ = try JSONScanner.value(at: JSONKeyPath(parsing: "data.list[5]"), in: Data(Self.document.utf8))
        }
        #expect(
            error?.message
                == #"key path "data.list[5]": index 5 is out of range: the array at "data.list" has 3 elements"#)
        let empty = FormattingFixture.error {
            _ = try JSONScanner.value(at: JSONKeyPath(parsing: "[0]"), in: Data("[]".utf8))
        }
        #expect(empty?.message == #"key path "[0]": index 0 is out of range: the array at the root has 0 elements"#)
    }

    @Test("A document is validated even past the value at the key path")
    func validatesEverything() {
        let error = FormattingFixture.error {
            _ = try JSONScanner.value(at: JSONKeyPath(parsing: "a"), in: Data(#"{"a":1,"b":[1,}"#.utf8))
        }
        #expect(error?.message.contains("at byte 14") == true)
    }

    @Test("JSONValue.value(at:) reports misses the way the scanner does")
    func valueAtKeyPath() throws {
        let value = try JSONValue(parsing: Data(Self.document.utf8))
        #expect(try value.value(at: JSONKeyPath(parsing: "data.list[2]")) == .int(30))
        let missing = FormattingFixture.error { _ = try value.value(at: JSONKeyPath(parsing: "data.shop.items")) }
        #expect(
            missing?.message
                == #"key path "data.shop.items": no key "items" in the object at "data.shop", which has keys ["id", "name"]"#
        )
        let range = FormattingFixture.error { _ = try value.value(at: JSONKeyPath(parsing: "data.list[3]")) }
        #expect(range?.message.contains("index 3 is out of range") == true)
    }

    @Test("Envelope codes normalize to the same text for equal numbers")
    func normalizedNumbers() {
        let cases = [
            ("0", "0"), ("-0", "0"), ("0.0", "0"), ("-0.0", "0"), ("1e3", "1000"), ("1.50", "1.5"), ("007", "007"),
            ("12345678901234567890", "12345678901234567890"), ("ok", "ok"), ("", ""), ("1.", "1."),
        ]
        for (literal, normalized) in cases { #expect(JSONCursor.normalizedNumber(literal) == normalized) }
    }
}
