import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@_spi(Backend) @testable import ServerAPIKit

@Suite("Logging", .timeLimit(.minutes(1)))
struct LoggingPluginTests {
    /// A cache with one entry per key, for the "from cache" line.
    final class TinyCache: CachePolicy {
        private let entries = Locked<[CacheKey: CacheEntry]>([:])
        func lookup(_ key: CacheKey) async throws -> CacheEntry? { entries.withLock { $0[key] } }
        func store(_ entry: CacheEntry, for key: CacheKey) async throws { entries.withLock { $0[key] = entry } }
        func remove(_ key: CacheKey) async throws { _ = entries.withLock { $0.removeValue(forKey: key) } }
        func removeAll() async throws { entries.withLock { $0.removeAll() } }
    }

    @Test("start and end of each attempt and call: method, URL, status, duration, bytes, attempt, network or cache")
    func lines() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/items", .status(503), .json(#"{"a":1}"#))
        let log = Recorder<String>()
        let manager = ServerAPIManager(
            transport: mock, cache: TinyCache(), plugins: [LoggingPlugin(logsHeaders: false, sink: log.append)])
        let api = ServerAPI.test("/items").query("page", "2").retry(1, policy: .immediate).cache(.returnCacheElseLoad)
        _ = try await manager.send(api)
        let url = "https://api.test/items?page=2"
        let lines = log.all
        #expect(lines.count == 5)
        #expect(lines[0] == "→ GET \(url) \(api.id) attempt 1")
        #expect(lines[1].hasPrefix("← 503 GET \(url) \(api.id) attempt 1: "))
        #expect(lines[2] == "→ GET \(url) \(api.id) attempt 2")
        #expect(lines[3].hasPrefix("← 200 GET \(url) \(api.id) attempt 2: "))
        #expect(lines[3].hasSuffix(" ms, sent 0 B, received 7 B via mock"))
        #expect(
            lines[4].hasPrefix("✓ GET \(url) \(api.id) from network: ")
                && lines[4].hasSuffix(" ms, 2 attempts, received 7 B"))

        _ = try await manager.send(api)
        #expect(log.all.count == 6)
        #expect(log.all[5].hasPrefix("✓ GET \(url) \(api.id) from cache: "))
    }

    @Test("a streamed call logs its head as streaming, its end with the bytes received, and redacts as usual")
    func streamed() async throws {
        let clock = TestClock()
        let mock = MockTransport(clock: clock)
        // The body cannot end before the test advances the clock, so the end's line cannot come early.
        mock.stub(.get, "/feed", .stream([.text("abc"), .wait(.seconds(1)), .text("de")]))
        let log = Recorder<String>()
        let manager = ServerAPIManager(
            transport: mock, plugins: [LoggingPlugin(logsHeaders: false, sink: log.append)],
            configuration: .init(clock: clock))
        let api = ServerAPI.test("/feed").query("token", "SECRET-9")
        let response = try await manager.stream(api)
        await clock.waitForSleepers(1)
        #expect(log.all.count == 2)
        #expect(log.all[1].hasSuffix("streaming the body via mock"))
        clock.advance(by: .seconds(1))
        _ = try await response.body.collect(upTo: 100)
        _ = await response.finalMetrics
        #expect(log.all.count == 3)
        #expect(log.all[2].hasSuffix(", 1 attempt, received 5 B"))
        #expect(!log.all.joined().contains("SECRET-9"))
    }

    @Test("a failure is logged with its kind and message")
    func failure() async {
        let mock = MockTransport()
        mock.stub(.get, "/down", .cannotConnect())
        let log = Recorder<String>()
        let manager = ServerAPIManager(transport: mock, plugins: [LoggingPlugin(sink: log.append)])
        #expect(await expectError { try await manager.send(.test("/down")) }?.kind == .cannotConnect)
        #expect(log.all.contains { $0.hasPrefix("← failed GET https://api.test/down") && $0.contains("connect") })
        #expect(log.all.last?.hasPrefix("✗ GET https://api.test/down") == true)
        #expect(log.all.last?.contains("1 attempt: cannot connect: could not connect (stub)") == true)
    }

    @Test("Authorization, Cookie, Set-Cookie and secret query values are redacted by default")
    func redaction() async throws {
        let mock = MockTransport()
        mock.stub(
            .get, "/me",
            .json("{}", headers: ["Set-Cookie": "sid=SECRET-5; HttpOnly", "X-Trace": "visible-header"]))
        mock.stub(
            .get, "/fail",
            .failure(ServerAPIError(.invalidRequest, "rejected https://api.test/fail?access_token=SECRET-6&x=1")))
        let log = Recorder<String>()
        let manager = ServerAPIManager(transport: mock, plugins: [LoggingPlugin(sink: log.append)])
        let api = ServerAPI(url: try #require(URL(string: "https://user:SECRET-0@api.test/me")))
            .setHeader("Authorization", "Bearer SECRET-1").setHeader("Cookie", "sid=SECRET-2")
            .query("token", "SECRET-3").query("Password", "SECRET-4").query("q", "visible-query")
        _ = try await manager.send(api)
        #expect(await expectError { try await manager.send(.test("/fail")) }?.kind == .invalidRequest)
        let text = log.all.joined(separator: "\n")
        #expect(!text.contains("SECRET"))
        for visible in [
            "visible-query", "visible-header", "Authorization: <redacted>", "Cookie: <redacted>",
            "Set-Cookie: <redacted>", "token=<redacted>", "Password=<redacted>", "user:<redacted>@",
            "access_token=<redacted>&x=1",
        ] {
            #expect(text.contains(visible), "missing \(visible)")
        }
    }

    @Test("configured keys and headers replace the defaults")
    func configuredRedaction() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .json("{}"))
        let log = Recorder<String>()
        let plugin = LoggingPlugin(redactedHeaders: ["X-Session"], redactedQueryKeys: ["sid"], sink: log.append)
        let manager = ServerAPIManager(transport: mock, plugins: [plugin])
        _ = try await manager.send(.test().query("sid", "hidden").query("token", "shown").header("x-session", "s"))
        let text = log.all.joined(separator: "\n")
        #expect(text.contains("sid=<redacted>") && text.contains("token=shown"))
        #expect(text.contains("x-session: <redacted>") && !text.contains("hidden"))
    }

    @Test("redaction of text handles keys anywhere, in any case, percent-encoded or not")
    func textRedaction() {
        let plugin = LoggingPlugin(sink: { _ in })
        #expect(plugin.redact("a TOKEN=abc b") == "a TOKEN=<redacted> b")
        #expect(plugin.redact("x?pass%77ord=1&api_key=2&keep=3") == "x?pass%77ord=<redacted>&api_key=<redacted>&keep=3")
        #expect(plugin.redact("monkey=1 tokenize=2") == "monkey=1 tokenize=2")
        let url = URL(string: "https://a.test/p?x=1&token=2#frag")
        #expect(url.map(plugin.redact) == "https://a.test/p?x=1&token=<redacted>#frag")
    }
}
