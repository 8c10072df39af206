import Foundation
import ServerAPIKit
import Testing

@testable import SapiCommand

@Suite("sapi: parsing the command line")
struct OptionsTests {
    @Test(
        "items are told apart by their first separator",
        arguments: [
            ("name=value", RequestItem.field(name: "name", value: "value")),
            ("count:=42", .rawJSON(name: "count", json: "42")),
            ("X-Token:abc=def", .header(name: "X-Token", value: "abc=def")),
            ("q==a b", .query(name: "q", value: "a b")),
            ("photo@~/a.png", .file(name: "photo", path: "~/a.png")),
            ("url=http://x:1/a", .field(name: "url", value: "http://x:1/a")),
            ("a\\=b=c", .field(name: "a=b", value: "c")),
            ("tags:=[1,2]", .rawJSON(name: "tags", json: "[1,2]")),
            ("empty=", .field(name: "empty", value: "")),
        ])
    func items(argument: String, expected: RequestItem) {
        #expect(RequestItem.parse(argument) == expected)
    }

    @Test("an argument without a separator is not an item")
    func notAnItem() {
        #expect(RequestItem.parse("plain") == nil)
        #expect(RequestItem.parse("=value") == nil)
        #expect(throws: UsageError.self) { try Options.parse(["http://x.test", "plain"]) }
    }

    @Test("the method is optional and defaults to GET, or POST when there are body items")
    func method() throws {
        #expect(try Options.parse(["x.test"]).method == nil)
        #expect(try Options.parse(["put", "x.test", "a=1"]).method == .put)
        #expect(try RequestBuilder.build(Options.parse(["x.test"])).method == .get)
        #expect(try RequestBuilder.build(Options.parse(["x.test", "a=1"])).method == .post)
        #expect(try RequestBuilder.build(Options.parse(["x.test", "q==1", "H:v"])).method == .get)
    }

    @Test(":PORT/path means localhost, and http:// is the default scheme")
    func urls() {
        #expect(RequestBuilder.expandURL(":8080/get") == "http://localhost:8080/get")
        #expect(RequestBuilder.expandURL(":/get") == "http://localhost/get")
        #expect(RequestBuilder.expandURL(":3000") == "http://localhost:3000/")
        #expect(RequestBuilder.expandURL("example.test/a") == "http://example.test/a")
        #expect(RequestBuilder.expandURL("https://example.test") == "https://example.test")
    }

    @Test("options take values inline or as the next argument; unknown ones are usage errors")
    func options() throws {
        let options = try Options.parse([
            "--timeout=2.5", "--retry", "3", "--key-path", "a.b", "-v", "--backend", "urlsession",
            "--max-redirects", "0", "x.test",
        ])
        #expect(options.timeout == 2.5 && options.retry == 3 && options.keyPath == "a.b")
        #expect(options.printed(terminal: false) == ["H", "B", "h", "b"])
        #expect(options.backend == .urlsession && options.maxRedirects == 0)
        #expect(throws: UsageError.self) { try Options.parse(["--bogus", "x.test"]) }
        #expect(throws: UsageError.self) { try Options.parse(["--timeout", "-1", "x.test"]) }
        #expect(throws: UsageError.self) { try Options.parse(["--timeout"]) }
        #expect(throws: UsageError.self) { try Options.parse(["--continue", "x.test"]) }
        #expect(throws: UsageError.self) { try Options.parse(["--backend", "carrier-pigeon", "x.test"]) }
        #expect(throws: UsageError.self) { try Options.parse([]) }
        #expect(try Options.parse(["--success-codes", "0, 200", "x.test"]).successCodes == ["0", "200"])
    }

    @Test("--http-version takes 1.1, 2, 2-prior-knowledge, 3 or 3-only; the urlsession backend takes only 2")
    func httpVersion() throws {
        #expect(try Options.parse(["--http-version", "1.1", "x.test"]).httpVersion == .http1)
        #expect(try Options.parse(["--http-version=2", "x.test"]).httpVersion == .http2)
        #expect(
            try Options.parse(["--http-version", "2-prior-knowledge", "x.test"]).httpVersion == .http2PriorKnowledge)
        #expect(try Options.parse(["x.test"]).httpVersion == nil)
        #expect(try Options.parse(["--http-version", "3", "x.test"]).httpVersion == .http3)
        #expect(try Options.parse(["--http-version", "3-only", "x.test"]).httpVersion == .http3Only)
        #expect(throws: UsageError.self) { try Options.parse(["--http-version", "4", "x.test"]) }
        // HTTP/3 on the curl backend: taken where the loaded libcurl has it, refused with what to install where not
        // (the conformance suite's HTTP3Tests check which applies to the libcurl loaded).
        for version in ["3", "3-only"] {
            do {
                _ = try Composition.transport(Options.parse(["x.test", "--http-version", version]))
            } catch let error as UsageError {
                #expect(error.message.contains("needs a libcurl built with HTTP/3"), "\(error.message)")
                #expect(error.hint == "--http-version 2")
            }
        }
        _ = try Composition.transport(Options.parse(["x.test", "--http-version", "2-prior-knowledge"]))
        _ = try Composition.transport(Options.parse(["x.test", "--backend", "urlsession", "--http-version", "2"]))
        for version in ["1.1", "2-prior-knowledge", "3", "3-only"] {
            let error = #expect(throws: UsageError.self) {
                try Composition.transport(
                    Options.parse(["x.test", "--backend", "urlsession", "--http-version", version]))
            }
            #expect(error?.message.contains("FoundationNetworking") == true)
        }
    }

    @Test("JSON fields make a sorted JSON body; raw JSON keeps its type")
    func jsonBody() throws {
        let api = try RequestBuilder.build(Options.parse(["x.test", "name=Ada", "age:=36", "admin:=true"]))
        let request = try api.transportRequest()
        #expect(
            String(decoding: request.body.inMemoryBytes ?? Data(), as: UTF8.self)
                == #"{"admin":true,"age":36,"name":"Ada"}"#)
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(throws: UsageError.self) { try RequestBuilder.build(Options.parse(["x.test", "n:={bad"])) }
    }

    @Test("--form sends a form body; a file item makes it multipart")
    func formAndMultipart() throws {
        let form = try RequestBuilder.build(Options.parse(["--form", "x.test", "a=1", "b=x y"])).transportRequest()
        #expect(form.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(String(decoding: form.body.inMemoryBytes ?? Data(), as: UTF8.self) == "a=1&b=x%20y")

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-\(UUID().uuidString).txt")
        try Data("hi".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let multipart = try RequestBuilder.build(Options.parse(["x.test", "a=1", "doc@\(file.path)"]))
            .transportRequest()
        #expect(multipart.method == .post)
        #expect(multipart.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(throws: UsageError.self) {
            try RequestBuilder.build(Options.parse(["x.test", "doc@/nonexistent/file"]))
        }
        #expect(throws: UsageError.self) { try RequestBuilder.build(Options.parse(["--form", "x.test", "n:=1"])) }
    }

    @Test("the help lists every option and every exit code")
    func help() {
        let help = Options.helpText
        for spec in Options.specs { #expect(help.contains(spec.names[0])) }
        for code in ["0 ", "1 ", "2 ", "3 ", "4 ", "5 ", "6 ", "7 ", "8 ", "9 ", "130"] {
            #expect(help.contains("\n  \(code)"))
        }
    }

    @Test("JSON prints with sorted keys and four-space indent")
    func printer() {
        let json: JSONValue = ["b": [1, 2.5, nil], "a": "x\"y", "c": [:]]
        #expect(
            JSONPrinter(palette: nil).render(json)
                == "{\n    \"a\": \"x\\\"y\",\n    \"b\": [\n        1,\n        2.5,\n        null\n    ],\n    \"c\": {}\n}"
        )
        #expect(JSONPrinter(palette: nil).render(json, pretty: false) == #"{"a":"x\"y","b":[1,2.5,null],"c":{}}"#)
    }

    @Test("--proxy, --no-proxy and --stall-timeout reach the transport and the request")
    func proxyAndStall() throws {
        let options = try Options.parse([
            "x.test", "--proxy", "http://u:p@127.0.0.1:3128", "--no-proxy", "localhost, .internal",
            "--stall-timeout", "1000/2.5",
        ])
        let proxy = try #require(try Composition.proxy(options))
        #expect(proxy.url?.absoluteString == "http://127.0.0.1:3128")
        #expect(proxy.credentials?.password == "p")
        #expect(proxy.bypass == ["localhost", ".internal"])
        #expect(
            try RequestBuilder.build(options).stallTimeout
                == StallTimeout(bytesPerSecond: 1000, duration: .milliseconds(2500)))
        #expect(try Composition.proxy(Options.parse(["x.test", "--proxy", "env"])) == .environment)
        #expect(try Composition.proxy(Options.parse(["x.test"])) == nil)
        for bad in [["--stall-timeout", "1000"], ["--stall-timeout", "0/5"], ["--stall-timeout", "5/-1"]] {
            #expect(throws: UsageError.self) { try Options.parse(["x.test"] + bad) }
        }
        let socks = try Composition.proxy(Options.parse(["x.test", "--proxy", "socks5h://u:p@h"]))
        #expect(socks?.url?.absoluteString == "socks5h://h:1080")
        #expect(throws: UsageError.self) {
            try Composition.proxy(Options.parse(["x.test", "--proxy", "socks6://h:1"]))
        }
        #expect(throws: UsageError.self) {
            try Composition.proxy(Options.parse(["x.test", "--proxy", "socks4://u:p@h"]))
        }
        #expect(throws: UsageError.self) { try Composition.proxy(Options.parse(["x.test", "--no-proxy", "a"])) }
        #if os(Linux)
            // FoundationNetworking cannot use an explicit proxy: sapi says so instead of going direct.
            let refused = #expect(throws: UsageError.self) {
                try Composition.transport(
                    Options.parse(["x.test", "--backend", "urlsession", "--proxy", "127.0.0.1:1"]))
            }
            #expect(refused?.hint == "--backend curl")
        #endif
    }
}
