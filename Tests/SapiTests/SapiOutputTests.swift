import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import SapiCommand

/// What `sapi` prints and how: `--print` letters, `--pretty`, `--sorted`, `--style`, `NO_COLOR`, the
/// request printer, and the colour resets.
@Suite("sapi output: printing, formatting, colours")
struct SapiOutputTests {
    static let backends = ["curl", "urlsession"]

    // MARK: - Units

    @Test("--print letters, -h, -b, -m, -v and -vv; the defaults on a terminal and in a pipe")
    func printLetters() throws {
        #expect(try Options.parse(["x.test"]).printed(terminal: true) == ["h", "b"])
        #expect(try Options.parse(["x.test"]).printed(terminal: false) == ["b"])
        #expect(try Options.parse(["-v", "x.test"]).printed(terminal: false) == ["H", "B", "h", "b"])
        #expect(try Options.parse(["-vv", "x.test"]).printed(terminal: false) == ["H", "B", "h", "b", "m"])
        #expect(try Options.parse(["-v", "-v", "x.test"]).printed(terminal: true) == ["H", "B", "h", "b", "m"])
        #expect(try Options.parse(["-h", "x.test"]).printed(terminal: true) == ["h"])
        #expect(try Options.parse(["--headers", "x.test"]).printed(terminal: true) == ["h"])
        #expect(try Options.parse(["-b", "x.test"]).printed(terminal: true) == ["b"])
        #expect(try Options.parse(["-m", "x.test"]).printed(terminal: true) == ["m"])
        #expect(try Options.parse(["--offline", "x.test"]).printed(terminal: true) == ["H", "B"])
        #expect(try Options.parse(["-p", "Hm", "-v", "x.test"]).printed(terminal: true) == ["H", "m"])
        #expect(try Options.parse(["--print=hb", "x.test"]).printed(terminal: false) == ["h", "b"])
        for bad in ["", "x", "HBq", "HV"] {
            #expect(throws: UsageError.self, "\(bad)") { try Options.parse(["-p", bad, "x.test"]) }
        }
        #expect(try Options.parse(["--help"]).showHelp)
        #expect(!Options.helpText.contains("--help, -h"), "-h is --headers, as in httpie")
    }

    @Test("--pretty, NO_COLOR, --style and --sorted make the style")
    func style() throws {
        let resolve = { (pretty: OutputStyle.Pretty?, terminal: Bool, environment: [String: String]) in
            OutputStyle.resolve(pretty: pretty, sorted: nil, theme: nil, terminal: terminal, environment: environment)
        }
        // On a terminal the network's control characters are visible (TerminalTextTests), whatever --pretty says.
        let terminal = { (palette: OutputStyle.Palette?, format: Bool) in
            OutputStyle(palette: palette, format: format, sorted: true, visibleControls: true)
        }
        #expect(resolve(nil, true, [:]) == terminal(OutputStyle.Theme.dark.palette, true))
        #expect(resolve(nil, false, [:]) == .plain)
        #expect(resolve(nil, true, ["NO_COLOR": "1"]) == terminal(nil, true))
        #expect(resolve(nil, true, ["NO_COLOR": ""]).palette != nil, "an empty NO_COLOR is not set")
        #expect(resolve(.all, false, ["NO_COLOR": "1"]).palette != nil, "--pretty asks for colours explicitly")
        #expect(resolve(.colors, true, [:]) == terminal(OutputStyle.Theme.dark.palette, false))
        #expect(resolve(.format, true, [:]) == terminal(nil, true))
        #expect(resolve(OutputStyle.Pretty.none, true, [:]) == terminal(nil, false))
        let light = OutputStyle.resolve(pretty: .all, sorted: false, theme: .light, terminal: false, environment: [:])
        #expect(light.palette == OutputStyle.Theme.light.palette && !light.sorted)
        #expect(OutputStyle.Theme.light.palette != OutputStyle.Theme.dark.palette)
        #expect(try Options.parse(["--style", "auto", "x.test"]).style == .dark)
        #expect(try Options.parse(["-s", "light", "x.test"]).style == .light)
        #expect(try Options.parse(["--unsorted", "x.test"]).sorted == false)
        for bad in [["--pretty", "pink"], ["--style", "solarized-neon"]] {
            #expect(throws: UsageError.self) { try Options.parse(bad + ["x.test"]) }
        }
    }

    @Test("the token formatter keeps the body's order, strings intact, empty containers on one line")
    func tokenFormatter() {
        let plain = JSONPrinter(palette: nil)
        let text = #" {"z" : 1, "a":{"s":"{[,:\"]}","e":[],"o":{}}, "n":[-1.5e3,true,null]} "#
        let indented = String(decoding: plain.format(Data(text.utf8), indent: true), as: UTF8.self)
        #expect(
            indented == """
                {
                    "z": 1,
                    "a": {
                        "s": "{[,:\\"]}",
                        "e": [],
                        "o": {}
                    },
                    "n": [
                        -1.5e3,
                        true,
                        null
                    ]
                }
                """)
        #expect(String(decoding: plain.format(Data(text.utf8), indent: false), as: UTF8.self) == text)
        let json: JSONValue = ["b": [1, 2.5, nil], "a": "x\"y", "c": [:]]
        #expect(plain.render(json, pretty: false) == #"{"a":"x\"y","b":[1,2.5,null],"c":{}}"#)
    }

    @Test(
        "colours: what is painted reads as the plain text, and every line ends with its colours reset",
        arguments: OutputStyle.Theme.allCases)
    func colourResets(theme: OutputStyle.Theme) throws {
        let palette = theme.palette
        let documents = [
            #"{"a":{"b":[1,"two",{"c":null}],"d":true},"e":"multi\nline","f":-0.5}"#,
            #"[[],{},"",[{"k":"v"}]]"#, #""just a string""#, "42",
        ]
        for document in documents {
            for indent in [true, false] {
                let coloured = JSONPrinter(palette: palette).format(Data(document.utf8), indent: indent)
                let plain = JSONPrinter(palette: nil).format(Data(document.utf8), indent: indent)
                #expect(Self.strippingEscapes(coloured) == String(decoding: plain, as: UTF8.self))
                #expect(Self.linesEndReset(coloured), "\(String(decoding: coloured, as: UTF8.self).debugDescription)")
            }
        }
        let style = OutputStyle(palette: palette, format: true, sorted: true)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "ETag", value: "\"x\"")
        #expect(Self.linesEndReset(Data(Printer.head(status: 200, headers: headers, version: "2", style: style).utf8)))
        let metrics = RequestMetrics(attempts: 2, duration: .milliseconds(12))
        let meta = Printer.metadata(metrics, style: style)
        #expect(Self.linesEndReset(Data(meta.utf8)))
        #expect(Self.strippingEscapes(Data(meta.utf8)).contains("Elapsed time: 0.012s\n"))
        #expect(Self.strippingEscapes(Data(meta.utf8)).contains("Attempts: 2\n"))
    }

    @Test("-m says what the cache did: a hit and its age, a revalidation (a 304 through the network), or a miss")
    func cacheLine() throws {
        let url = try #require(URL(string: "https://api.test/items"))
        func result(_ source: ResultSource, attempts: Int) -> ServerResult {
            ServerResult(
                value: .data(Data()), status: 200, headers: [:], url: url, requestID: .next(), source: source,
                metrics: RequestMetrics(attempts: attempts))
        }
        let stored = Date(timeIntervalSinceReferenceDate: 0)
        #expect(
            Printer.cacheLine(result(.cache(storedAt: stored, age: .seconds(42)), attempts: 0), cacheEnabled: true)
                == "hit, age 42 s")
        #expect(
            Printer.cacheLine(result(.cache(storedAt: stored, age: .zero), attempts: 1), cacheEnabled: true)
                == "revalidated, age 0 s")
        #expect(Printer.cacheLine(result(.network, attempts: 1), cacheEnabled: true) == "miss")
        #expect(Printer.cacheLine(result(.network, attempts: 1), cacheEnabled: false) == nil)
        let meta = Printer.metadata(RequestMetrics(attempts: 0), cache: "hit, age 42 s", style: .plain)
        #expect(meta.contains("Cache: hit, age 42 s\n"))
    }

    @Test("the request printer: request line, Host, fields, body; credentials redacted unless asked")
    func requestPrinter() throws {
        let api = try RequestBuilder.build(
            Options.parse([
                "POST", "http://127.0.0.1:8/p?q=1", "a=1", "Authorization:Basic dTpw", "Proxy-Authorization:secret",
            ]))
        let request = try api.transportRequest()
        let printer = RequestPrinter(parts: ["H", "B"], style: .plain, terminal: false, showCredentials: false)
        let text = String(decoding: printer.render(request), as: UTF8.self)
        #expect(text.hasPrefix("POST /p?q=1 HTTP/1.1\nHost: 127.0.0.1:8\n"), "\(text)")
        #expect(text.contains("\nAuthorization: Basic <redacted>\n"))
        #expect(text.contains("\nProxy-Authorization: <redacted>\n"))
        #expect(!text.contains("dTpw") && !text.contains("secret"))
        #expect(text.contains("\nContent-Length: 9\n"))
        #expect(text.hasSuffix("\n\n{\"a\":\"1\"}\n\n"), "\(text)")
        var shown = printer
        shown.showCredentials = true
        #expect(String(decoding: shown.render(request), as: UTF8.self).contains("Authorization: Basic dTpw\n"))
        let headersOnly = RequestPrinter(parts: ["H"], style: .plain, terminal: false, showCredentials: false)
        #expect(!String(decoding: headersOnly.render(request), as: UTF8.self).contains("{\"a\""))
    }

    @Test("--raw and standard input make the body: JSON unless --form or a Content-Type item; POST by default")
    func rawBodies() throws {
        let raw = try RequestBuilder.build(Options.parse(["x.test", "--raw", "hello"])).transportRequest()
        #expect(raw.method == .post && raw.body.inMemoryBytes == Data("hello".utf8))
        #expect(raw.headers["Content-Type"] == "application/json")
        let form = try RequestBuilder.build(Options.parse(["--form", "x.test", "--raw", "a=1"])).transportRequest()
        #expect(form.headers["Content-Type"]?.hasPrefix("application/x-www-form-urlencoded") == true)
        let typed = try RequestBuilder.build(Options.parse(["x.test", "Content-Type:text/csv", "--raw", "a,b"]))
            .transportRequest()
        #expect(typed.headers["Content-Type"] == "text/csv")
        let piped = try RequestBuilder.build(Options.parse(["PUT", "x.test"]), stdin: Data("[1]".utf8))
            .transportRequest()
        #expect(piped.method == .put && piped.body.inMemoryBytes == Data("[1]".utf8))
        let empty = try RequestBuilder.build(Options.parse(["x.test"]), stdin: Data()).transportRequest()
        #expect(empty.method == .get && empty.body.inMemoryBytes?.isEmpty != false)
        #expect(throws: UsageError.self) { try RequestBuilder.build(Options.parse(["x.test", "a=1", "--raw", "x"])) }
    }

    @Test("the config file's default_options come before the arguments; a broken file is a usage error")
    func config() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sapi-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ["SAPI_CONFIG_DIR": directory.path]
        #expect(try Config.defaultOptions(environment: environment) == [])
        let file = directory.appendingPathComponent("config.json")
        try Data(#"{"default_options": ["--style", "light", "-p", "h"], "other": 1}"#.utf8).write(to: file)
        #expect(try Config.defaultOptions(environment: environment) == ["--style", "light", "-p", "h"])
        #expect(
            Config.file(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]).path == "/x/sapi/config.json")
        #expect(Config.file(environment: ["HOME": "/h"]).path == "/h/.config/sapi/config.json")
        for broken in [#"{"default_options": "-v"}"#, #"{"default_options": [1]}"#, "[", "[]"] {
            try Data(broken.utf8).write(to: file)
            let error = #expect(throws: UsageError.self, "\(broken)") {
                try Config.defaultOptions(environment: environment)
            }
            #expect(error?.message.contains(file.path) == true)
        }
    }

    @Test("--verify: no turns verification off on curl only; a CA file is trusted; yes is the default")
    func verify() throws {
        #expect(try Composition.verify(Options.parse(["x.test"])) == (true, nil))
        #expect(try Composition.verify(Options.parse(["--verify", "no", "x.test"])) == (false, nil))
        #expect(try Composition.verify(Options.parse(["--verify", "yes", "x.test"])) == (true, nil))
        #expect(try Composition.verify(Options.parse(["--verify", "/ca.pem", "x.test"])) == (true, "/ca.pem"))
        #expect(throws: UsageError.self) {
            try Composition.verify(Options.parse(["--verify", "/ca.pem", "--insecure-ca", "/b.pem", "x.test"]))
        }
        let refused = #expect(throws: UsageError.self) {
            try Composition.transport(Options.parse(["--backend", "urlsession", "--verify", "no", "https://x.test"]))
        }
        #expect(refused?.hint == "--backend curl --verify no")
    }

    // MARK: - End to end

    @Test("-v prints the request (headers, body) before the response; -p H only the request", arguments: backends)
    func verbose(backend: String) async throws {
        let httpbin = try SapiProcess.httpbin
        let outcome = try await SapiProcess.run(["--backend", backend, "-v", "POST", "\(httpbin)/post", "a=1"])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        let text = outcome.text
        #expect(text.hasPrefix("POST /post HTTP/1.1\n"), "\(text)")
        let request = try #require(text.range(of: "\n\n{\"a\":\"1\"}\n\n"), "\(text)")
        let response = try #require(text.range(of: "HTTP/1.1 200 OK\n") ?? text.range(of: "HTTP 200 OK\n"))
        #expect(request.upperBound <= response.lowerBound)
        #expect(text.hasSuffix("}\n"))

        let requestOnly = try await SapiProcess.run([
            "--backend", backend, "-p", "H", "\(httpbin)/get", "Authorization:Bearer s3cret",
        ])
        #expect(requestOnly.code == 0, "\(requestOnly.stderr)")
        #expect(requestOnly.text.hasPrefix("GET /get HTTP/1.1\n"))
        #expect(requestOnly.text.contains("Authorization: Bearer <redacted>\n"))
        #expect(!requestOnly.text.contains("s3cret") && !requestOnly.text.contains("HTTP/1.1 200"))
    }

    @Test("-h prints the response headers, -b the body, -m the metadata; -vv adds it to -v", arguments: backends)
    func parts(backend: String) async throws {
        let url = "\(try SapiProcess.httpbin)/json"
        let headers = try await SapiProcess.run(["--backend", backend, "-h", url])
        #expect(headers.code == 0, "\(headers.stderr)")
        #expect(headers.text.contains("200 OK\n") && headers.text.contains("Content-Type: application/json\n"))
        #expect(!headers.text.contains("slideshow"))
        let body = try await SapiProcess.run(["--backend", backend, "-b", url])
        #expect((body.json as? [String: Any])?["slideshow"] != nil)
        let meta = try await SapiProcess.run(["--backend", backend, "-m", url])
        #expect(meta.text.hasPrefix("Elapsed time: "), "\(meta.text)")
        #expect(meta.text.contains("\nAttempts: 1\n") && meta.text.contains("\nTransport: \(backend)\n"))
        #expect(meta.text.contains("\nReceived: "))
        let all = try await SapiProcess.run(["--backend", backend, "-vv", url])
        #expect(all.text.hasPrefix("GET /json HTTP/1.1\n") && all.text.contains("slideshow"))
        #expect(all.text.contains("}\n\nElapsed time: "), "\(all.text)")
    }

    @Test("piped standard input is the body; --ignore-stdin and --raw", arguments: backends)
    func standardInput(backend: String) async throws {
        let httpbin = try SapiProcess.httpbin
        let piped = try await SapiProcess.run(
            ["--backend", backend, "\(httpbin)/anything"], input: Data(#"{"a":1}"#.utf8))
        #expect(piped.code == 0, "\(piped.stderr)")
        let echo = try #require(piped.json as? [String: Any])
        #expect(echo["method"] as? String == "POST")
        #expect((echo["json"] as? [String: Int]) == ["a": 1])
        #expect((echo["headers"] as? [String: String])?["Content-Type"] == "application/json")

        let ignored = try await SapiProcess.run(
            ["--backend", backend, "--ignore-stdin", "\(httpbin)/anything"], input: Data(#"{"a":1}"#.utf8))
        #expect((ignored.json as? [String: Any])?["method"] as? String == "GET")

        let raw = try await SapiProcess.run([
            "--backend", backend, "PUT", "\(httpbin)/anything", "Content-Type:text/plain", "--raw", "plain text",
        ])
        let rawEcho = try #require(raw.json as? [String: Any])
        #expect(rawEcho["method"] as? String == "PUT" && rawEcho["data"] as? String == "plain text")

        let both = try await SapiProcess.run(["--backend", backend, "\(httpbin)/anything", "a=1", "--raw", "x"])
        #expect(both.code == 1 && both.stderr.contains("--raw cannot be combined"))
    }

    @Test("standard input that cannot be read is an error that says so, never a call sent without its body")
    func unreadableStandardInput() async throws {
        // A directory opens, but read(2) fails on it (EISDIR).
        let directory = FileManager.default.temporaryDirectory
        let handle = try #require(FileHandle(forReadingAtPath: directory.path))
        defer { try? handle.close() }
        let outcome = try await SapiProcess.finish(
            await SapiProcess.start(["--offline", "PUT", "http://127.0.0.1:1/items/7"], inputHandle: handle))
        #expect(outcome.code == 1, "\(outcome.text)")
        #expect(outcome.text.isEmpty)
        #expect(outcome.stderr.contains("cannot read the request body from standard input: Is a directory"))
        #expect(outcome.stderr.contains("--ignore-stdin"))
    }

    @Test("--offline prints the request and sends nothing (no server listens)")
    func offline() async throws {
        let outcome = try await SapiProcess.run(["--offline", "PATCH", "http://127.0.0.1:1/items/7", "n:=2", "X-A:b"])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.isEmpty)
        #expect(outcome.text.hasPrefix("PATCH /items/7 HTTP/1.1\nHost: 127.0.0.1:1\n"), "\(outcome.text)")
        #expect(outcome.text.contains("\nX-A: b\n") && outcome.text.hasSuffix("\n\n{\"n\":2}\n\n"))
        let headersOnly = try await SapiProcess.run(["--offline", "-p", "H", "http://127.0.0.1:1/", "n:=2"])
        #expect(headersOnly.code == 0 && !headersOnly.text.contains("{\"n\""))
    }

    @Test("--pretty all when piped: coloured, and every line's colours end before its line break")
    func forcedColours() async throws {
        let url = "\(try SapiProcess.httpbin)/json"
        let outcome = try await SapiProcess.run(["--pretty", "all", "-p", "hbm", url])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.text.contains("\u{1B}[34m\"slideshow\"\u{1B}[0m"))
        #expect(Self.linesEndReset(outcome.stdout), "\(outcome.text.debugDescription)")
        let formatOnly = try await SapiProcess.run(["--pretty", "format", url])
        #expect(!formatOnly.text.contains("\u{1B}") && formatOnly.text.contains("\n    \"slideshow\": {\n"))
        let colorsOnly = try await SapiProcess.run(["--pretty", "colors", url, "--key-path", "slideshow.author"])
        #expect(colorsOnly.text == "\u{1B}[32m\"Yours Truly\"\u{1B}[0m\n")
        let unsorted = try await SapiProcess.run([
            "--pretty", "format", "--unsorted",
            "\(try SapiProcess.httpbin)/base64/\(Data(#"{"z":1,"a":2}"#.utf8).base64EncodedString())",
        ])
        #expect(unsorted.text == "{\n    \"z\": 1,\n    \"a\": 2\n}\n")
    }

    @Test("the config file's default_options apply; the command line overrides them")
    func configFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sapi-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"default_options": ["--print", "h"]}"#.utf8).write(
            to: directory.appendingPathComponent("config.json"))
        let environment = ["SAPI_CONFIG_DIR": directory.path]
        let url = "\(try SapiProcess.httpbin)/json"
        let defaults = try await SapiProcess.run([url], environment: environment)
        #expect(defaults.code == 0 && defaults.text.contains("Content-Type: ") && !defaults.text.contains("slideshow"))
        let overridden = try await SapiProcess.run(["-p", "b", url], environment: environment)
        #expect(overridden.text.contains("slideshow") && !overridden.text.contains("Content-Type: "))
        try Data("{".utf8).write(to: directory.appendingPathComponent("config.json"))
        let broken = try await SapiProcess.run([url], environment: environment)
        #expect(broken.code == 1 && broken.stderr.contains("config.json"), "\(broken.stderr)")
    }

    @Test("--verify no against an untrusted certificate: answered, with a warning; --verify CA_FILE trusts the CA")
    func verifyEndToEnd() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            let url = "\(server.base)/echo"
            let untrusted = try await SapiProcess.run([url])
            #expect(untrusted.code == 7, "\(untrusted.stderr)")
            let off = try await SapiProcess.run(["--verify", "no", url])
            #expect(off.code == 0, "\(off.stderr)")
            #expect(off.stderr.contains("sapi: warning: --verify no"))
            let trusted = try await SapiProcess.run(["--verify", certificates.file("ca.pem").path, url])
            #expect(trusted.code == 0 && trusted.stderr.isEmpty, "\(trusted.stderr)")
            let refused = try await SapiProcess.run(["--backend", "urlsession", "--verify", "no", url])
            #expect(refused.code == 1 && refused.stderr.contains("cannot turn TLS verification off"))
        }
    }

    // MARK: - On a terminal

    @Test("on a terminal: formatted and coloured; NO_COLOR keeps the format without colours; --style light")
    func terminalColours() async throws {
        let url = "\(try SapiProcess.httpbin)/json"
        let sapi = try SapiProcess.binary.path
        try await Terminal.with { terminal in
            try await terminal.run("\(sapi) '\(url)' --key-path slideshow.slides[0]")
            let coloured = try await terminal.waitForExit(escapes: true)
            #expect(coloured.exitCode == 0, "\(coloured.text)")
            #expect(coloured.text.contains("\u{1B}[34m\"title\"\u{1B}[39m"), "\(coloured.text.debugDescription)")
            try await terminal.press("C-l")
            try await terminal.run("clear; NO_COLOR=1 \(sapi) '\(url)' --key-path slideshow.slides[0]")
            let plain = try await terminal.waitForExit(escapes: true)
            #expect(plain.exitCode == 0)
            #expect(
                plain.text.contains("{\n    \"title\": \"Wake up to WonderWidgets!\",\n"),
                "\(plain.text.debugDescription)")
            #expect(!plain.text.contains("\u{1B}[3"), "\(plain.text.debugDescription)")
            try await terminal.run("clear; \(sapi) --style light '\(url)' --key-path slideshow.slides[0]")
            let light = try await terminal.waitForExit(escapes: true)
            #expect(light.text.contains("\u{1B}[1m\u{1B}[34m\"title\""), "\(light.text.debugDescription)")
        }
    }

    // MARK: - Helpers

    /// The text without its SGR escape sequences.
    static func strippingEscapes(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self).replacing(/\u{1B}\[[0-9;]*m/, with: "")
    }

    /// Whether every line that sets a colour resets it before its line break.
    static func linesEndReset(_ data: Data) -> Bool {
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            guard let last = line.matches(of: /\u{1B}\[([0-9;]*)m/).last else { continue }
            if last.output.1 != "0" { return false }
        }
        return true
    }
}
