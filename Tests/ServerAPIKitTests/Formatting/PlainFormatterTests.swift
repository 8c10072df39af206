import Foundation
import ServerAPIKit
import Testing

@Suite struct PlainFormatterTests {
    let formatter = PlainFormatter()
    typealias Fixture = FormattingFixture

    // MARK: Data and text

    @Test("Data is the body, unchanged")
    func data() throws {
        let bytes = Data([0, 0xFF, 0x7B])
        #expect(try formatter.format(Fixture.response(bytes), for: Fixture.api(format: .data)) == .data(bytes))
    }

    @Test(
        "Text is decoded with the Content-Type charset",
        arguments: [
            ([0x63, 0x61, 0x66, 0xC3, 0xA9, 0x20, 0xF0, 0x9F, 0x8D, 0x8E], nil, "café 🍎"),
            ([0x63, 0x61, 0x66, 0xC3, 0xA9], "text/plain; charset=utf-8", "café"),
            ([0x63, 0x61, 0x66, 0xC3, 0xA9], #"text/plain; charset="UTF-8""#, "café"),
            ([0xEF, 0xBB, 0xBF, 0x61], "text/plain", "a"),
            ([0x63, 0x61, 0x66, 0xE9], "text/plain; charset=iso-8859-1", "café"),
            ([0x63, 0x61, 0x66, 0xE9], "text/plain;charset=Latin1", "café"),
            ([0x80, 0x20, 0x93, 0x61, 0x94], "text/plain; charset=windows-1252", "€ \u{201C}a\u{201D}"),
            ([0x68, 0x69], "text/plain; charset=us-ascii", "hi"),
            ([0xFF, 0xFE, 0x68, 0x00, 0xE9, 0x00], "text/plain; charset=utf-16", "hé"),
            ([0xFE, 0xFF, 0x00, 0x68, 0x00, 0xE9], "text/plain; charset=utf-16", "hé"),
            ([0x00, 0x68, 0x00, 0xE9], "text/plain; charset=utf-16", "hé"),
            ([0x68, 0x00, 0x3D, 0xD8, 0x00, 0xDE], "text/plain; charset=UTF-16LE", "h😀"),
            ([0x00, 0x68, 0xD8, 0x3D, 0xDE, 0x00], "text/plain; charset=utf-16be", "h😀"),
            ([0x00, 0x00, 0x00, 0x68], "text/plain; charset=utf-32", "h"),
            ([0x68, 0x00, 0x00, 0x00], "text/plain; charset=utf-32le", "h"),
            ([], "text/plain", ""),
        ] as [([UInt8], String?, String)])
    func text(bytes: [UInt8], contentType: String?, expected: String) throws {
        let response = Fixture.response(Data(bytes), contentType: contentType)
        #expect(try formatter.format(response, for: Fixture.api(format: .string)) == .string(expected))
    }

    @Test(
        "Text that is not valid in its charset is a decoding error, not a repaired string",
        arguments: [
            ([0x61, 0x62, 0xFF, 0x63], nil, "not valid UTF-8 text: invalid byte 0xFF at offset 2"),
            ([0x61, 0xC3], "text/plain; charset=utf-8", "not valid UTF-8 text: invalid byte 0xC3 at offset 1"),
            ([0x61, 0xED, 0xA0, 0x80], "text/plain", "invalid byte 0xED at offset 1"),
            ([0x68, 0xE9], "text/plain; charset=us-ascii", "not valid US-ASCII text: byte 0xE9 at offset 1"),
            ([0x00, 0x68, 0x00], "text/plain; charset=utf-16", "odd number of bytes"),
            ([0x3D, 0xD8, 0x68, 0x00], "text/plain; charset=utf-16le", "unpaired surrogate"),
            ([0x00, 0x11, 0x00, 0x00], "text/plain; charset=utf-32be", "is not a code point"),
            ([0x68], "text/plain; charset=koi8-r", #"charset "koi8-r" is not supported"#),
        ] as [([UInt8], String?, String)])
    func invalidText(bytes: [UInt8], contentType: String?, message: String) {
        let response = Fixture.response(Data(bytes), contentType: contentType)
        let error = Fixture.error { _ = try formatter.format(response, for: Fixture.api(format: .string)) }
        #expect(error?.kind == .decoding)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        #expect(error?.status == 200)
    }

    // MARK: JSON

    static let body =
        #"{"data":{"items":[{"id":1,"name":"Ada","price":9.5},{"id":2,"name":"Bob","price":3}]},"page":2}"#

    @Test("JSON is the value at the call's key path, from the root")
    func json() throws {
        let response = Fixture.response(Self.body)
        #expect(try formatter.format(response, for: Fixture.api("data.items[1].name")) == .json("Bob"))
        #expect(try formatter.format(response, for: Fixture.api("page")) == .json(2))
        #expect(try formatter.format(response, for: Fixture.api("~.page")) == .json(2))
        #expect(try formatter.format(response, for: Fixture.api("#.page")) == .json(2))
        let whole = try formatter.format(response, for: Fixture.api())
        #expect(whole == .json(try JSONValue(parsing: Data(Self.body.utf8))))
        #expect(try formatter.format(Fixture.response("[[1],[2,3]]"), for: Fixture.api("[1][1]")) == .json(3))
    }

    @Test("JSON in another declared charset is transcoded before it is read")
    func jsonInLatin1() throws {
        let response = Fixture.response(
            Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xE9, 0x22, 0x7D]),
            contentType: "application/json; charset=iso-8859-1")
        #expect(try formatter.format(response, for: Fixture.api("a")) == .json("é"))
    }

    @Test("A missing key or a wrong type is a decoding error naming the key path and what was found")
    func jsonMisses() {
        let response = Fixture.response(Self.body)
        let missing = Fixture.error { _ = try formatter.format(response, for: Fixture.api("data.shop")) }
        #expect(missing?.kind == .decoding)
        #expect(missing?.keyPath == "data.shop")
        #expect(
            missing?.message
                == #"key path "data.shop": no key "shop" in the object at "data", which has keys ["items"]"#)
        #expect(missing?.bodyExcerpt == Self.body)
        let range = Fixture.error { _ = try formatter.format(response, for: Fixture.api("data.items[2]")) }
        #expect(
            range?.message
                == #"key path "data.items[2]": index 2 is out of range: the array at "data.items" has 2 elements"#)
        let type = Fixture.error { _ = try formatter.format(response, for: Fixture.api("page.number")) }
        #expect(type?.message == #"key path "page.number": expected an object at "page" but found a number"#)
    }

    @Test("A key path with bad syntax is an invalid-request error")
    func badKeyPath() {
        let error = Fixture.error {
            _ = try formatter.format(Fixture.response(Self.body), for: Fixture.api("data..items"))
        }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.keyPath == "data..items")
    }

    @Test("Malformed JSON is a decoding error with the byte offset")
    func malformed() {
        let error = Fixture.error { _ = try formatter.format(Fixture.response(#"{"a":1,"b":}"#), for: Fixture.api()) }
        #expect(error?.kind == .decoding)
        #expect(error?.message == #"the response is not valid JSON: unexpected "}" (expected a value) at byte 11"#)
    }

    @Test("An empty body is a decoding error for JSON, except for HEAD, 204, 205 and 304, which give null")
    func emptyBody() throws {
        let error = Fixture.error { _ = try formatter.format(Fixture.response(""), for: Fixture.api()) }
        #expect(error?.kind == .decoding)
        #expect(error?.message == "the response body is empty (status 200), so it has no JSON")
        #expect(try formatter.format(Fixture.response("", status: 204), for: Fixture.api()) == .json(.null))
        #expect(try formatter.format(Fixture.response("", status: 304), for: Fixture.api()) == .json(.null))
        #expect(try formatter.format(Fixture.response(""), for: Fixture.api(method: .head)) == .json(.null))
        let withKeyPath = Fixture.error {
            _ = try formatter.format(Fixture.response("", status: 204), for: Fixture.api("a"))
        }
        #expect(withKeyPath?.kind == .decoding)
        #expect(try formatter.format(Fixture.response(""), for: Fixture.api(format: .data)) == .data(Data()))
        #expect(try formatter.format(Fixture.response(""), for: Fixture.api(format: .string)) == .string(""))
    }

    @Test("A download is its file, whatever the format")
    func download() throws {
        let file = URL(fileURLWithPath: "/tmp/does-not-matter.json")
        let response = TransportResponse(status: 200, body: .file(file, bytes: 10), url: Fixture.url)
        #expect(try formatter.format(response, for: Fixture.api("a.b")) == .file(file))
        #expect(try formatter.format(response, for: Fixture.api(format: .string)) == .file(file))
    }

    // MARK: Models

    @Test("A model is decoded at the key path")
    func decode() throws {
        let response = Fixture.response(Self.body)
        let items = try formatter.decode([FixtureProduct].self, from: response, for: Fixture.api("data.items"))
        #expect(
            items == [FixtureProduct(id: 1, name: "Ada", price: 9.5), FixtureProduct(id: 2, name: "Bob", price: 3)])
        let item = try formatter.decode(FixtureProduct.self, from: response, for: Fixture.api("data.items[1]"))
        #expect(item.name == "Bob")
        #expect(try formatter.decode(Int.self, from: response, for: Fixture.api("page")) == 2)
    }

    @Test("The model's bytes are decoded as they are, not re-serialized: a UInt64 beyond Int64 stays exact")
    func noReserialization() throws {
        struct Big: Decodable {
            var id: UInt64
            var amount: Decimal
        }
        let response = Fixture.response(
            #"{"data":{"id":18446744073709551615,"amount":0.1000000000000000055511151231257827}}"#)
        let big = try formatter.decode(Big.self, from: response, for: Fixture.api("data"))
        #expect(big.id == .max)
        #expect(big.amount == Decimal(string: "0.1000000000000000055511151231257827"))
    }

    @Test("A model that does not fit names the key path and the coding path inside the model")
    func decodeMismatch() {
        let body = #"{"data":{"items":[{"id":1,"name":"Ada","price":9.5},{"id":2,"name":"Bob","price":"free"}]}}"#
        let error = Fixture.error {
            _ = try formatter.decode(
                [FixtureProduct].self, from: Fixture.response(body), for: Fixture.api("data.items"))
        }
        #expect(error?.kind == .decoding)
        #expect(error?.keyPath == "data.items[1].price")
        #expect(error?.message.contains(#"at key path "data.items""#) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(#"(at "[1].price" inside it)"#) == true, "\(error?.message ?? "")")
        #expect(error?.underlying is DecodingError)

        let missingKey = Fixture.error {
            _ = try formatter.decode(
                FixtureProduct.self, from: Fixture.response(#"{"id":1,"name":"Ada"}"#), for: Fixture.api())
        }
        #expect(missingKey?.keyPath == "price")
        #expect(missingKey?.message.contains(#"no key "price""#) == true, "\(missingKey?.message ?? "")")
    }

    @Test("A model in malformed JSON is a decoding error with the byte offset, with or without a key path")
    func decodeMalformed() {
        for keyPath in [nil, "a"] {
            let error = Fixture.error {
                _ = try formatter.decode(
                    [Int].self, from: Fixture.response(#"{"a":[1,2,]}"#), for: Fixture.api(keyPath))
            }
            #expect(error?.kind == .decoding)
            #expect(error?.message.contains("at byte 10") == true, "\(error?.message ?? "")")
        }
    }

    @Test("Models use the decoder the formatter makes")
    func customDecoder() throws {
        struct Account: Decodable, Equatable {
            var userName: String
            var createdAt: Date
        }
        let formatter = PlainFormatter.plain {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            decoder.dateDecodingStrategy = .secondsSince1970
            return decoder
        }
        let response = Fixture.response(#"{"user":{"user_name":"ada","created_at":86400}}"#)
        let account = try formatter.decode(Account.self, from: response, for: Fixture.api("user"))
        #expect(account == Account(userName: "ada", createdAt: Date(timeIntervalSince1970: 86400)))
    }

    @Test("An empty body decodes as null for HEAD and 204, and is an error otherwise")
    func decodeEmpty() throws {
        #expect(try formatter.decode(Int?.self, from: Fixture.response("", status: 204), for: Fixture.api()) == nil)
        let required = Fixture.error {
            _ = try formatter.decode(Int.self, from: Fixture.response("", status: 204), for: Fixture.api())
        }
        #expect(required?.kind == .decoding)
        let error = Fixture.error {
            _ = try formatter.decode(Int?.self, from: Fixture.response(""), for: Fixture.api())
        }
        #expect(error?.message == "the response body is empty (status 200), so it has no Optional<Int> to decode")
    }

    @Test("A model is decoded from a downloaded file")
    func decodeDownload() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("plain-\(UUID().uuidString).json")
        try Data(Self.body.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let response = TransportResponse(status: 200, body: .file(file, bytes: 10), url: Fixture.url)
        #expect(try formatter.decode(String.self, from: response, for: Fixture.api("data.items[0].name")) == "Ada")
        let missing = TransportResponse(
            status: 200, body: .file(file.appendingPathExtension("gone"), bytes: 1), url: Fixture.url)
        let error = Fixture.error { _ = try formatter.decode(String.self, from: missing, for: Fixture.api()) }
        #expect(error?.kind == .fileSystem)
    }
}
