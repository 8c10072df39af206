import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `sapi` binary against the local httpbin and fault fixture, with both backends.
@Suite("sapi end to end")
struct SapiEndToEndTests {
    static let backends = ["curl", "urlsession"]

    @Test("every item kind reaches the server: JSON fields, raw JSON, headers, query", arguments: backends)
    func items(backend: String) async throws {
        let outcome = try await SapiProcess.run([
            "--backend", backend, "POST", "\(try SapiProcess.httpbin)/anything", "name=Zoë", "age:=36",
            "tags:=[1,2]", "X-Trace:42", "q==a b&c",
        ])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        let echo = try #require(outcome.json as? [String: Any])
        let json = try #require(echo["json"] as? [String: Any])
        #expect(json["name"] as? String == "Zoë")
        #expect(json["age"] as? Int == 36)
        #expect(json["tags"] as? [Int] == [1, 2])
        #expect((echo["headers"] as? [String: String])?["X-Trace"] == "42")
        #expect((echo["args"] as? [String: String])?["q"] == "a b&c")
        #expect(echo["method"] as? String == "POST")
    }

    @Test("--form with a file item sends a multipart body with the file's bytes", arguments: backends)
    func formAndFile(backend: String) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-upload-\(UUID().uuidString).txt")
        try Data("file body\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let outcome = try await SapiProcess.run([
            "--backend", backend, "--form", "\(try SapiProcess.httpbin)/anything", "title=Hello", "doc@\(file.path)",
        ])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        let echo = try #require(outcome.json as? [String: Any])
        #expect((echo["form"] as? [String: String])?["title"] == "Hello")
        #expect((echo["files"] as? [String: String])?["doc"] == "file body\n")
        #expect((echo["headers"] as? [String: String])?["Content-Type"]?.hasPrefix("multipart/form-data") == true)
    }

    @Test("--form alone sends a URL-encoded form", arguments: backends)
    func form(backend: String) async throws {
        let outcome = try await SapiProcess.run([
            "--backend", backend, "--form", "\(try SapiProcess.httpbin)/post", "a=1", "b=x y",
        ])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        let echo = try #require(outcome.json as? [String: Any])
        #expect((echo["form"] as? [String: String]) == ["a": "1", "b": "x y"])
    }

    @Test("--key-path prints only that part of the JSON", arguments: backends)
    func keyPath(backend: String) async throws {
        let outcome = try await SapiProcess.run([
            "--backend", backend, "\(try SapiProcess.httpbin)/json", "--key-path", "slideshow.slides[1].title",
        ])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.json as? String == "Overview")
    }

    @Test(
        "exit codes: 0 ok, 1 usage, 2 timeout, 3/4/5 status class with --check-status, 6 redirects, 7 cannot connect, 8 business, 9 key path",
        arguments: backends)
    func exitCodes(backend: String) async throws {
        let httpbin = try SapiProcess.httpbin
        let business = Data(#"{"code":7,"msg":"out of stock","data":null}"#.utf8).base64EncodedString()
        let ok = Data(#"{"code":0,"msg":"ok","data":{"n":1}}"#.utf8).base64EncodedString()
        let cases: [([String], Int32, String?)] = [
            (["\(httpbin)/get"], 0, nil),
            (["\(httpbin)/status/404"], 0, nil),
            (["--bogus", "\(httpbin)/get"], 1, "unknown option"),
            (["\(httpbin)/get", "not-an-item"], 1, "not a request item"),
            (["--check-status", "\(httpbin)/status/404"], 4, "404"),
            (["--check-status", "\(httpbin)/status/503"], 5, "503"),
            (["--check-status", "--max-redirects", "0", "\(httpbin)/redirect/1"], 3, "302"),
            (["--max-redirects", "0", "\(httpbin)/redirect/1"], 0, nil),
            (["--max-redirects", "1", "\(httpbin)/redirect/3"], 6, "redirect"),
            (["--retry", "1", "\(httpbin)/status/503"], 5, "503"),
            (["--timeout", "0.5", "\(httpbin)/delay/5"], 2, "timed out"),
            (["http://127.0.0.1:1/"], 7, "connect"),
            (["--envelope", "\(httpbin)/base64/\(business)"], 8, "out of stock"),
            (["--envelope", "--key-path", "n", "\(httpbin)/base64/\(ok)"], 0, nil),
            (["\(httpbin)/json", "--key-path", "slideshow.nope"], 9, "nope"),
            (["--envelope", "\(httpbin)/json"], 9, "not a business envelope"),
        ]
        for (arguments, code, message) in cases {
            let outcome = try await SapiProcess.run(["--backend", backend] + arguments)
            #expect(outcome.code == code, "sapi \(arguments.joined(separator: " ")): \(outcome.stderr)")
            if let message { #expect(outcome.stderr.contains(message), "\(outcome.stderr)") }
            if code != 0 { #expect(outcome.stderr.split(separator: "\n").first?.hasPrefix("sapi: ") == true) }
        }
    }

    @Test("Ctrl-C cancels the request cleanly and exits 130", arguments: backends)
    func interrupt(backend: String) async throws {
        let fixture = try SapiProcess.fixture
        let key = UUID().uuidString
        let started = try await SapiProcess.start(["--backend", backend, "\(fixture)/hang?key=\(key)"])
        // Interrupt once the fixture has the request: sapi is past its start-up and waiting on the answer.
        try await poll(
            "the fixture to receive the request", within: TestTiming.bound(.seconds(60)), every: .milliseconds(50)
        ) {
            let state = try await SapiProcess.run(["\(fixture)/hang/state?key=\(key)"]).json as? [String: Any]
            return state?["arrived"] as? Bool == true
        }
        kill(started.0.processIdentifier, SIGINT)
        let outcome = try await SapiProcess.finish(started, limit: .seconds(10))
        #expect(outcome.code == 130, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("interrupted"))
        try await poll("the fixture to see the client leave", within: .seconds(30), every: .milliseconds(20)) {
            let state = try await SapiProcess.run(["\(fixture)/hang/state?key=\(key)"]).json as? [String: Any]
            return state?["client_left"] as? Bool == true
        }
    }

    @Test("an interrupted --download resumes with --continue into a byte-identical file", arguments: backends)
    func resumeDownload(backend: String) async throws {
        let fixture = try SapiProcess.fixture
        let size = 3_000_000
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-dl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("payload.bin")

        let broken = try await SapiProcess.run([
            "--backend", backend, "\(fixture)/resource?size=\(size)&drop_after=1000000", "-d", "-o", file.path,
        ])
        #expect(broken.code == 7, "\(broken.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        let partial = try FileManager.default.attributesOfItem(atPath: file.path + ".part")[.size] as? NSNumber
        #expect((partial?.intValue ?? 0) > 0)

        let resumed = try await SapiProcess.run([
            "--backend", backend, "\(fixture)/resource?size=\(size)", "--download", "--output", file.path, "--continue",
        ])
        #expect(resumed.code == 0, "\(resumed.stderr)")
        let expected = try await SapiProcess.run(["\(fixture)/resource/sha256?size=\(size)"]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(SHA256.hex(try Data(contentsOf: file)) == expected)
    }

    @Test("a 404 download writes no file", arguments: backends)
    func errorDownload(backend: String) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-404-\(UUID().uuidString)")
        let outcome = try await SapiProcess.run([
            "--backend", backend, "--check-status", "\(try SapiProcess.fixture)/resource/error/404", "--download",
            "--output", file.path,
        ])
        #expect(outcome.code == 4, "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(!FileManager.default.fileExists(atPath: file.path + ".part"))
    }

    @Test("--cache file answers the second call from the cache")
    func cache() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = [
            "--cache", "file", "--cache-dir", directory.path, "-p", "hb", "\(try SapiProcess.httpbin)/uuid",
        ]
        let first = try await SapiProcess.run(arguments)
        let second = try await SapiProcess.run(arguments)
        #expect(first.code == 0 && second.code == 0, "\(first.stderr)\(second.stderr)")
        #expect(!first.text.contains("X-Sapi-Cache"))
        #expect(second.text.contains("X-Sapi-Cache: hit"))
        let uuid = { (text: String) in text.split(separator: "\n").last { $0.contains("uuid") } }
        #expect(uuid(first.text) != nil && uuid(first.text) == uuid(second.text))
    }

    @Test("--help documents the usage and the exit codes")
    func help() async throws {
        let outcome = try await SapiProcess.run(["--help"])
        #expect(outcome.code == 0)
        #expect(outcome.text.contains("usage: sapi [METHOD] URL [ITEM ...] [OPTIONS]"))
        #expect(outcome.text.contains("130"))
    }
}
