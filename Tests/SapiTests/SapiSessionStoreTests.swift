import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import SapiCommand

/// `sapi --session`: headers, auth and cookies kept per host in httpie's layout; `--session-read-only`;
/// damaged and older files.
@Suite("sapi sessions: headers, auth, cookies")
struct SapiSessionStoreTests {
    static let backends = ["curl", "urlsession"]

    /// A config folder of the test's own, and no `.netrc`.
    static func environment(_ scratch: Scratch) -> [String: String] {
        ["XDG_CONFIG_HOME": scratch.folder.path, "NETRC": "/nonexistent/netrc"]
    }

    static func object(_ url: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    @Test("a named session stores the command line's headers and -a, and later calls send them", arguments: backends)
    func headersAndAuth(backend: String) async throws {
        let scratch = try Scratch()
        let environment = Self.environment(scratch)
        let httpbin = try SapiProcess.httpbin
        let first = try await SapiProcess.run(
            [
                "--backend", backend, "--session", "work", "-a", "u:p", "\(httpbin)/basic-auth/u/p", "X-Api:1",
                "If-None-Match:abc", "Content-Language:en",
            ], environment: environment)
        #expect(first.code == 0, "\(first.stderr)")
        let port = try #require(URL(string: httpbin)?.port)
        let file = scratch.folder.appendingPathComponent("sapi/sessions/127.0.0.1_\(port)/work.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: file.deletingLastPathComponent().path)
        #expect((folder[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let stored = try Self.object(file)
        #expect(stored["headers"] as? [String: String] == ["X-Api": "1"], "per-call headers are not kept")
        #expect(stored["auth"] as? [String: String] == ["type": "basic", "raw_auth": "u:p"])

        let second = try await SapiProcess.run(
            ["--backend", backend, "--session", "work", "\(httpbin)/headers", "--key-path", "headers"],
            environment: environment)
        #expect(second.code == 0, "\(second.stderr)")
        let sent = try #require(second.json as? [String: String])
        #expect(sent["X-Api"] == "1")
        #expect(sent["Authorization"] == "Basic " + Data("u:p".utf8).base64EncodedString())
        #expect(sent["If-None-Match"] == nil)

        let authorized = try await SapiProcess.run(
            ["--backend", backend, "--check-status", "--session", "work", "\(httpbin)/basic-auth/u/p"],
            environment: environment)
        #expect(authorized.code == 0, "\(authorized.stderr)")

        // The command line overrides what the session has, and the session keeps the new value.
        let overridden = try await SapiProcess.run(
            [
                "--backend", backend, "--session", "work", "\(httpbin)/headers", "X-Api:2", "--key-path",
                "headers.X-Api",
            ],
            environment: environment)
        #expect(overridden.json as? String == "2")
        #expect(try Self.object(file)["headers"] as? [String: String] == ["X-Api": "2"])
    }

    @Test("cookies set in one call are sent by the next, with headers and auth in the same file", arguments: backends)
    func cookies(backend: String) async throws {
        let scratch = try Scratch()
        let file = scratch.file("s.json")
        let httpbin = try SapiProcess.httpbin
        let set = try await SapiProcess.run(
            ["--backend", backend, "--session", file.path, "\(httpbin)/cookies/set?a=1", "X-Team:blue"],
            environment: Self.environment(scratch))
        #expect(set.code == 0, "\(set.stderr)")
        let stored = try Self.object(file)
        let cookies = try #require(stored["cookies"] as? [[String: Any]])
        #expect(cookies.map { $0["name"] as? String } == ["a"])
        #expect(stored["headers"] as? [String: String] == ["X-Team": "blue"])
        let shown = try await SapiProcess.run(
            ["--backend", backend, "--session", file.path, "\(httpbin)/cookies", "--key-path", "cookies"],
            environment: Self.environment(scratch))
        #expect(shown.json as? [String: String] == ["a": "1"])
    }

    @Test(
        "--session-read-only sends the session's cookies and headers and leaves the file as it was", arguments: backends
    )
    func readOnly(backend: String) async throws {
        let scratch = try Scratch()
        let file = scratch.file("s.json")
        let httpbin = try SapiProcess.httpbin
        let environment = Self.environment(scratch)
        _ = try await SapiProcess.run(
            ["--backend", backend, "--session", file.path, "\(httpbin)/cookies/set?a=1", "X-Api:1"],
            environment: environment)
        let before = try Data(contentsOf: file)
        let used = try await SapiProcess.run(
            [
                "--backend", backend, "--session-read-only", file.path, "\(httpbin)/cookies/set?b=2", "X-Api:9",
                "-a", "x:y",
            ], environment: environment)
        #expect(used.code == 0, "\(used.stderr)")
        #expect((used.json as? [String: Any])?["cookies"] as? [String: String] == ["a": "1", "b": "2"])
        #expect(try Data(contentsOf: file) == before)
        let headers = try await SapiProcess.run(
            [
                "--backend", backend, "--session-read-only", file.path, "\(httpbin)/headers", "--key-path",
                "headers.X-Api",
            ],
            environment: environment)
        #expect(headers.json as? String == "1")
        #expect(try Data(contentsOf: file) == before)
    }

    @Test("a call that changes nothing does not write the file")
    func unchanged() async throws {
        let scratch = try Scratch()
        let file = scratch.file("s.json")
        let httpbin = try SapiProcess.httpbin
        _ = try await SapiProcess.run(
            ["--session", file.path, "\(httpbin)/cookies/set?a=1"], environment: Self.environment(scratch))
        // A marker only a rewrite would remove: the file is read (extra keys are ignored), never rewritten.
        var object = try Self.object(file)
        object["marker"] = "kept"
        try JSONSerialization.data(withJSONObject: object).write(to: file)
        let before = try Data(contentsOf: file)
        let outcome = try await SapiProcess.run(
            ["--session", file.path, "\(httpbin)/get"], environment: Self.environment(scratch))
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(try Data(contentsOf: file) == before)
    }

    @Test(
        "a corrupt session file is a clear error, exit 1, and stays as it was",
        arguments: [
            "{not json", "[1, 2]", "{\"headers\": [\"X\"]}", "{\"cookies\": {\"a\": 1}}",
            "{\"auth\": {\"type\": \"ntlm\", \"raw_auth\": \"u:p\"}}",
        ])
    func corrupt(contents: String) async throws {
        let scratch = try Scratch()
        let file = scratch.file("s.json")
        try Data(contents.utf8).write(to: file)
        let outcome = try await SapiProcess.run(
            ["--session", file.path, "\(try SapiProcess.httpbin)/get"], environment: Self.environment(scratch))
        #expect(outcome.code == 1)
        #expect(
            outcome.stderr.hasPrefix("sapi: error: the session file \(file.path) cannot be read"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("  try: "))
        #expect(outcome.stdout.isEmpty, "nothing was sent")
        #expect(try String(contentsOf: file, encoding: .utf8) == contents)
    }

    @Test("a session file from before (cookies only, FileCookieStorage's format) keeps working")
    func olderFormat() async throws {
        let scratch = try Scratch()
        let file = scratch.file("old.json")
        let httpbin = try SapiProcess.httpbin
        let storage = FileCookieStorage(url: file)
        storage.store(setCookieLines: ["legacy=yes; Path=/"], from: try #require(URL(string: httpbin + "/")))
        #expect(try Self.object(file)["format"] as? String == "serverapikit-cookies")
        let shown = try await SapiProcess.run(
            ["--session", file.path, "\(httpbin)/cookies", "--key-path", "cookies", "X-New:1"],
            environment: Self.environment(scratch))
        #expect(shown.code == 0, "\(shown.stderr)")
        #expect(shown.json as? [String: String] == ["legacy": "yes"])
        // Written back in the new layout once something changed (here a header).
        let stored = try Self.object(file)
        #expect(stored["headers"] as? [String: String] == ["X-New": "1"])
        #expect((stored["cookies"] as? [[String: Any]])?.first?["name"] as? String == "legacy")
    }

    @Test("the session's auth is not sent to another host on a redirect", arguments: backends)
    func crossHostRedirect(backend: String) async throws {
        let scratch = try Scratch()
        let file = scratch.file("s.json")
        let httpbin = try SapiProcess.httpbin
        _ = try await SapiProcess.run(
            ["--backend", backend, "--session", file.path, "-a", "u:p", "\(httpbin)/get"],
            environment: Self.environment(scratch))
        let other = httpbin.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/headers"
        let query = other.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let outcome = try await SapiProcess.run(
            [
                "--backend", backend, "--session-read-only", file.path, "\(httpbin)/redirect-to?url=\(query)",
                "--key-path", "headers",
            ], environment: Self.environment(scratch))
        #expect(outcome.code == 0, "\(outcome.stderr)")
        let received = try #require(outcome.json as? [String: String])
        #expect(received["Host"]?.hasPrefix("localhost") == true)
        #expect(received["Authorization"] == nil)
    }

    @Test("the session model: which headers are kept, and what counts as a change")
    func model() throws {
        #expect(SessionFile.isStored(header: "X-Api"))
        #expect(SessionFile.isStored(header: "Authorization"))
        #expect(!SessionFile.isStored(header: "content-type"))
        #expect(!SessionFile.isStored(header: "If-Modified-Since"))
        #expect(!SessionFile.isStored(header: "Cookie"))
        var session = SessionFile(url: URL(fileURLWithPath: "/tmp/x.json"))
        session.exists = true
        #expect(!session.needsSaving(session.updated(headers: [("Content-Type", "a/b")], auth: nil, cookies: [])))
        #expect(session.needsSaving(session.updated(headers: [("x-a", "1")], auth: nil, cookies: [])))
        #expect(
            session.needsSaving(session.updated(headers: [], auth: AuthSetting(kind: .bearer, raw: "t"), cookies: [])))
    }

    @Test("a session file cookie that no response could have set is refused, naming it")
    func cookieDefects() throws {
        let scratch = try Scratch()
        let file = scratch.file("s.json")
        let cookie: [String: Any] = [
            "name": "sid", "value": "1\r\nX-Injected: yes", "domain": "example.com", "hostOnly": true, "path": "/",
            "secure": false, "httpOnly": false, "created": 0,
        ]
        let good = cookie.merging(["value": "春节"]) { $1 }
        try JSONSerialization.data(withJSONObject: ["cookies": [good, cookie]]).write(to: file)
        let error = #expect(throws: UsageError.self) { try SessionFile.load(file) }
        #expect(error?.message.contains("cookie 2 cannot be sent: its name or value contains") == true)
        try JSONSerialization.data(withJSONObject: ["cookies": [good]]).write(to: file)
        #expect(try SessionFile.load(file).cookies.map(\.value) == ["春节"])
    }
}
