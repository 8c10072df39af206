import Foundation
import ServerAPIKit
import ServerAPITestSupport
import ServerAPITesting
import Testing

/// The file itself: HAR 1.2's required structure, redaction, and archives written by other tools.
@Suite("HAR files: structure, redaction, other tools' archives")
struct HARFormatTests {
    static let host = "https://api.test"

    static let secrets = [
        "s3cr3t-token", "proxy-pass", "sid-value", "set-cookie-value", "key-12345", "qs-secret", "hunter2",
        "refresh-abc",
    ]

    /// Records one call carrying every kind of secret, with `redaction`; returns the file's text.
    static func recordSecrets(_ redaction: HARRedaction, in scratch: Scratch) async throws -> (String, URL) {
        let file = scratch.file("secrets.har")
        let mock = MockTransport()
        mock.stub(
            .post, "/login",
            .json(
                // A server that echoes its request (httpbin does) puts the secrets in its answer too.
                #"{"user":"ada","refresh_token":"refresh-abc","echo":"Bearer s3cr3t-token, sid=sid-value, hunter2, /login?token=qs-secret"}"#,
                headers: ["Set-Cookie": "session=set-cookie-value; Path=/; HttpOnly"]))
        let manager = ServerAPIManager(transport: RecordingTransport(recording: mock, to: file, redaction: redaction))
        _ = try await manager.send(
            ServerAPI(host: Self.host, path: "/login", method: .post)
                .query("token", "qs-secret").query("page", "1")
                .bearerAuth("s3cr3t-token")
                .header("Proxy-Authorization", "Basic proxy-pass")
                .header("Cookie", "sid=sid-value; theme=dark")
                .header("X-API-Key", "key-12345")
                .json(["user": "ada", "password": "hunter2"]))
        return (try String(contentsOf: file, encoding: .utf8), file)
    }

    @Test("by default no credential reaches the file, nor the headers, query parameters and JSON fields a test names")
    func redaction() async throws {
        let scratch = try Scratch()
        let redaction = HARRedaction(
            headers: ["X-API-Key"], queryParameters: ["token"], jsonFields: ["password", "refresh_token"])
        let (text, file) = try await Self.recordSecrets(redaction, in: scratch)
        for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) reached the file") }
        // What is kept still says what happened.
        #expect(text.contains("Bearer REDACTED"))
        #expect(text.contains("sid=REDACTED; theme=REDACTED"))
        #expect(text.contains("session=REDACTED; Path=/; HttpOnly"))
        #expect(text.contains("token=REDACTED"))
        #expect(text.contains(#""user":"ada""#) || text.contains(#"\"user\":\"ada\""#))

        // The redacted request still matches when replayed with the same redaction, whatever its secrets.
        let replay = try ReplayingTransport(file: file, configuration: .init(redaction: redaction))
        let result = try await ServerAPIManager(transport: replay).send(
            ServerAPI(host: Self.host, path: "/login", method: .post).query("token", "another").query("page", "1")
                .format(.json))
        #expect(result.json?["refresh_token"]?.stringValue == "REDACTED")
        // With body matching too: the redacted password is not a difference.
        let strict = try ReplayingTransport(file: file, configuration: .init(matchesBody: true, redaction: redaction))
        let matched = try await ServerAPIManager(transport: strict).send(
            ServerAPI(host: Self.host, path: "/login", method: .post).query("token", "x").query("page", "1")
                .json(["user": "ada", "password": "another"]).format(.data))
        #expect(matched.status == 200)
    }

    @Test("with redaction off (sapi --show-credentials) the values are kept: the redaction test can fail")
    func noRedaction() async throws {
        let scratch = try Scratch()
        let (text, _) = try await Self.recordSecrets(.none, in: scratch)
        for secret in Self.secrets { #expect(text.contains(secret), "\(secret) missing") }
        // Only the credential headers by default: the others are the test's to name.
        let (defaultText, _) = try await Self.recordSecrets(.default, in: try Scratch())
        #expect(
            !defaultText.contains("s3cr3t-token") && !defaultText.contains("sid-value")
                && !defaultText.contains("proxy-pass"))
        #expect(defaultText.contains("key-12345"))
    }

    @Test("a recorded file has every field HAR 1.2 requires, with its type; text and binary bodies round-trip")
    func structure() async throws {
        let scratch = try Scratch()
        let file = scratch.file("structure.har")
        let mock = MockTransport()
        let binary = Data([0, 0xFF, 0xFE, 7, 0x80])
        mock.stub(.get, "/text", .text("héllo"))
        mock.stub(.put, "/binary", .data(binary, headers: ["Content-Type": "application/octet-stream"]))
        mock.stub(.get, "/down", .cannotConnect())
        let manager = ServerAPIManager(transport: RecordingTransport(recording: mock, to: file))
        _ = try await manager.send(ServerAPI(host: Self.host, path: "/text").query("q", "a b").format(.data))
        _ = try await manager.send(
            ServerAPI(host: Self.host, path: "/binary", method: .put).body(.data(binary)).format(.data))
        _ = try? await manager.send(ServerAPI(host: Self.host, path: "/down"))

        let data = try Data(contentsOf: file)
        #expect(HARValidator.problems(data) == [])
        let archive = try HARArchive(contentsOf: file)
        #expect(archive.entries.count == 3)
        #expect(archive.entries[0].request.queryString == [.init(name: "q", value: "a b")])
        #expect(archive.entries[0].response.content.text == "héllo")
        #expect(archive.entries[1].request.postData?.encoding == "base64")
        #expect(archive.entries[1].response.content.bytes == binary)
        #expect(archive.entries[2].response.status == 0)
        #expect(archive.entries[2].response.error?.kind == "cannot connect")
        // And the validator does find what is missing.
        #expect(
            HARValidator.problems(
                Data(#"{"log":{"version":"1.2","creator":{"name":"x"},"entries":[{"request":{}}]}}"#.utf8)
            ).count > 10)
    }

    @Test("the file is written atomically: no temporary file is left, and an unwritable place is a typed error")
    func atomicWrites() async throws {
        let scratch = try Scratch()
        let file = scratch.file("nested/dir/atomic.har")
        let mock = MockTransport()
        mock.stub(.get, "/a", .text("a"))
        let manager = ServerAPIManager(transport: RecordingTransport(recording: mock, to: file))
        for _ in 0..<3 { _ = try await manager.send(ServerAPI(host: Self.host, path: "/a").format(.data)) }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path) == ["atomic.har"]
        )
        #expect(try HARArchive(contentsOf: file).entries.count == 3)

        let blocker = scratch.file("blocker")
        try Data("a file, not a folder".utf8).write(to: blocker)
        let failing = ServerAPIManager(
            transport: RecordingTransport(recording: mock, to: blocker.appendingPathComponent("x.har")))
        let error = await #expect(throws: ServerAPIError.self) {
            try await failing.send(ServerAPI(host: Self.host, path: "/a").format(.data))
        }
        #expect(error?.kind == .fileSystem)
    }

    /// A HAR as Chromium's DevTools exports it (written from the HAR 1.2 spec and Chromium's habits): pages,
    /// underscore fields of its own, a base64 body with compression, a form posted as params, a failed entry
    /// whose `_error` is a string, `http/2.0` versions, timings with `_blocked_queueing`.
    static let chromium = #"""
        {"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},
         "pages":[{"startedDateTime":"2026-03-01T10:00:00.000Z","id":"page_1","title":"https://shop.example/","pageTimings":{"onContentLoad":120.5,"onLoad":300.1}}],
         "entries":[
          {"_initiator":{"type":"script"},"_priority":"High","_resourceType":"fetch","cache":{},"connection":"443",
           "pageref":"page_1",
           "request":{"method":"GET","url":"https://shop.example/api/products?sort=price&page=1","httpVersion":"http/2.0",
             "headers":[{"name":":authority","value":"shop.example"},{"name":"accept","value":"application/json"}],
             "queryString":[{"name":"sort","value":"price"},{"name":"page","value":"1"}],"cookies":[],"headersSize":-1,"bodySize":0},
           "response":{"status":200,"statusText":"","httpVersion":"http/2.0",
             "headers":[{"name":"content-type","value":"application/json; charset=utf-8"},{"name":"content-encoding","value":"gzip"}],
             "cookies":[],"content":{"size":27,"mimeType":"application/json","compression":-5,"text":"eyJwcm9kdWN0cyI6WzEsMiwzXSwicGFnZSI6MX0=","encoding":"base64"},
             "redirectURL":"","headersSize":-1,"bodySize":32,"_transferSize":120,"_error":null},
           "serverIPAddress":"203.0.113.7","startedDateTime":"2026-03-01T10:00:00.100Z","time":85.2,
           "timings":{"blocked":1.2,"dns":-1,"ssl":-1,"connect":-1,"send":0.1,"wait":80.3,"receive":3.6,"_blocked_queueing":0.8}},
          {"cache":{},"pageref":"page_1",
           "request":{"method":"POST","url":"https://shop.example/cart","httpVersion":"http/2.0",
             "headers":[{"name":"content-type","value":"application/x-www-form-urlencoded"}],"queryString":[],"cookies":[],
             "headersSize":-1,"bodySize":14,
             "postData":{"mimeType":"application/x-www-form-urlencoded","params":[{"name":"sku","value":"42"},{"name":"qty","value":"2"}]}},
           "response":{"status":201,"statusText":"","httpVersion":"http/2.0","headers":[{"name":"content-type","value":"text/plain"}],
             "cookies":[],"content":{"size":5,"mimeType":"text/plain","text":"added"},"redirectURL":"","headersSize":-1,"bodySize":5},
           "startedDateTime":"2026-03-01T10:00:01.000Z","time":40,"timings":{"blocked":-1,"dns":-1,"ssl":-1,"connect":-1,"send":0,"wait":39,"receive":1}},
          {"cache":{},
           "request":{"method":"GET","url":"https://cdn.shop.example/offline.js","httpVersion":"","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},
           "response":{"status":0,"statusText":"","httpVersion":"","headers":[],"cookies":[],"content":{"size":0,"mimeType":"x-unknown"},
             "redirectURL":"","headersSize":-1,"bodySize":-1,"_transferSize":0,"_error":"net::ERR_CONNECTION_REFUSED"},
           "startedDateTime":"2026-03-01T10:00:02.000Z","time":2.5,"timings":{"blocked":-1,"dns":-1,"ssl":-1,"connect":-1,"send":0,"wait":0,"receive":0}}
         ]}}
        """#

    @Test("a HAR exported by Chromium's DevTools replays: base64 body, form params, a string _error")
    func chromiumArchive() async throws {
        let archive = try HARArchive(data: Data(Self.chromium.utf8), name: "chromium.har")
        #expect(HARValidator.problems(Data(Self.chromium.utf8)) == [])
        let manager = ServerAPIManager(
            transport: try ReplayingTransport(archive: archive, configuration: .init(matchesBody: true)))

        let products = try await manager.send(
            ServerAPI(host: "https://shop.example", path: "/api/products").query("page", "1").query("sort", "price")
                .format(.json))
        #expect(products.status == 200)
        #expect(products.json?["products"]?[1]?.intValue == 2)
        #expect(products.metrics.transport?.httpVersion == "2")

        let cart = try await manager.send(
            ServerAPI(host: "https://shop.example", path: "/cart", method: .post).form(["sku": "42", "qty": "2"])
                .format(.string))
        #expect(cart.status == 201)
        #expect(cart.string == "added")

        let offline = await #expect(throws: ServerAPIError.self) {
            try await manager.send(ServerAPI(host: "https://cdn.shop.example", path: "/offline.js"))
        }
        #expect(offline?.kind == .cannotConnect)
        #expect(offline?.message == "net::ERR_CONNECTION_REFUSED")
    }
}
