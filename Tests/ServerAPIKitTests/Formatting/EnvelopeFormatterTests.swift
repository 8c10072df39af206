import Foundation
import ServerAPIKit
import Testing

@Suite struct EnvelopeFormatterTests {
    let formatter: EnvelopeFormatter = .envelope()
    typealias Fixture = FormattingFixture

    static let body = #"""
        {"code":0,"msg":"ok","data":{"shop":{"id":7,"name":"Corner","products":[{"id":1,"name":"Tea","price":2.5},{"id":2,"name":"Cake","price":4}]},"items":[1,2,3]},"meta":{"page":1}}
        """#

    // MARK: Codes

    @Test(
        "Success codes match numbers and strings with the same normalized text",
        arguments: [#"0"#, #""0""#, #"0.0"#, #"-0"#, #"0e5"#, #""0.0""#])
    func successCodes(code: String) throws {
        let response = Fixture.response(#"{"code":\#(code),"msg":"ok","data":{"n":1}}"#)
        #expect(try formatter.format(response, for: Fixture.api("n")) == .json(1))
    }

    @Test(
        "A non-success code is a business error with the code and the envelope's message",
        arguments: [
            (#"1001"#, "1001"), (#""1001""#, "1001"), (#"1001.0"#, "1001"), (#"1e3"#, "1000"), (#""E_AUTH""#, "E_AUTH"),
            (#""00""#, "00"), (#"-1"#, "-1"), (#"0.5"#, "0.5"), ("true", "true"),
        ])
    func businessError(code: String, normalized: String) {
        let response = Fixture.response(#"{"code":\#(code),"msg":"token expired","data":null}"#, status: 200)
        let error = Fixture.error { _ = try formatter.format(response, for: Fixture.api()) }
        #expect(error?.kind == .business)
        #expect(error?.code == normalized)
        #expect(error?.message == "token expired")
        #expect(error?.status == 200)
        #expect(error?.url == Fixture.url)
    }

    @Test("A business error without a message gets a default one; the business error comes before key path errors")
    func businessDefaults() {
        for body in [#"{"code":7}"#, #"{"code":7,"msg":null}"#, #"{"code":7,"msg":""}"#] {
            let error = Fixture.error {
                _ = try formatter.format(Fixture.response(body), for: Fixture.api("no.such.path"))
            }
            #expect(error?.kind == .business)
            #expect(error?.message == "the server answered with business code 7")
        }
        let decoding = Fixture.error {
            _ = try formatter.decode(
                [Int].self, from: Fixture.response(#"{"code":3,"msg":"no"}"#), for: Fixture.api("x"))
        }
        #expect(decoding?.kind == .business)
        #expect(decoding?.code == "3")
    }

    @Test("Custom keys and success codes, including string and boolean codes")
    func customKeys() throws {
        let custom = EnvelopeFormatter(
            codeKey: "status", messageKey: "message", dataKey: "result", successCodes: ["OK", "200"])
        let ok = Fixture.response(#"{"status":"OK","message":"fine","result":{"v":[true]}}"#)
        #expect(try custom.format(ok, for: Fixture.api("v[0]")) == .json(true))
        #expect(try custom.format(Fixture.response(#"{"status":200.0,"result":1}"#), for: Fixture.api()) == .json(1))
        let failed = Fixture.error {
            _ = try custom.format(Fixture.response(#"{"status":"ok","message":"lower case"}"#), for: Fixture.api())
        }
        #expect(failed?.kind == .business)
        #expect(failed?.code == "ok")
        #expect(failed?.message == "lower case")

        let flag = EnvelopeFormatter(codeKey: "success", messageKey: "error", successCodes: ["true"])
        #expect(try flag.format(Fixture.response(#"{"success":true,"data":5}"#), for: Fixture.api()) == .json(5))
        let denied = Fixture.error {
            _ = try flag.format(Fixture.response(#"{"success":false,"error":"denied"}"#), for: Fixture.api())
        }
        #expect(denied?.code == "false")
        #expect(denied?.message == "denied")

        // Success codes are normalized as the codes are.
        let decimal = EnvelopeFormatter(successCodes: ["0.0", "1e1"])
        #expect(try decimal.format(Fixture.response(#"{"code":10,"data":1}"#), for: Fixture.api()) == .json(1))
        #expect(decimal.successCodes == ["0", "10"])
    }

    @Test("Keys are compared after JSON escapes are decoded, and may be Unicode")
    func escapedKeys() throws {
        let response = Fixture.response(#"{"co\u0064e":0,"\u6570\u636e":{"a\"b":"found"}}"#)
        let unicode = EnvelopeFormatter(dataKey: "数据")
        #expect(try unicode.format(response, for: Fixture.api(#"a"b"#)) == .json("found"))
        #expect(try unicode.format(response, for: Fixture.api(#"["a\"b"]"#)) == .json("found"))
    }

    // MARK: Shape

    @Test(
        "A body that is not an envelope is a decoding error that says why",
        arguments: [
            (#"[{"code":0}]"#, "not a business envelope: the body is an array, not an object"),
            (#""code""#, "not a business envelope: the body is a string, not an object"),
            (#"{"msg":"ok","data":1}"#, #"not a business envelope: missing key "code""#),
            (#"{}"#, #"not a business envelope: missing key "code""#),
            (#"{"data":{"code":0}}"#, #"not a business envelope: missing key "code""#),
            (#"{"code":null}"#, #"not a business envelope: the code "code" is null, not a number or a string"#),
            (#"{"code":{"v":0}}"#, #"not a business envelope: the code "code" is an object, not a number or a string"#),
            (
                #"{"code":0,"data":[1,}"#,
                "the response is not valid JSON: unexpected \"}\" (expected a value) at byte 20"
            ),
            (
                #"{"code":0} trailing"#,
                "the response is not valid JSON: unexpected \"t\" (expected the end of the body after the JSON value) at byte 11"
            ),
            (#"{"code":0,"msg":"\ud800"}"#, "lone high surrogate"),
            (#"{"code":0,"data":{"#, "unexpected end of the body"),
        ])
    func notAnEnvelope(body: String, message: String) {
        let error = Fixture.error { _ = try formatter.format(Fixture.response(body), for: Fixture.api()) }
        #expect(error?.kind == .decoding)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        #expect(error?.bodyExcerpt == body)
    }

    @Test("An empty body is a decoding error, except for HEAD and 204 (null)")
    func emptyBody() throws {
        let error = Fixture.error { _ = try formatter.format(Fixture.response(""), for: Fixture.api()) }
        #expect(error?.kind == .decoding)
        #expect(error?.message.contains("the response body is empty (status 200)") == true, "\(error?.message ?? "")")
        #expect(try formatter.format(Fixture.response("", status: 204), for: Fixture.api()) == .json(.null))
        #expect(try formatter.format(Fixture.response(""), for: Fixture.api(method: .head)) == .json(.null))
        #expect(try formatter.decode(String?.self, from: Fixture.response("", status: 204), for: Fixture.api()) == nil)
        let decodeEmpty = Fixture.error {
            _ = try formatter.decode(String.self, from: Fixture.response(""), for: Fixture.api())
        }
        #expect(decodeEmpty?.message == "the response body is empty (status 200), so it has no envelope")
    }

    // MARK: Key paths

    @Test("Key paths are relative to the data key; # says so explicitly; ~ starts at the root")
    func keyPaths() throws {
        let response = Fixture.response(Self.body)
        #expect(try formatter.format(response, for: Fixture.api("items[2]")) == .json(3))
        #expect(try formatter.format(response, for: Fixture.api("#.items[2]")) == .json(3))
        #expect(try formatter.format(response, for: Fixture.api("#.shop.name")) == .json("Corner"))
        #expect(try formatter.format(response, for: Fixture.api("~.meta.page")) == .json(1))
        #expect(try formatter.format(response, for: Fixture.api("~.msg")) == .json("ok"))
        let data = try JSONValue(parsing: Data(Self.body.utf8))
        #expect(try formatter.format(response, for: Fixture.api()) == .json(data["data"]!))
        #expect(try formatter.format(response, for: Fixture.api("#")) == .json(data["data"]!))
        #expect(try formatter.format(response, for: Fixture.api("~")) == .json(data))
    }

    @Test("A data value that is an array is indexed directly")
    func arrayData() throws {
        let response = Fixture.response(#"{"code":0,"data":[{"n":1},{"n":2}]}"#)
        #expect(try formatter.format(response, for: Fixture.api("[1].n")) == .json(2))
        #expect(
            try formatter.decode([Int].self, from: Fixture.response(#"{"code":0,"data":[4,5]}"#), for: Fixture.api())
                == [4, 5])
    }

    @Test("Without a data key the data value is null; a key path below it is an error naming the key path")
    func missingData() throws {
        let response = Fixture.response(#"{"code":0,"msg":"ok"}"#)
        #expect(try formatter.format(response, for: Fixture.api()) == .json(.null))
        #expect(try formatter.decode(Int?.self, from: response, for: Fixture.api()) == nil)
        let error = Fixture.error { _ = try formatter.format(response, for: Fixture.api("items")) }
        #expect(error?.kind == .decoding)
        #expect(error?.keyPath == "data.items")
        #expect(
            error?.message
                == #"key path "data.items": no key "data" in the object at the root, which has keys ["code", "msg"]"#)
        let nullData = Fixture.error {
            _ = try formatter.format(Fixture.response(#"{"code":0,"data":null}"#), for: Fixture.api("items"))
        }
        #expect(nullData?.message == #"key path "data.items": expected an object at "data" but found null"#)
    }

    @Test("A missing key, a wrong type or an index out of range names the key path and what was found")
    func misses() {
        let response = Fixture.response(Self.body)
        let cases = [
            (
                "shop.items",
                #"key path "data.shop.items": no key "items" in the object at "data.shop", which has keys ["id", "name", "products"]"#
            ),
            (
                "items[3]",
                #"key path "data.items[3]": index 3 is out of range: the array at "data.items" has 3 elements"#
            ),
            (
                "shop.name[0]",
                #"key path "data.shop.name[0]": expected an array at "data.shop.name" but found a string"#
            ),
            ("~.meta.page.x", #"key path "meta.page.x": expected an object at "meta.page" but found a number"#),
            ("~[0]", #"key path "[0]": expected an array at the root but found an object"#),
        ]
        for (keyPath, message) in cases {
            let error = Fixture.error { _ = try formatter.format(response, for: Fixture.api(keyPath)) }
            #expect(error?.kind == .decoding)
            #expect(error?.message == message)
        }
    }

    @Test("Data and string results are the whole body, once the code is checked")
    func dataAndString() throws {
        let response = Fixture.response(Self.body)
        #expect(
            try formatter.format(response, for: Fixture.api("no.such", format: .data)) == .data(Data(Self.body.utf8)))
        #expect(try formatter.format(response, for: Fixture.api(format: .string)) == .string(Self.body))
        let failed = Fixture.response(#"{"code":1,"msg":"no"}"#)
        let error = Fixture.error { _ = try formatter.format(failed, for: Fixture.api(format: .data)) }
        #expect(error?.kind == .business)
    }

    // MARK: Models

    @Test("A model is decoded at the key path relative to the data key")
    func decode() throws {
        let response = Fixture.response(Self.body)
        let products = try formatter.decode([FixtureProduct].self, from: response, for: Fixture.api("shop.products"))
        #expect(products.map(\.name) == ["Tea", "Cake"])
        #expect(try formatter.decode(Int.self, from: response, for: Fixture.api("~.meta.page")) == 1)
        struct Payload: Decodable {
            struct Shop: Decodable { var id: Int }
            var shop: Shop
        }
        #expect(try formatter.decode(Payload.self, from: response, for: Fixture.api("#")).shop.id == 7)
        #expect(try formatter.decode(Payload.self, from: response, for: Fixture.api()).shop.id == 7)
    }

    @Test("The model's bytes are decoded as they are, not re-serialized")
    func noReserialization() throws {
        let response = Fixture.response(#"{"code":0,"data":{"big":18446744073709551615}}"#)
        #expect(try formatter.decode(UInt64.self, from: response, for: Fixture.api("big")) == .max)
    }

    @Test("A model that does not fit names the key path from the root and the coding path inside the model")
    func decodeMismatch() {
        let body =
            #"{"code":0,"data":{"shop":{"products":[{"id":1,"name":"Tea","price":2.5},{"id":2,"name":"Cake"}]}}}"#
        let error = Fixture.error {
            _ = try formatter.decode(
                [FixtureProduct].self, from: Fixture.response(body), for: Fixture.api("shop.products"))
        }
        #expect(error?.kind == .decoding)
        #expect(error?.keyPath == "data.shop.products[1].price")
        #expect(
            error?.message.contains(#"cannot decode Array<FixtureProduct> at key path "data.shop.products""#) == true,
            "\(error?.message ?? "")")
        #expect(error?.message.contains(#"no key "price""#) == true)
    }
}
