import Foundation
import ServerAPIFileCache
import ServerAPIKit
import ServerAPITestSupport
import ServerAPITesting
import Testing

/// Every `CacheMode` through `ServerAPIManager` and `MockTransport`, with each cache.
@Suite struct CacheModeTests {
    static let items = ServerAPI(host: "https://api.test", path: "/items").format(.string)

    static func key(_ api: ServerAPI) throws -> CacheKey {
        CacheKey(request: try api.transportRequest(), varying: api.varyingHeaders)
    }

    @Test("never: the cache is neither read nor written", arguments: CacheKind.allCases)
    func never(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1"), .text("v2"))
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.never)
            try await cache.store(makeEntry("cached"), for: Self.key(api))
            #expect(try await manager.send(api).string == "v1")
            #expect(try await manager.send(api).string == "v2")
            #expect(mock.requestCount == 2)
            #expect(try await cache.lookup(Self.key(api))?.body == Data("cached".utf8))
        }
    }

    @Test("storeOnly: every call loads, and the latest response is stored", arguments: CacheKind.allCases)
    func storeOnly(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1"), .text("v2"))
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.storeOnly, ttl: .seconds(1_000))
            let first = try await manager.send(api)
            #expect(first.string == "v1")
            #expect(first.source == .network)
            #expect(try await manager.send(api).string == "v2")
            #expect(mock.requestCount == 2)
            let entry = try await cache.lookup(Self.key(api))
            #expect(entry?.body == Data("v2".utf8))
            #expect(entry.flatMap { $0.expiresAt?.timeIntervalSince($0.storedAt).rounded() } == 1_000)
        }
    }

    @Test(
        "returnCacheElseLoad: a fresh entry answers without the transport; a stale one is reloaded",
        arguments: CacheKind.allCases)
    func returnCacheElseLoad(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1"), .text("v2"))
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.returnCacheElseLoad)
            let loaded = try await manager.send(api)
            #expect(loaded.string == "v1")
            #expect(!loaded.isFromCache)
            #expect(mock.requestCount == 1)

            let cached = try await manager.send(api)
            #expect(cached.string == "v1")
            #expect(mock.requestCount == 1)
            guard case .cache(let storedAt, let age) = cached.source else {
                Issue.record("expected a cached result, got \(cached.source)")
                return
            }
            #expect(storedAt <= Date())
            #expect(age >= .zero && age < .seconds(600))
            #expect(cached.metrics.attempts == 0)

            // Expired: the call loads again and stores the new response.
            let old = Date().addingTimeInterval(-600)
            try await cache.store(
                makeEntry("old", storedAt: old, expiresAt: old.addingTimeInterval(60)), for: Self.key(api))
            let reloaded = try await manager.send(api)
            #expect(reloaded.string == "v2")
            #expect(!reloaded.isFromCache)
            #expect(mock.requestCount == 2)
            #expect(try await cache.lookup(Self.key(api))?.body == Data("v2".utf8))
        }
    }

    @Test(
        "returnCacheThenLoad: the stream yields the cached result, then the network's, which is stored",
        arguments: CacheKind.allCases)
    func returnCacheThenLoad(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1"), .text("v2"))
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.returnCacheThenLoad)

            var first: [ServerResult] = []
            for try await result in manager.updates(api) { first.append(result) }
            #expect(first.map(\.string) == ["v1"])
            #expect(first.map(\.isFromCache) == [false])

            var second: [ServerResult] = []
            for try await result in manager.updates(api) { second.append(result) }
            #expect(second.map(\.string) == ["v1", "v2"])
            #expect(second.map(\.isFromCache) == [true, false])
            #expect(mock.requestCount == 2)
            #expect(try await cache.lookup(Self.key(api))?.body == Data("v2".utf8))
        }
    }

    /// Failures that let the cache stand in for the network.
    enum Outage: String, CaseIterable, CustomTestStringConvertible {
        case timeout, cannotConnect, serverError
        var testDescription: String { rawValue }
        var stub: MockStub {
            switch self {
            case .timeout: .timeout()
            case .cannotConnect: .cannotConnect()
            case .serverError: .status(503)
            }
        }
        /// The error a call sees when no cached entry stands in.
        var kind: ServerAPIError.Kind {
            switch self {
            case .timeout: .timedOut
            case .cannotConnect: .cannotConnect
            case .serverError: .httpStatus
            }
        }
        var status: Int? { self == .serverError ? 503 : nil }
    }

    @Test(
        "loadElseReturnCache: when the network fails, the cached entry answers, marked with its age",
        arguments: CacheKind.allCases, Outage.allCases)
    func loadElseReturnCache(kind: CacheKind, outage: Outage) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1"), outage.stub)
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.loadElseReturnCache)
            #expect(try await manager.send(api).source == .network)

            // An old, expired entry still stands in.
            let storedAt = Date().addingTimeInterval(-120)
            try await cache.store(
                makeEntry("saved", storedAt: storedAt, expiresAt: storedAt.addingTimeInterval(1)), for: Self.key(api))
            let fallback = try await manager.send(api)
            #expect(fallback.string == "saved")
            #expect(mock.requestCount == 2)
            guard case .cache(let entryDate, let age) = fallback.source else {
                Issue.record("expected a cached result, got \(fallback.source)")
                return
            }
            #expect(entryDate == storedAt)
            #expect(age >= .seconds(119) && age < .seconds(3_600))

            // Without an entry, the failure is the caller's.
            try await cache.removeAll()
            let error = await #expect(throws: ServerAPIError.self) { try await manager.send(api) }
            #expect(error?.kind == outage.kind)
            #expect(error?.status == outage.status)
        }
    }

    @Test("loadElseReturnCache: a client error such as 404 is not hidden by the cache", arguments: CacheKind.allCases)
    func loadElseReturnCacheClientError(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1"), .status(404))
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.loadElseReturnCache)
            _ = try await manager.send(api)
            let error = await #expect(throws: ServerAPIError.self) { try await manager.send(api) }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 404)
        }
    }

    @Test(
        "cacheOnly: a hit answers, even stale, without the transport; a miss is a cacheMiss error",
        arguments: CacheKind.allCases)
    func cacheOnly(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1"))
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.cacheOnly)
            let miss = await #expect(throws: ServerAPIError.self) { try await manager.send(api) }
            #expect(miss?.kind == .cacheMiss)

            let old = Date().addingTimeInterval(-600)
            try await cache.store(
                makeEntry("stale", storedAt: old, expiresAt: old.addingTimeInterval(1)), for: Self.key(api))
            let hit = try await manager.send(api)
            #expect(hit.string == "stale")
            #expect(hit.isFromCache)
            #expect(mock.requestCount == 0)
        }
    }

    @Test("cacheOnly without a cache is a cacheMiss error")
    func cacheOnlyWithoutCache() async throws {
        let mock = MockTransport()
        let manager = ServerAPIManager(transport: mock)
        let error = await #expect(throws: ServerAPIError.self) { try await manager.send(Self.items.cache(.cacheOnly)) }
        #expect(error?.kind == .cacheMiss)
        #expect(mock.requestCount == 0)
    }

    @Test(
        "two users with different Authorization never share an entry when the header is varying",
        arguments: CacheKind.allCases)
    func twoUsers(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub { request in .text("data of \(request.headers["Authorization"] ?? "nobody")") }
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.returnCacheElseLoad).varying("Authorization")
            let alice = api.setHeader("Authorization", "Bearer alice")
            let bob = api.setHeader("Authorization", "Bearer bob")
            #expect(try await manager.send(alice).string == "data of Bearer alice")
            #expect(try await manager.send(bob).string == "data of Bearer bob")
            #expect(mock.requestCount == 2)
            let aliceAgain = try await manager.send(alice)
            #expect(aliceAgain.string == "data of Bearer alice")
            #expect(aliceAgain.isFromCache)
            #expect(try await manager.send(bob).string == "data of Bearer bob")
            #expect(mock.requestCount == 2)
            let carol = await #expect(throws: ServerAPIError.self) {
                try await manager.send(api.setHeader("Authorization", "Bearer carol").cache(.cacheOnly))
            }
            #expect(carol?.kind == .cacheMiss)
        }
    }

    @Test("a varying header set as a manager default header keeps users apart too", arguments: CacheKind.allCases)
    func twoUsersByDefaultHeaders(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub { request in .text("data of \(request.headers["Authorization"] ?? "nobody")") }
            let alice = ServerAPIManager(
                transport: mock, cache: cache, configuration: .init(defaultHeaders: ["Authorization": "Bearer alice"]))
            let bob = ServerAPIManager(
                transport: mock, cache: cache, configuration: .init(defaultHeaders: ["Authorization": "Bearer bob"]))
            let api = Self.items.cache(.returnCacheElseLoad).varying("Authorization")
            #expect(try await alice.send(api).string == "data of Bearer alice")
            #expect(try await bob.send(api).string == "data of Bearer bob")
            #expect(try await alice.send(api).string == "data of Bearer alice")
            #expect(mock.requestCount == 2)
        }
    }

    @Test(
        "two users of one URL with user-info never share an entry, though it is sent as Authorization",
        arguments: CacheKind.allCases)
    func userInfoVaries(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub { request in .text("data of \(request.headers["Authorization"] ?? "nobody")") }
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let ada = try #require(ServerAPI(urlString: "https://ada:one@api.test/items")).format(.string)
            let bob = try #require(ServerAPI(urlString: "https://bob:two@api.test/items")).format(.string)
            let adaData = "data of Basic " + Data("ada:one".utf8).base64EncodedString()
            let bobData = "data of Basic " + Data("bob:two".utf8).base64EncodedString()
            #expect(try await manager.send(ada.cache(.returnCacheElseLoad)).string == adaData)
            #expect(try await manager.send(bob.cache(.returnCacheElseLoad)).string == bobData)
            #expect(try await manager.send(ada.cache(.returnCacheElseLoad)).string == adaData)
            #expect(mock.requestCount == 2)
        }
    }

    @Test(
        "a header not listed as varying is not part of the key (so list Authorization)", arguments: CacheKind.allCases)
    func unlistedHeaderIsShared(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub { request in .text("data of \(request.headers["Authorization"] ?? "nobody")") }
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.returnCacheElseLoad)
            _ = try await manager.send(api.setHeader("Authorization", "Bearer alice"))
            #expect(
                try await manager.send(api.setHeader("Authorization", "Bearer bob")).string == "data of Bearer alice")
            #expect(mock.requestCount == 1)
        }
    }

    @Test(
        "only GET and HEAD are cached unless the call opts in; the body is part of the key",
        arguments: CacheKind.allCases)
    func methods(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub { request in
                .text("answer to \(String(decoding: request.body.inMemoryBytes ?? Data(), as: UTF8.self))")
            }
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let search = ServerAPI(host: "https://api.test", path: "/search", method: .post)
                .format(.string).body(.data(Data("swift".utf8), contentType: "text/plain")).cache(.returnCacheElseLoad)
            _ = try await manager.send(search)
            _ = try await manager.send(search)
            #expect(mock.requestCount == 2)
            let notCacheable = await #expect(throws: ServerAPIError.self) {
                try await manager.send(search.cache(.cacheOnly))
            }
            #expect(notCacheable?.kind == .cacheMiss)

            let cacheable = search.cacheable(methods: .post)
            #expect(try await manager.send(cacheable).string == "answer to swift")
            #expect(try await manager.send(cacheable).isFromCache)
            #expect(mock.requestCount == 3)
            let other = cacheable.body(.data(Data("rust".utf8), contentType: "text/plain"))
            #expect(try await manager.send(other).string == "answer to rust")
            #expect(mock.requestCount == 4)
        }
    }

    @Test("a response the formatter rejects is not stored", arguments: CacheKind.allCases)
    func formatterRejection(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("bad"), .text("good"))
            let manager = ServerAPIManager(transport: mock, formatter: RejectingFormatter(), cache: cache)
            let api = Self.items.cache(.returnCacheElseLoad)
            let rejected = await #expect(throws: ServerAPIError.self) { try await manager.send(api) }
            #expect(rejected?.kind == .business)
            #expect(try await cache.lookup(Self.key(api)) == nil)
            #expect(try await manager.send(api).string == "good")
            #expect(try await manager.send(api).isFromCache)
            #expect(mock.requestCount == 2)
        }
    }

    @Test("a non-2xx response the call accepts is returned but not stored", arguments: CacheKind.allCases)
    func acceptedErrorStatus(kind: CacheKind) async throws {
        try await kind.with { cache async throws in
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("gone", status: 404))
            let manager = ServerAPIManager(transport: mock, cache: cache)
            let api = Self.items.cache(.returnCacheElseLoad).accept(.any)
            #expect(try await manager.send(api).status == 404)
            #expect(try await cache.lookup(Self.key(api)) == nil)
        }
    }

    @Test("a cache that cannot store does not fail a call that succeeded")
    func storeFailureIsIgnored() async throws {
        try await withTemporaryDirectory { root in
            let blocker = root.appendingPathComponent("blocker")
            try Data().write(to: blocker)
            let mock = MockTransport()
            mock.stub(.get, "/items", .text("v1"))
            let manager = ServerAPIManager(
                transport: mock, cache: FileCache(directory: blocker.appendingPathComponent("cache")))
            let api = Self.items.cache(.returnCacheElseLoad)
            #expect(try await manager.send(api).string == "v1")
            #expect(try await manager.send(api).string == "v1")
            #expect(mock.requestCount == 2)
        }
    }
}

/// A formatter that calls the body "bad" a business failure.
struct RejectingFormatter: ResponseFormatting {
    func format(_ response: TransportResponse, for api: ServerAPI) throws -> ServerValue {
        if response.data == Data("bad".utf8) { throw ServerAPIError.business(code: "1", message: "rejected") }
        return try PlainFormatter().format(response, for: api)
    }

    func decode<T: Decodable>(_ type: T.Type, from response: TransportResponse, for api: ServerAPI) throws -> T {
        try PlainFormatter().decode(type, from: response, for: api)
    }
}
