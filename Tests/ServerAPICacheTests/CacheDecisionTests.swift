import Foundation
import ServerAPITesting
import Testing

@testable import ServerAPIKit

/// The cache's decision on plain values and a `TestClock`: no transport, no cache store, no manager.
@Suite struct CacheDecisionTests {
    let clock = TestClock()

    static let url = URL(string: "https://api.test/items")!

    /// A request for `url`.
    static func request(
        _ method: HTTPMethod = .get, _ headers: HTTPHeaders = [:], url: URL = url
    ) throws -> TransportRequest {
        try ServerAPI(url: url, method: method).headers(headers).transportRequest()
    }

    /// A response from the server, received now.
    static func response(_ status: Int = 200, _ headers: HTTPHeaders = [:], body: String = "") -> TransportResponse {
        TransportResponse(status: status, headers: headers, body: .data(Data(body.utf8)), url: url)
    }

    /// A 200 stored at the clock's date, fresh for `lifetime` seconds (`nil` for ever).
    func stored(_ headers: HTTPHeaders = [:], lifetime: TimeInterval? = 60, body: String = "stored") -> CacheEntry {
        CacheEntry(
            status: 200, headers: headers, body: Data(body.utf8), url: Self.url, storedAt: clock.date,
            expiresAt: lifetime.map { clock.date.addingTimeInterval($0) })
    }

    /// The decision before the network, for a call whose stored response is `entry`.
    func before(
        _ decision: CacheDecision, _ entry: CacheEntry?, _ request: TransportRequest
    ) -> CacheDecision.Before {
        decision.before(request, .found(CacheDecision.Stored(fitting: entry, latest: entry)), at: clock.date)
    }

    @Test("a fresh stored response answers, with its age; no request is sent")
    func freshAnswers() throws {
        let entry = stored(["Cache-Control": "max-age=60"])
        clock.advance(by: .seconds(10))
        let answer = try #require(before(CacheDecision(mode: .returnCacheElseLoad), entry, Self.request()).answer)
        #expect(answer == CacheDecision.Answer(entry: entry))
        let (response, source) = answer.response(at: clock.date)
        #expect(response.status == 200)
        #expect(response.headers["Age"] == "10")
        #expect(response.data == Data("stored".utf8))
        #expect(response.metrics.transport == "cache")
        #expect(source == .cache(storedAt: entry.storedAt, age: .seconds(10)))
    }

    @Test("a stale response with validators is fetched conditionally: If-None-Match and If-Modified-Since")
    func staleRevalidates() throws {
        let modified = HTTPDate.format(clock.date.addingTimeInterval(-3600))
        let entry = stored(["ETag": "\"v1\"", "Last-Modified": modified, "Cache-Control": "max-age=60"])
        clock.advance(by: .seconds(61))
        let fetch = try #require(before(CacheDecision(mode: .returnCacheElseLoad), entry, Self.request()).fetch)
        let conditional = try #require(fetch.conditional)
        #expect(conditional.entry == entry)
        #expect(conditional.request.headers["If-None-Match"] == "\"v1\"")
        #expect(conditional.request.headers["If-Modified-Since"] == modified)
        #expect(conditional.request.url == Self.url)
        // Stale without `must-revalidate`: it stands in when the server cannot be reached (RFC 9111 §4.2.4).
        #expect(fetch.fallback == entry)
        // The call's own validators are sent as they are; no validators, nothing to revalidate; HTTP off, none sent.
        let own = try Self.request(.get, ["If-None-Match": "\"mine\""])
        #expect(before(CacheDecision(mode: .returnCacheElseLoad), entry, own).fetch?.conditional == nil)
        #expect(
            try before(CacheDecision(mode: .returnCacheElseLoad), stored(lifetime: 0), Self.request()).fetch?
                .conditional == nil)
        let off = CacheDecision(mode: .returnCacheElseLoad, honorsHTTP: false)
        #expect(try #require(before(off, entry, Self.request()).fetch).conditional == nil)
    }

    @Test("a call no variant fits offers the URL's latest entity tag, never one varying on Authorization")
    func offersLatest() throws {
        let latest = stored(["ETag": "\"en\"", "Vary": "Accept-Language"])
        let lookup = CacheDecision.Lookup.found(CacheDecision.Stored(fitting: nil, latest: latest))
        let decision = CacheDecision(mode: .returnCacheElseLoad)
        let fetch = try #require(decision.before(try Self.request(), lookup, at: clock.date).fetch)
        #expect(fetch.conditional?.request.headers["If-None-Match"] == "\"en\"")
        #expect(fetch.fallback == nil)
        var personal = latest
        personal.variant = CacheVariant(names: ["authorization"], request: ["Authorization": "Bearer a"])
        let other = CacheDecision.Lookup.found(CacheDecision.Stored(fitting: nil, latest: personal))
        #expect(try #require(decision.before(try Self.request(), other, at: clock.date).fetch).conditional == nil)
    }

    @Test("stale within stale-while-revalidate answers and revalidates in the background; past it, it fetches")
    func staleWhileRevalidate() throws {
        let entry = stored(["Cache-Control": "max-age=1, stale-while-revalidate=4"], lifetime: 1)
        let decision = CacheDecision(mode: .returnCacheElseLoad)
        clock.advance(by: .seconds(3))
        let answer = try #require(before(decision, entry, Self.request()).answer)
        #expect(answer.revalidatesInBackground)
        #expect(answer.entry == entry)
        // A request for part of it is not answered stale.
        #expect(before(decision, entry, try Self.request(.get, ["Range": "bytes=0-1"])).fetch != nil)
        clock.advance(by: .seconds(3))
        #expect(try before(decision, entry, Self.request()).fetch != nil)
    }

    @Test("no-cache is never answered without the server; must-revalidate never stale, in any mode")
    func noCacheAndMustRevalidate() throws {
        let noCache = stored(["Cache-Control": "no-cache", "ETag": "\"a\""])
        clock.advance(by: .seconds(1))
        let fetch = try #require(before(CacheDecision(mode: .returnCacheElseLoad), noCache, Self.request()).fetch)
        #expect(fetch.conditional?.request.headers["If-None-Match"] == "\"a\"")
        #expect(fetch.fallback == nil)
        #expect(try before(CacheDecision(mode: .cacheOnly), noCache, Self.request()).miss == .mustRevalidate)
        #expect(try before(CacheDecision(mode: .loadElseReturnCache), noCache, Self.request()).fetch?.fallback == nil)

        let mustRevalidate = stored(["Cache-Control": "max-age=10, must-revalidate"], lifetime: 10)
        #expect(try before(CacheDecision(mode: .cacheOnly), mustRevalidate, Self.request()).answer != nil)
        clock.advance(by: .seconds(20))
        let maxStale = try Self.request(.get, ["Cache-Control": "max-stale"])
        #expect(before(CacheDecision(mode: .returnCacheElseLoad), mustRevalidate, maxStale).fetch?.fallback == nil)
        #expect(try before(CacheDecision(mode: .cacheOnly), mustRevalidate, Self.request()).miss == .mustRevalidate)
        #expect(
            try before(CacheDecision(mode: .loadElseReturnCache), mustRevalidate, Self.request()).fetch?.fallback == nil
        )
    }

    @Test("cacheOnly: a stale response answers unless forbidden; each miss says why")
    func cacheOnlyMisses() throws {
        let decision = CacheDecision(mode: .cacheOnly)
        let get = try Self.request()
        #expect(decision.before(get, .noCache, at: clock.date).miss == .noCache)
        #expect(decision.before(get, .noCache, at: clock.date).miss?.description == "no cache is configured")
        let post = try Self.request(.post)
        #expect(decision.before(post, .notCacheable, at: clock.date).miss == .notCacheable(.post))
        #expect(
            CacheDecision.Miss.notCacheable(.post).description == "POST responses are not cacheable for this call")
        #expect(decision.before(get, .found(CacheDecision.Stored()), at: clock.date).miss == .noEntry)
        let entry = stored(lifetime: 10)
        clock.advance(by: .seconds(1000))
        #expect(before(decision, entry, get).answer == CacheDecision.Answer(entry: entry))
        // A range the stored whole cannot answer is the server's, which a cache-only call cannot ask.
        #expect(before(decision, entry, try Self.request(.get, ["Range": "bytes=100-"])).miss == .noEntry)
    }

    @Test("only-if-cached: answered from storage or a miss, never the network; ignored with HTTP off")
    func onlyIfCached() throws {
        let request = try Self.request(.get, ["Cache-Control": "only-if-cached"])
        let decision = CacheDecision(mode: .returnCacheElseLoad)
        let entry = stored(lifetime: 10)
        #expect(before(decision, entry, request).answer == CacheDecision.Answer(entry: entry))
        #expect(before(decision, nil, request).miss == .noEntry)
        clock.advance(by: .seconds(11))
        #expect(before(decision, entry, request).miss == .mustRevalidate)
        #expect(before(CacheDecision(mode: .returnCacheElseLoad, honorsHTTP: false), entry, request).fetch != nil)
    }

    @Test("a stored whole answers a Range as a 206 of that part, and the call's own validators as a 304")
    func rangeAndNotModified() throws {
        let entry = stored(["ETag": "\"v1\"", "Content-Length": "10"], body: "0123456789")
        let decision = CacheDecision(mode: .returnCacheElseLoad)
        let ranged = try #require(before(decision, entry, try Self.request(.get, ["Range": "bytes=2-4"])).answer)
        #expect(ranged.range == 2..<5)
        let part = ranged.response(at: clock.date).response
        #expect(part.status == 206)
        #expect(part.headers["Content-Range"] == "bytes 2-4/10")
        #expect(part.headers["Content-Length"] == "3")
        #expect(part.data == Data("234".utf8))
        // If-Range is the server's: the call fetches, without the stored response.
        let ifRange = try Self.request(.get, ["Range": "bytes=2-4", "If-Range": "\"v1\""])
        let fetch = try #require(before(decision, entry, ifRange).fetch)
        #expect(fetch.conditional == nil && fetch.fallback == nil)

        let matching = try #require(before(decision, entry, try Self.request(.get, ["If-None-Match": "\"v1\""])).answer)
        #expect(matching.notModified)
        let notModified = matching.response(at: clock.date).response
        #expect(notModified.status == 304)
        #expect(notModified.data == Data())
        #expect(notModified.headers["Content-Length"] == nil)
        #expect(notModified.headers["ETag"] == "\"v1\"")
    }

    @Test("a 304 is merged once: the stored body with the 304's fields, served and stored alike")
    func notModifiedMerge() throws {
        let entry = stored(
            ["ETag": "\"v1\"", "Cache-Control": "max-age=60", "X-Version": "1", "Content-Length": "6"], lifetime: 60)
        clock.advance(by: .seconds(100))
        let decision = CacheDecision(mode: .returnCacheElseLoad)
        let conditional = try #require(before(decision, entry, Self.request()).fetch?.conditional)
        let key = CacheKey(request: try Self.request())
        let notModified = Self.response(
            304,
            [
                "ETag": "\"v1\"", "Cache-Control": "max-age=120", "X-Version": "2", "Content-Length": "0",
                "Connection": "close",
            ])
        let after = decision.after(
            notModified, to: conditional.request, key: key, accepted: true, conditional: conditional,
            requestTime: clock.date, responseTime: clock.date)
        #expect(after.response.status == 200)
        #expect(after.response.data == Data("stored".utf8))
        #expect(after.response.headers.values(for: "X-Version") == ["2"])
        #expect(after.response.headers.values(for: "Cache-Control") == ["max-age=120"])
        #expect(after.response.headers.values(for: "Content-Length") == ["6"])
        #expect(after.response.headers["Connection"] == nil)
        #expect(after.source == .cache(storedAt: clock.date, age: .zero))
        #expect(after.changes.isEmpty)
        guard case .store(let renewed, let storedKey) = after.change else {
            Issue.record("the revalidated response is not stored: \(String(describing: after.change))")
            return
        }
        #expect(storedKey == key)
        #expect(renewed.headers == after.response.headers)
        #expect(renewed.body == entry.body)
        #expect(renewed.storedAt == clock.date)
        #expect(renewed.expiresAt == clock.date.addingTimeInterval(120))

        let noStore = Self.response(304, ["Cache-Control": "no-store"])
        let removed = decision.after(
            noStore, to: conditional.request, key: key, accepted: true, conditional: conditional,
            requestTime: clock.date, responseTime: clock.date)
        #expect(removed.change == .remove(key))
        #expect(removed.response.data == Data("stored".utf8))
    }

    @Test("an unsafe method's success invalidates its URL and the same-origin Location and Content-Location")
    func unsafeInvalidation() throws {
        let post = try Self.request(.post)
        let created = Self.response(
            201, ["Location": "/items/7", "Content-Location": "https://other.test/items/7"])
        let item = URL(string: "https://api.test/items/7")!
        var expected: [CacheDecision.Change] = []
        for url in [Self.url, item] {
            for method in [HTTPMethod.get, .head, .post] {
                expected.append(.remove(CacheKey(request: try Self.request(method, url: url))))
            }
        }
        #expect(CacheDecision.invalidations(after: created, to: post) == expected)
        // An error, or a safe method, invalidates nothing.
        #expect(CacheDecision.invalidations(after: Self.response(404), to: post).isEmpty)
        #expect(CacheDecision.invalidations(after: created, to: try Self.request(.get)).isEmpty)
        // A refused redirect invalidates too, whatever the call's mode; the after-decision starts with it.
        let redirect = Self.response(303, ["Location": "/items/7"])
        let refused = CacheDecision(mode: .never).after(
            redirect, to: post, key: nil, accepted: false, conditional: nil, requestTime: clock.date,
            responseTime: clock.date)
        #expect(refused.changes == expected)
        #expect(refused.change == nil)
    }

    @Test("a POST whose success names its own URL as Content-Location is stored as the URL's GET")
    func postStoredAsGet() throws {
        let post = try Self.request(.post)
        let response = Self.response(
            200, ["Content-Location": Self.url.absoluteString, "Cache-Control": "max-age=60"], body: "made")
        let after = CacheDecision(mode: .returnCacheElseLoad, cacheableMethod: false).after(
            response, to: post, key: nil, accepted: true, conditional: nil, requestTime: clock.date,
            responseTime: clock.date)
        #expect(after.changes.count == 4)
        guard case .store(let entry, let key) = after.changes.last else {
            Issue.record("not stored as GET: \(after.changes)")
            return
        }
        #expect(key == CacheKey(request: try Self.request(.get)))
        #expect(entry.body == Data("made".utf8))
        #expect(entry.expiresAt == clock.date.addingTimeInterval(60))
        // The POST itself is not cacheable here.
        #expect(after.change == nil)
    }

    @Test("a HEAD's 200 updates the stored GET it describes, and makes stale one it does not")
    func headUpdatesGet() throws {
        let get = stored(
            ["ETag": "\"v1\"", "Cache-Control": "max-age=10", "X-Kept": "yes"], lifetime: 10, body: "body")
        let head = try Self.request(.head)
        let headKey = CacheKey(request: head)
        let decision = CacheDecision(mode: .returnCacheElseLoad)
        let response = Self.response(200, ["ETag": "\"v1\"", "Cache-Control": "max-age=90", "Content-Length": "4"])
        let lookup = try #require(decision.storedGET(describedBy: response, to: head, key: headKey, accepted: true))
        #expect(lookup.key == CacheKey(request: try Self.request(.get)))
        #expect(decision.storedGET(describedBy: Self.response(410), to: head, key: headKey, accepted: true) == nil)
        clock.advance(by: .seconds(5))
        let after = decision.after(
            response, to: head, key: headKey, accepted: true, conditional: nil, storedGET: get,
            requestTime: clock.date, responseTime: clock.date)
        guard case .store(let updated, let getKey) = after.changes.first else {
            Issue.record("the stored GET is not updated: \(after.changes)")
            return
        }
        #expect(getKey == lookup.key)
        #expect(updated.expiresAt == clock.date.addingTimeInterval(90))
        #expect(updated.body == Data("body".utf8))
        // The HEAD's caller gets the stored fields it did not carry.
        #expect(after.response.headers["X-Kept"] == "yes")
        #expect(after.source == .network)

        let other = Self.response(200, ["ETag": "\"v2\""])
        let stale = decision.after(
            other, to: head, key: headKey, accepted: true, conditional: nil, storedGET: get,
            requestTime: clock.date, responseTime: clock.date)
        guard case .store(let madeStale, _) = stale.changes.first else {
            Issue.record("the stored GET is not made stale: \(stale.changes)")
            return
        }
        #expect(madeStale.expiresAt == get.storedAt)
        #expect(madeStale.headers == get.headers)
        #expect(stale.response.headers["X-Kept"] == nil)
    }

    @Test("a 5xx or no answer is answered from storage within stale-if-error; past it, the failure is the caller's")
    func staleIfError() throws {
        let decision = CacheDecision(mode: .returnCacheElseLoad)
        let entry = stored(["Cache-Control": "max-age=1, stale-if-error=60"], lifetime: 1)
        clock.advance(by: .seconds(30))
        let fetch = try #require(before(decision, entry, Self.request()).fetch)
        #expect(fetch.refusesServerErrors)
        #expect(fetch.answer(after: .httpStatus(503)) == CacheDecision.Answer(entry: entry))
        #expect(fetch.answer(after: ServerAPIError(.timedOut, "timed out")) == CacheDecision.Answer(entry: entry))
        #expect(fetch.answer(after: .httpStatus(404)) == nil)
        #expect(fetch.answer(after: ServerAPIError(.decoding, "bad")) == nil)
        clock.advance(by: .seconds(40))
        let late = try #require(before(decision, entry, Self.request()).fetch)
        #expect(!late.refusesServerErrors)
        #expect(late.answer(after: .httpStatus(503)) == nil)
    }

    @Test("loadElseReturnCache falls back offline to a stale response beyond HTTP's allowance, unless forbidden")
    func offlineFallback() throws {
        let entry = stored(["ETag": "\"a\""], lifetime: 10)
        clock.advance(by: .seconds(3600))
        let noCache = try Self.request(.get, ["Cache-Control": "no-cache"])
        let fetch = try #require(before(CacheDecision(mode: .loadElseReturnCache), entry, noCache).fetch)
        #expect(fetch.fallback == entry)
        #expect(fetch.conditional?.entry == entry)
        #expect(fetch.answer(after: ServerAPIError(.cannotConnect, "refused")) == CacheDecision.Answer(entry: entry))
        // The request's no-cache keeps HTTP's own stand-in out.
        #expect(before(CacheDecision(mode: .returnCacheElseLoad), entry, noCache).fetch?.fallback == nil)
        #expect(CacheDecision(mode: .loadElseReturnCache).firstResult(entry, request: noCache, at: clock.date) != nil)
        let forbidden = stored(["Cache-Control": "max-age=1, must-revalidate"], lifetime: 1)
        clock.advance(by: .seconds(2))
        #expect(try before(CacheDecision(mode: .loadElseReturnCache), forbidden, Self.request()).fetch?.fallback == nil)
        #expect(
            CacheDecision(mode: .returnCacheThenLoad).firstResult(forbidden, request: noCache, at: clock.date) == nil)
    }

    @Test("maxStaleAge: an entry stale for longer has outlived its keeping")
    func maxStaleAge() {
        let decision = CacheDecision(mode: .returnCacheElseLoad, maxStaleAge: .seconds(60))
        let entry = stored(lifetime: 10)
        clock.advance(by: .seconds(69))
        #expect(!decision.outlived(entry, at: clock.date))
        clock.advance(by: .seconds(1))
        #expect(decision.outlived(entry, at: clock.date))
        #expect(!CacheDecision(mode: .returnCacheElseLoad).outlived(entry, at: clock.date))
        #expect(!decision.outlived(stored(lifetime: nil), at: clock.date.addingTimeInterval(1e9)))
    }

    @Test("the call's TTL replaces the headers' lifetime, never no-cache; without one, the headers' or the default")
    func perCallTTL() throws {
        let request = try Self.request()
        let key = CacheKey(request: request)
        func expiry(_ decision: CacheDecision, _ headers: HTTPHeaders) -> Date? {
            let after = decision.after(
                Self.response(200, headers, body: "x"), to: request, key: key, accepted: true, conditional: nil,
                requestTime: clock.date, responseTime: clock.date)
            guard case .store(let entry, key) = after.change else { return nil }
            return entry.expiresAt
        }
        let now = clock.date
        let ttl = CacheDecision(mode: .returnCacheElseLoad, ttl: .seconds(30))
        #expect(expiry(ttl, ["Cache-Control": "max-age=600"]) == now.addingTimeInterval(30))
        #expect(expiry(ttl, ["Cache-Control": "max-age=600, no-cache"]) == now)
        let plain = CacheDecision(mode: .returnCacheElseLoad, defaultTTL: .seconds(5))
        #expect(expiry(plain, ["Cache-Control": "max-age=600"]) == now.addingTimeInterval(600))
        #expect(expiry(plain, [:]) == now.addingTimeInterval(5))
        let off = CacheDecision(mode: .returnCacheElseLoad, honorsHTTP: false, defaultTTL: .seconds(5))
        #expect(expiry(off, ["Cache-Control": "max-age=600"]) == now.addingTimeInterval(5))
        // Never stored: no-store, a mode that does not write, a partial response.
        #expect(expiry(ttl, ["Cache-Control": "no-store"]) == nil)
        #expect(expiry(CacheDecision(mode: .cacheOnly), [:]) == nil)
        #expect(expiry(CacheDecision(mode: .storeOnly), [:]) == now.addingTimeInterval(300))
        // Stored with the TTL, the response answers for 30 s.
        let entry = stored(["Cache-Control": "max-age=600"], lifetime: 30)
        clock.advance(by: .seconds(29))
        #expect(before(ttl, entry, request).answer != nil)
        clock.advance(by: .seconds(1))
        #expect(before(ttl, entry, request).fetch != nil)
    }

    @Test("a stored response's variant: its Vary, the call's varying fields, Authorization for user-info")
    func variant() throws {
        let request = try Self.request(.get, ["Accept-Language": "de", "X-Tenant": "7"])
        let decision = CacheDecision(
            mode: .returnCacheElseLoad, defaultHeaders: ["X-Client": "app"], varying: ["X-Tenant"],
            carriesUserInfo: true)
        let after = decision.after(
            Self.response(200, ["Vary": "Accept-Language, X-Client"]), to: request, key: CacheKey(request: request),
            accepted: true, conditional: nil, requestTime: clock.date, responseTime: clock.date)
        guard case .store(let entry, _) = after.change else {
            Issue.record("not stored")
            return
        }
        #expect(
            entry.variant.fields == [
                .init(name: "accept-language", value: "de"), .init(name: "authorization", value: nil),
                .init(name: "x-client", value: "app"), .init(name: "x-tenant", value: "7"),
            ])
    }

    @Test("how a stored response may answer: freshness, request directives, no-cache, must-revalidate, windows")
    func standing() throws {
        /// How a response stored `age` seconds ago, fresh for `lifetime`, stands toward a request: answered fresh,
        /// answered while revalidating, standing in on an error, serving offline.
        func use(
            _ headers: HTTPHeaders, lifetime: TimeInterval, age: TimeInterval, request: HTTPHeaders = [:]
        ) throws -> (fresh: Bool, whileRevalidating: Bool, onError: Bool, offline: Bool) {
            let clock = TestClock()
            let entry = CacheEntry(
                status: 200, headers: headers, body: Data(), url: Self.url, storedAt: clock.date,
                expiresAt: clock.date.addingTimeInterval(lifetime))
            clock.advance(by: .seconds(age))
            let request = try Self.request(.get, request)
            let lookup = CacheDecision.Lookup.found(CacheDecision.Stored(fitting: entry, latest: entry))
            func decide(_ mode: CacheMode) -> CacheDecision.Before {
                CacheDecision(mode: mode).before(request, lookup, at: clock.date)
            }
            let answer = decide(.returnCacheElseLoad).answer
            // `returnCacheThenLoad`'s own call and `loadElseReturnCache` always fetch: what stands in is theirs.
            return (
                answer.map { !$0.revalidatesInBackground } ?? false, answer?.revalidatesInBackground ?? false,
                decide(.returnCacheThenLoad).fetch?.fallback != nil, decide(.loadElseReturnCache).fetch?.fallback != nil
            )
        }
        #expect(try use([:], lifetime: 10, age: 5).fresh)
        #expect(try !use([:], lifetime: 10, age: 10).fresh)
        #expect(try !use(["Cache-Control": "no-cache"], lifetime: 10, age: 0).fresh)
        #expect(try !use([:], lifetime: 10, age: 5, request: ["Cache-Control": "no-cache"]).fresh)
        // Pragma is deprecated (RFC 9111 §5.4): a call says `Cache-Control: no-cache`.
        #expect(try use([:], lifetime: 10, age: 5, request: ["Pragma": "no-cache"]).fresh)
        #expect(try !use([:], lifetime: 10, age: 5, request: ["Cache-Control": "no-store"]).fresh)
        #expect(try !use([:], lifetime: 10, age: 5, request: ["Cache-Control": "max-age=0"]).fresh)
        #expect(
            try use(["Cache-Control": "immutable"], lifetime: 10, age: 5, request: ["Cache-Control": "max-age=0"])
                .fresh)
        #expect(
            try use([:], lifetime: 10, age: 5, request: ["Pragma": "no-cache", "Cache-Control": "max-age=60"]).fresh)
        #expect(try !use([:], lifetime: 100, age: 50, request: ["Cache-Control": "max-age=10"]).fresh)
        #expect(try !use([:], lifetime: 100, age: 50, request: ["Cache-Control": "min-fresh=60"]).fresh)
        #expect(try use([:], lifetime: 10, age: 15, request: ["Cache-Control": "max-stale=10"]).fresh)
        #expect(try !use([:], lifetime: 10, age: 25, request: ["Cache-Control": "max-stale=10"]).fresh)
        #expect(
            try !use(
                ["Cache-Control": "must-revalidate"], lifetime: 10, age: 15, request: ["Cache-Control": "max-stale"]
            )
            .fresh)
        let swr = ["Cache-Control": "max-age=1, stale-while-revalidate=4"] as HTTPHeaders
        #expect(try use(swr, lifetime: 1, age: 3).whileRevalidating)
        #expect(try !use(swr, lifetime: 1, age: 6).whileRevalidating)
        let sie = ["Cache-Control": "max-age=1, stale-if-error=4"] as HTTPHeaders
        #expect(try use(sie, lifetime: 1, age: 3).onError)
        #expect(try !use(sie, lifetime: 1, age: 6).onError)
        // Without stale-if-error, cut off from the server (RFC 9111 §4.2.4, §4.3.3): stale unless forbidden by the
        // response or the request, and within the request's max-stale.
        #expect(try use([:], lifetime: 1, age: 100).onError)
        #expect(try !use(["Cache-Control": "must-revalidate"], lifetime: 1, age: 100).onError)
        #expect(try !use(["Cache-Control": "no-cache"], lifetime: 10, age: 1).onError)
        #expect(try !use([:], lifetime: 1, age: 100, request: ["Cache-Control": "no-cache"]).onError)
        #expect(try !use([:], lifetime: 1, age: 100, request: ["Cache-Control": "no-store"]).onError)
        #expect(try use([:], lifetime: 1, age: 5, request: ["Cache-Control": "max-stale=10"]).onError)
        #expect(try !use([:], lifetime: 1, age: 20, request: ["Cache-Control": "max-stale=10"]).onError)
        #expect(try use([:], lifetime: 1, age: 100).offline)
        #expect(try !use(["Cache-Control": "must-revalidate"], lifetime: 1, age: 100).offline)
        #expect(try use(["Cache-Control": "must-revalidate"], lifetime: 10, age: 1).offline)
        #expect(try !use(["Cache-Control": "no-cache"], lifetime: 10, age: 1).offline)
    }
}

extension CacheDecision.Before {
    var answer: CacheDecision.Answer? { if case .answer(let answer) = self { answer } else { nil } }
    var fetch: CacheDecision.Fetch? { if case .fetch(let fetch) = self { fetch } else { nil } }
    var miss: CacheDecision.Miss? { if case .miss(let miss) = self { miss } else { nil } }
}
