import Foundation
import ServerAPIKit
import ServerAPITesting
import Testing

/// `Cache-Control` and revalidation with `ETag` / `Last-Modified`, when the manager is asked to honour them.
@Suite struct HTTPCacheHeadersTests {
    static let items = ServerAPI(host: "https://api.test", path: "/items").format(.string)

    static func key(_ api: ServerAPI) throws -> CacheKey {
        CacheKey(request: try api.transportRequest(), varying: api.varyingHeaders)
    }

    static func manager(_ mock: MockTransport, _ cache: any CachePolicy, honoring: Bool = true) -> ServerAPIManager {
        var configuration = ServerAPIManager.Configuration()
        configuration.honorsHTTPCacheHeaders = honoring
        // Time stands still: a stored response's age does not grow while a test runs.
        let clock = TestClock()
        configuration.now = clock.dateSource
        return ServerAPIManager(transport: mock, cache: cache, configuration: configuration)
    }

    static func lifetime(_ entry: CacheEntry?) -> TimeInterval? {
        // Rounded to the millisecond: the dates are floating-point.
        entry.flatMap { entry in
            entry.expiresAt.map { ($0.timeIntervalSince(entry.storedAt) * 1_000).rounded() / 1_000 }
        }
    }

    @Test("Cache-Control is parsed as a client cache needs it")
    func parsing() {
        let control = CacheControl(["Cache-Control": "public, max-age=\"120\", no-cache", "cache-control": "No-Store"])
        #expect(control.noStore && control.noCache && control.maxAge == 120)
        #expect(CacheControl(["Cache-Control": "max-age=soon"]).maxAge == 0)
        #expect(CacheControl(["Cache-Control": "private"]).isPrivate)
        #expect(CacheControl([:]).isEmpty)
    }

    @Test("HTTP caching is on by default")
    func onByDefault() {
        #expect(ServerAPIManager.Configuration().honorsHTTPCacheHeaders)
    }

    @Test(
        "turned off: max-age is ignored for the TTL, no validator is sent, but no-store is still never stored",
        arguments: CacheKind.allCases)
    func turnedOff(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1", headers: ["Cache-Control": "max-age=5", "ETag": "\"a\""]))
            mock.stub(.get, "/secret", .text("v1", headers: ["Cache-Control": "no-store"]))
            let manager = Self.manager(mock, cache, honoring: false)
            let api = Self.items.cache(.returnCacheElseLoad)
            _ = try await manager.send(Self.items.path("/secret").cache(.returnCacheElseLoad))
            #expect(try await cache.lookup(Self.key(Self.items.path("/secret").cache(.returnCacheElseLoad))) == nil)
            _ = try await manager.send(api)
            let entry = try await cache.lookup(Self.key(api))
            #expect(Self.lifetime(entry) == 300)
            let old = Date().addingTimeInterval(-1_000)
            try await cache.store(
                makeEntry("old", storedAt: old, expiresAt: old, headers: ["ETag": "\"a\""]), for: Self.key(api))
            _ = try await manager.send(api)
            #expect(mock.requests.last?.headers["If-None-Match"] == nil)
        }
    }

    @Test("no-store in the response or the request keeps the response out of the cache", arguments: CacheKind.allCases)
    func noStore(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("secret", headers: ["Cache-Control": "private, no-store"]))
            mock.stub(.get, "/other", .text("fine"))
            let manager = Self.manager(mock, cache)
            let api = Self.items.cache(.returnCacheElseLoad)
            #expect(try await manager.send(api).string == "secret")
            #expect(try await cache.lookup(Self.key(api)) == nil)
            let other = Self.items.path("/other").cache(.storeOnly).setHeader("Cache-Control", "no-store")
            _ = try await manager.send(other)
            #expect(try await cache.lookup(Self.key(other)) == nil)
        }
    }

    @Test(
        "max-age less Age sets the lifetime, a call's own TTL wins over it, no-cache wins over both",
        arguments: CacheKind.allCases)
    func lifetimes(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v", headers: ["Cache-Control": "max-age=60", "Age": "20"]))
            mock.stub(.get, "/nocache", .text("v", headers: ["Cache-Control": "no-cache"]))
            let manager = Self.manager(mock, cache)
            let api = Self.items.cache(.storeOnly)
            _ = try await manager.send(api)
            #expect(Self.lifetime(try await cache.lookup(Self.key(api))) == 40)
            _ = try await manager.send(api.cache(.storeOnly, ttl: .seconds(1_000)))
            #expect(Self.lifetime(try await cache.lookup(Self.key(api))) == 1_000)
            let noCache = Self.items.path("/nocache").cache(.returnCacheElseLoad, ttl: .seconds(1_000))
            _ = try await manager.send(noCache)
            #expect(Self.lifetime(try await cache.lookup(Self.key(noCache))) == 0)
            _ = try await manager.send(noCache)
            #expect(mock.requestCount == 4)
        }
    }

    @Test(
        "a stale entry with an ETag is revalidated; a 304 answers from the cache and refreshes the entry",
        arguments: CacheKind.allCases)
    func etagRevalidation(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(
                .get, "/items", .text("v1", headers: ["ETag": "\"abc\"", "Cache-Control": "max-age=0"]),
                .status(304, headers: ["ETag": "\"abc\"", "Cache-Control": "max-age=100", "X-Fresh": "yes"]))
            let manager = Self.manager(mock, cache)
            let api = Self.items.cache(.returnCacheElseLoad)
            #expect(try await manager.send(api).string == "v1")

            let revalidated = try await manager.send(api)
            #expect(mock.requests.last?.headers["If-None-Match"] == "\"abc\"")
            #expect(revalidated.string == "v1")
            #expect(revalidated.status == 200)
            #expect(revalidated.metrics.status == 200)
            #expect(revalidated.headers["X-Fresh"] == "yes")
            #expect(revalidated.source == .cache(storedAt: revalidated.source.storedAt ?? .distantPast, age: .zero))
            let entry = try await cache.lookup(Self.key(api))
            #expect(entry?.storedAt == revalidated.source.storedAt)
            #expect(Self.lifetime(entry) == 100)
            #expect(entry?.headers["X-Fresh"] == "yes")
            #expect(entry?.body == Data("v1".utf8))

            let cached = try await manager.send(api)
            #expect(cached.string == "v1")
            #expect(mock.requestCount == 2)
        }
    }

    @Test(
        "Last-Modified is sent back as If-Modified-Since; a changed resource replaces the entry",
        arguments: CacheKind.allCases)
    func lastModified(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            let stamp = "Sat, 21 Nov 2026 10:00:00 GMT"
            mock.stub(
                .get, "/items", .text("v1", headers: ["Last-Modified": stamp, "Cache-Control": "no-cache"]),
                .text("v2", headers: ["Cache-Control": "max-age=50"]))
            let manager = Self.manager(mock, cache)
            let api = Self.items.cache(.returnCacheElseLoad)
            _ = try await manager.send(api)
            let changed = try await manager.send(api)
            #expect(mock.requests.last?.headers["If-Modified-Since"] == stamp)
            #expect(changed.string == "v2")
            #expect(!changed.isFromCache)
            #expect(try await cache.lookup(Self.key(api))?.body == Data("v2".utf8))
        }
    }

    @Test(
        "loadElseReturnCache revalidates even a fresh entry, and still falls back when offline",
        arguments: CacheKind.allCases)
    func loadElseReturnCache(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1", headers: ["ETag": "\"e\""]), .status(304), .cannotConnect())
            let manager = Self.manager(mock, cache)
            let api = Self.items.cache(.loadElseReturnCache)
            _ = try await manager.send(api)
            let second = try await manager.send(api)
            #expect(mock.requests.last?.headers["If-None-Match"] == "\"e\"")
            #expect(second.string == "v1")
            let offline = try await manager.send(api)
            #expect(offline.string == "v1")
            #expect(offline.isFromCache)
        }
    }

    @Test("a call that sends its own validator is left as it is", arguments: CacheKind.allCases)
    func ownValidator(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(
                .get, "/items", .text("v1", headers: ["ETag": "\"e\"", "Cache-Control": "no-cache"]), .status(304))
            let manager = Self.manager(mock, cache)
            let api = Self.items.cache(.returnCacheElseLoad)
            _ = try await manager.send(api)
            let error = await #expect(throws: ServerAPIError.self) {
                try await manager.send(api.setHeader("If-None-Match", "\"mine\""))
            }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 304)
            #expect(mock.requests.last?.headers.values(for: "If-None-Match") == ["\"mine\""])
        }
    }
}

extension ResultSource {
    /// When the entry was stored, for a cached result.
    var storedAt: Date? { if case .cache(let storedAt, _) = self { storedAt } else { nil } }
}
