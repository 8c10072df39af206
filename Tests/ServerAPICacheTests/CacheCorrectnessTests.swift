import Foundation
import ServerAPIKit
import ServerAPITesting
import Synchronization
import Testing

/// The cache never answers with wrong data: not a partial response as a whole, not another request's variant,
/// not what an unsafe request changed, not what expired. Each on both caches, through the manager, with time on
/// a `TestClock`.
@Suite struct CacheCorrectnessTests {
    static let items = ServerAPI(host: "https://api.test", path: "/items").format(.string)

    static func manager(
        _ mock: MockTransport, _ cache: any CachePolicy, clock: TestClock, honoring: Bool = true,
        maxStaleAge: Duration? = nil
    ) -> ServerAPIManager {
        var configuration = ServerAPIManager.Configuration(defaultCacheTTL: .zero)
        configuration.honorsHTTPCacheHeaders = honoring
        configuration.now = clock.dateSource
        configuration.maxStaleAge = maxStaleAge
        return ServerAPIManager(transport: mock, cache: cache, configuration: configuration)
    }

    static func httpDate(_ clock: TestClock, _ offset: TimeInterval = 0) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: clock.date.addingTimeInterval(offset))
    }

    @Test(
        "a stored 206 never answers a plain GET, in any mode, with HTTP cache headers on or off",
        arguments: CacheKind.allCases, [true, false])
    func partialNeverServedWhole(kind: CacheKind, honoring: Bool) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(
                .get, "/items",
                .text(
                    "56789", status: 206,
                    headers: ["Content-Range": "bytes 5-9/10", "Cache-Control": "max-age=3600"]),
                .text("0123456789", headers: ["Cache-Control": "max-age=3600"]))
            let manager = Self.manager(mock, cache, clock: clock, honoring: honoring)
            for mode in [CacheMode.returnCacheElseLoad, .storeOnly, .loadElseReturnCache] {
                _ = try await manager.send(Self.items.setHeader("Range", "bytes=-5").cache(mode).accept(.any))
            }
            // A TTL, so that the stored whole is fresh with HTTP cache headers off too.
            let whole = try await manager.send(Self.items.cache(.returnCacheElseLoad, ttl: .seconds(3600)))
            #expect(whole.status == 200)
            #expect(whole.string == "0123456789")
            #expect(!whole.isFromCache)
            // A stored whole answers a request for one part of it with that part; several parts are the server's.
            let part = try await manager.send(
                Self.items.setHeader("Range", "bytes=-5").cache(.returnCacheElseLoad, ttl: .seconds(3600)))
            #expect(part.isFromCache)
            #expect(part.status == 206)
            #expect(part.string == "56789")
            #expect(part.headers["Content-Range"] == "bytes 5-9/10")
            let parts = try await manager.send(
                Self.items.setHeader("Range", "bytes=0-1, 3-4").cache(.returnCacheElseLoad).accept(.any))
            #expect(!parts.isFromCache)
            #expect(mock.requestCount == 5)
        }
    }

    @Test(
        "Vary: one request's variant never answers another's; variants of one URL are kept side by side",
        arguments: CacheKind.allCases)
    func varyRespected(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(handler: { request in
                let foo = request.headers["Foo"] ?? "none"
                return .text("for \(foo)", headers: ["Cache-Control": "max-age=3600", "Vary": "Foo"])
            })
            let manager = Self.manager(mock, cache, clock: clock)
            let api = Self.items.cache(.returnCacheElseLoad)
            #expect(try await manager.send(api.setHeader("Foo", "1")).string == "for 1")
            let other = try await manager.send(api.setHeader("Foo", "2"))
            #expect(other.string == "for 2")
            #expect(!other.isFromCache)
            let omitted = try await manager.send(api)
            #expect(omitted.string == "for none")
            #expect(!omitted.isFromCache)
            #expect(mock.requestCount == 3)
            // All three are stored: each answers its own request again, from the cache.
            for foo in ["1", "2"] {
                let again = try await manager.send(api.setHeader("Foo", foo))
                #expect(again.string == "for \(foo)")
                #expect(again.isFromCache)
            }
            #expect(try await manager.send(api).string == "for none")
            #expect(mock.requestCount == 3)
        }
    }

    @Test(
        "Vary: a request no stored variant fits offers the stored one's ETag; a 304 makes it this request's answer",
        arguments: CacheKind.allCases)
    func varyOffersStoredETag(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(handler: { request in
                if request.headers["If-None-Match"] == "\"same\"" {
                    return .text("", status: 304, headers: ["Cache-Control": "max-age=3600", "ETag": "\"same\""])
                }
                return .text(
                    "same for all", headers: ["Cache-Control": "max-age=3600", "Vary": "Foo", "ETag": "\"same\""])
            })
            let manager = Self.manager(mock, cache, clock: clock)
            let api = Self.items.cache(.returnCacheElseLoad)
            #expect(try await manager.send(api.setHeader("Foo", "1")).string == "same for all")
            let other = try await manager.send(api.setHeader("Foo", "2"))
            #expect(mock.requests.last?.headers["If-None-Match"] == "\"same\"")
            #expect(other.status == 200)
            #expect(other.string == "same for all")
            // Stored as the second request's variant too: both answer from the cache now.
            for foo in ["1", "2"] { #expect(try await manager.send(api.setHeader("Foo", foo)).isFromCache) }
            #expect(mock.requestCount == 2)
        }
    }

    @Test(
        "Vary on Cookie or Authorization: another party's stored response is never offered as a validator",
        arguments: CacheKind.allCases, ["Cookie", "Authorization"])
    func varyOnCredentialsOffersNothing(kind: CacheKind, field: String) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(handler: { request in
                .text(
                    "for \(request.headers[field] ?? "")",
                    headers: [
                        "Cache-Control": "private, max-age=3600", "Vary": field, "ETag": "\"tag\"",
                    ])
            })
            let manager = Self.manager(mock, cache, clock: clock)
            let api = Self.items.cache(.returnCacheElseLoad)
            _ = try await manager.send(api.setHeader(field, "a"))
            let other = try await manager.send(api.setHeader(field, "b"))
            #expect(other.string == "for b")
            #expect(mock.requestCount == 2)
            #expect(mock.requests.last?.headers["If-None-Match"] == nil)
        }
    }

    @Test("Vary: * is never answered from the cache", arguments: CacheKind.allCases)
    func varyStar(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v", headers: ["Cache-Control": "max-age=3600", "Vary": "*"]))
            let manager = Self.manager(mock, cache, clock: clock)
            _ = try await manager.send(Self.items.cache(.returnCacheElseLoad))
            #expect(try await manager.send(Self.items.cache(.returnCacheElseLoad)).isFromCache == false)
        }
    }

    @Test(
        "an unsafe method's success invalidates the URL, its Location and Content-Location; a failure does not",
        arguments: CacheKind.allCases, ["POST", "PUT", "DELETE", "M-SEARCH"])
    func invalidation(kind: CacheKind, method: String) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            let counter = Counter()
            mock.stub(handler: { request in
                if request.method.rawValue == method {
                    let fails = request.headers["X-Fail"] != nil
                    return .text(
                        "done", status: fails ? 500 : 200,
                        headers: ["Location": "/other", "Content-Location": "https://api.test/third"])
                }
                return .text("v\(counter.next())", headers: ["Cache-Control": "max-age=3600"])
            })
            let manager = Self.manager(mock, cache, clock: clock)
            let paths = ["/items", "/other", "/third"]
            for path in paths { _ = try await manager.send(Self.items.path(path).cache(.returnCacheElseLoad)) }
            let unsafe = Self.items.method(HTTPMethod(rawValue: method)).body(.data(Data("abc".utf8))).accept(.any)
            _ = try await manager.send(unsafe.setHeader("X-Fail", "1"))
            for path in paths {
                #expect(try await manager.send(Self.items.path(path).cache(.returnCacheElseLoad)).isFromCache)
            }
            _ = try await manager.send(unsafe)
            for path in paths {
                let after = try await manager.send(Self.items.path(path).cache(.returnCacheElseLoad))
                #expect(!after.isFromCache, "\(path)")
            }
        }
    }

    @Test(
        "a POST's fresh response naming its own URL as Content-Location answers the next GET",
        arguments: CacheKind.allCases)
    func postAnswersGet(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(
                .post, "/items",
                .text("created", headers: ["Cache-Control": "max-age=3600", "Content-Location": "/items"]),
                .text("other", headers: ["Cache-Control": "max-age=3600", "Content-Location": "/elsewhere"]))
            mock.stub(.get, "/items", .text("fetched", headers: ["Cache-Control": "max-age=3600"]))
            let manager = Self.manager(mock, cache, clock: clock)
            let post = Self.items.method(.post).body(.data(Data("12345".utf8))).cache(.returnCacheElseLoad)
            _ = try await manager.send(post)
            let get = try await manager.send(Self.items.cache(.returnCacheElseLoad))
            #expect(get.isFromCache)
            #expect(get.string == "created")
            // A POST whose Content-Location is another URL invalidates this one and stores nothing for it.
            _ = try await manager.send(post)
            let after = try await manager.send(Self.items.cache(.returnCacheElseLoad))
            #expect(!after.isFromCache)
            #expect(after.string == "fetched")
        }
    }

    @Test("Expires in the past is stale; Age counts against max-age; Age: old, 0 is old", arguments: CacheKind.allCases)
    func expiresAndAge(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(
                .get, "/expired",
                .text("v", headers: ["Date": Self.httpDate(clock), "Expires": Self.httpDate(clock, -86_400)]))
            mock.stub(
                .get, "/expires",
                .text("v", headers: ["Date": Self.httpDate(clock), "Expires": Self.httpDate(clock, 100)]))
            mock.stub(.get, "/old", .text("v", headers: ["Cache-Control": "max-age=3600", "Age": "7200, 0"]))
            let manager = Self.manager(mock, cache, clock: clock, honoring: true)
            for path in ["/expired", "/expires", "/old"] {
                _ = try await manager.send(Self.items.path(path).cache(.returnCacheElseLoad))
            }
            #expect(!(try await manager.send(Self.items.path("/expired").cache(.returnCacheElseLoad)).isFromCache))
            #expect(!(try await manager.send(Self.items.path("/old").cache(.returnCacheElseLoad)).isFromCache))
            clock.advance(by: .seconds(50))
            let fresh = try await manager.send(Self.items.path("/expires").cache(.returnCacheElseLoad))
            #expect(fresh.isFromCache)
            // The age a stored response is served with: its age now, not when it was stored; Date as received.
            #expect(fresh.headers["Age"] == "50")
            #expect(fresh.headers["Date"] == Self.httpDate(clock, -50))
            clock.advance(by: .seconds(50))
            #expect(!(try await manager.send(Self.items.path("/expires").cache(.returnCacheElseLoad)).isFromCache))
        }
    }

    @Test("hop-by-hop fields, and those Connection names, are not stored", arguments: CacheKind.allCases)
    func hopByHop(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(
                .get, "/items",
                .text(
                    "v",
                    headers: [
                        "Cache-Control": "max-age=3600", "Connection": "a, b", "A": "1", "B": "2", "C": "3",
                        "Keep-Alive": "timeout=5", "Upgrade": "h2c", "Proxy-Authenticate": "Basic", "TE": "trailers",
                    ]))
            let manager = Self.manager(mock, cache, clock: clock)
            _ = try await manager.send(Self.items.cache(.returnCacheElseLoad))
            let cached = try await manager.send(Self.items.cache(.returnCacheElseLoad))
            #expect(cached.isFromCache)
            #expect(cached.headers["C"] == "3")
            for name in ["Connection", "A", "B", "Keep-Alive", "Upgrade", "Proxy-Authenticate", "TE"] {
                #expect(cached.headers[name] == nil, "\(name)")
            }
        }
    }

    @Test(
        "the seeds' modes never serve stale what said no-cache or must-revalidate, nor store no-store",
        arguments: CacheKind.allCases)
    func modesKeepTheServersWord(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/no-cache", .text("v", headers: ["Cache-Control": "no-cache"]), .cannotConnect())
            mock.stub(
                .get, "/must", .text("v", headers: ["Cache-Control": "max-age=10, must-revalidate"]), .cannotConnect())
            mock.stub(.get, "/plain", .text("v", headers: ["Cache-Control": "max-age=10"]), .cannotConnect())
            mock.stub(.get, "/secret", .text("v", headers: ["Cache-Control": "no-store"]), .cannotConnect())
            let manager = Self.manager(mock, cache, clock: clock)
            for path in ["/no-cache", "/must", "/plain", "/secret"] {
                _ = try await manager.send(Self.items.path(path).cache(.loadElseReturnCache))
            }
            clock.advance(by: .seconds(60))
            for path in ["/no-cache", "/must", "/secret"] {
                let offline = await #expect(throws: ServerAPIError.self, "\(path)") {
                    try await manager.send(Self.items.path(path).cache(.loadElseReturnCache))
                }
                #expect(offline?.kind == .cannotConnect, "\(path)")
                let error = await #expect(throws: ServerAPIError.self, "\(path)") {
                    try await manager.send(Self.items.path(path).cache(.cacheOnly))
                }
                #expect(error?.kind == .cacheMiss)
            }
            // What the server did not forbid is still the offline fallback, stale or not.
            #expect(try await manager.send(Self.items.path("/plain").cache(.loadElseReturnCache)).isFromCache)
            #expect(try await manager.send(Self.items.path("/plain").cache(.cacheOnly)).isFromCache)
        }
    }

    @Test(
        "a stale response answers when the server fails (no connection, a 5xx), unless forbidden or past stale-if-error",
        arguments: CacheKind.allCases)
    func staleWhenServerFails(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            let down = MockStub.text("down", status: 503)
            mock.stub(.get, "/plain", .text("v", headers: ["Cache-Control": "max-age=10"]), down, .cannotConnect())
            mock.stub(.get, "/must", .text("v", headers: ["Cache-Control": "max-age=10, must-revalidate"]), down)
            mock.stub(.get, "/no-cache", .text("v", headers: ["Cache-Control": "no-cache"]), down)
            mock.stub(.get, "/sie", .text("v", headers: ["Cache-Control": "max-age=10, stale-if-error=20"]), down)
            let manager = Self.manager(mock, cache, clock: clock)
            let load = CacheMode.returnCacheElseLoad
            for path in ["/plain", "/must", "/no-cache", "/sie"] {
                _ = try await manager.send(Self.items.path(path).cache(load))
            }
            clock.advance(by: .seconds(60))
            // Cut off from the server: a 503, then no connection at all. The answer says it is the stored one.
            for _ in 0..<2 {
                let stale = try await manager.send(Self.items.path("/plain").cache(load))
                #expect(stale.isFromCache)
                #expect(stale.string == "v")
                #expect(stale.status == 200)
            }
            // The call asked for the server's answer: it gets the failure.
            let asked = await #expect(throws: ServerAPIError.self) {
                try await manager.send(Self.items.path("/plain").setHeader("Cache-Control", "no-cache").cache(load))
            }
            #expect(asked?.kind == .cannotConnect)
            // The server forbade stale, or its stale-if-error window (20 s) has passed: the 503 is the caller's.
            for path in ["/must", "/no-cache", "/sie"] {
                let error = await #expect(throws: ServerAPIError.self, "\(path)") {
                    try await manager.send(Self.items.path(path).cache(load))
                }
                #expect(error?.kind == .httpStatus, "\(path)")
                #expect(error?.status == 503, "\(path)")
            }
        }
    }

    @Test("a call's TTL replaces the server's freshness, but never makes no-cache fresh", arguments: CacheKind.allCases)
    func perCallTTL(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/short", .text("v", headers: ["Cache-Control": "max-age=1"]))
            mock.stub(.get, "/no-cache", .text("v", headers: ["Cache-Control": "no-cache"]))
            let manager = Self.manager(mock, cache, clock: clock)
            for path in ["/short", "/no-cache"] {
                _ = try await manager.send(Self.items.path(path).cache(.returnCacheElseLoad, ttl: .seconds(60)))
            }
            clock.advance(by: .seconds(30))
            #expect(
                try await manager.send(Self.items.path("/short").cache(.returnCacheElseLoad, ttl: .seconds(60)))
                    .isFromCache)
            #expect(
                !(try await manager.send(Self.items.path("/no-cache").cache(.returnCacheElseLoad, ttl: .seconds(60)))
                    .isFromCache))
        }
    }

    @Test(
        "stale-while-revalidate: served stale at once, revalidated in the background; past the window, loaded",
        arguments: CacheKind.allCases)
    func staleWhileRevalidate(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(
                .get, "/items",
                .text("v1", headers: ["Cache-Control": "max-age=1, stale-while-revalidate=4", "ETag": "\"a\""]),
                .text("v2", headers: ["Cache-Control": "no-cache", "ETag": "\"b\""]),
                .text("v3", headers: ["Cache-Control": "max-age=100"]))
            let manager = Self.manager(mock, cache, clock: clock)
            let api = Self.items.cache(.returnCacheElseLoad)
            _ = try await manager.send(api)
            clock.advance(by: .seconds(3))
            let stale = try await manager.send(api)
            #expect(stale.string == "v1")
            #expect(stale.isFromCache)
            await manager.backgroundRevalidationsFinished()
            #expect(mock.requestCount == 2)
            #expect(mock.requests.last?.headers["If-None-Match"] == "\"a\"")
            clock.advance(by: .seconds(3))
            // The background revalidation stored v2, which said no-cache: the next call goes to the server.
            #expect(try await manager.send(api).string == "v3")
            #expect(mock.requestCount == 3)
        }
    }

    @Test(
        "the manager's maxStaleAge: a response stale for longer answers nothing, even offline, and leaves the store",
        arguments: CacheKind.allCases)
    func maxStaleAge(kind: CacheKind) async throws {
        let clock = TestClock()
        try await kind.with(clock: clock) { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("stored", headers: ["Cache-Control": "max-age=10"]))
            let manager = Self.manager(mock, cache, clock: clock, maxStaleAge: .seconds(100))
            _ = try await manager.send(Self.items.cache(.returnCacheElseLoad))
            let key = CacheKey(request: try Self.items.transportRequest(), varying: Self.items.varyingHeaders)
            #expect(try await cache.lookup(key) != nil)
            // Stale for 99 s: still the offline answer.
            clock.advance(by: .seconds(109))
            #expect(try await manager.send(Self.items.cache(.cacheOnly)).string == "stored")
            // Stale for 101 s: gone.
            clock.advance(by: .seconds(2))
            let error = await #expect(throws: ServerAPIError.self) {
                try await manager.send(Self.items.cache(.cacheOnly))
            }
            #expect(error?.kind == .cacheMiss)
            #expect(try await cache.lookup(key) == nil)
        }
    }
}

/// A counter shared with a mock's handler.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
