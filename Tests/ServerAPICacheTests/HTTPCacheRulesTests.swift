import Foundation
import Testing

@testable import ServerAPIKit

/// The pure rules of HTTP caching (RFC 9111), without a cache, a manager or I/O.
@Suite struct HTTPCacheRulesTests {
    static let received = Date(timeIntervalSince1970: 1_800_000_000)

    static func date(_ offset: TimeInterval) -> String { HTTPDate.format(received.addingTimeInterval(offset)) }

    @Test("Cache-Control: case-insensitive names, quoted arguments, the first of duplicates, invalid is stale")
    func cacheControlParsing() {
        let control = CacheControl(["Cache-Control": "Public, MAX-AGE=\"120\", No-Cache", "cache-control": "nO-StOrE"])
        #expect(control.noStore && control.noCache && control.isPublic && control.maxAge == 120)
        #expect(CacheControl(["Cache-Control": "max-age=60, max-age=0"]).maxAge == 60)
        #expect(CacheControl(["Cache-Control": "max-age=003600"]).maxAge == 3600)
        #expect(CacheControl(["Cache-Control": "max-age=-1"]).maxAge == 0)
        #expect(CacheControl(["Cache-Control": "max-age='3600'"]).maxAge == 0)
        #expect(CacheControl(["Cache-Control": "max-age=1.5"]).maxAge == 0)
        #expect(CacheControl(["Cache-Control": "max-age=99999999999999999999"]).maxAge == 2_147_483_648)
        // A comma inside a quoted string does not end the directive: the max-age inside it is not one.
        let quoted = CacheControl(["Cache-Control": "extension=\"max-age=3600, a\", max-age=1"])
        #expect(quoted.maxAge == 1)
        #expect(CacheControl(["Cache-Control": "foo=\"max-age=3600\""]).maxAge == nil)
        let fields = CacheControl(["Cache-Control": "no-cache=\"Set-Cookie, X-A\""])
        #expect(!fields.noCache && fields.noCacheFields == ["set-cookie", "x-a"])
        // A plain no-cache anywhere makes the whole response need revalidation; in a request it is always plain.
        let both = CacheControl(["Cache-Control": "no-cache=\"a\", max-age=60, no-cache"])
        #expect(both.noCache && both.noCacheFields == ["a"])
        #expect(CacheControl(["Cache-Control": "no-cache=\"a\""], isRequest: true).noCache)
        // In a request, an invalid max-age is ignored rather than meaning "stale".
        #expect(CacheControl(["Cache-Control": "max-age=soon"], isRequest: true).maxAge == nil)
        let request = CacheControl(["Cache-Control": "max-stale, min-fresh=5, only-if-cached"], isRequest: true)
        #expect(request.maxStale == Int.max && request.minFresh == 5 && request.onlyIfCached)
        #expect(CacheControl(["Cache-Control": "max-stale=10"], isRequest: true).maxStale == 10)
        // No whitespace around '=': such a directive is not the one it names.
        #expect(CacheControl(["Cache-Control": "max-age =3600"]).maxAge == nil)
        #expect(CacheControl(["Cache-Control": "max-age= 3600"]).maxAge == nil)
    }

    @Test("the caller's own preconditions: If-None-Match first (weak comparison, *), else If-Modified-Since")
    func callerPreconditions() {
        let stored: HTTPHeaders = ["ETag": "W/\"abc\"", "Last-Modified": Self.date(-100), "Date": Self.date(0)]
        #expect(HTTPCacheRules.notModified(request: ["If-None-Match": "\"x\", \"abc\""], stored: stored) == true)
        #expect(HTTPCacheRules.notModified(request: ["If-None-Match": "*"], stored: stored) == true)
        #expect(HTTPCacheRules.notModified(request: ["If-None-Match": "\"x\""], stored: stored) == false)
        // An unquoted tag, stored or asked for, is the same tag quoted.
        #expect(HTTPCacheRules.notModified(request: ["If-None-Match": "abc"], stored: stored) == true)
        #expect(HTTPCacheRules.notModified(request: ["If-None-Match": "\"abc\""], stored: ["ETag": "abc"]) == true)
        #expect(HTTPCacheRules.notModified(request: ["If-None-Match": "ab"], stored: ["ETag": "abc"]) == false)
        // If-None-Match wins over If-Modified-Since.
        #expect(
            HTTPCacheRules.notModified(
                request: ["If-None-Match": "\"x\"", "If-Modified-Since": Self.date(0)], stored: stored) == false)
        #expect(HTTPCacheRules.notModified(request: ["If-Modified-Since": Self.date(-50)], stored: stored) == true)
        #expect(HTTPCacheRules.notModified(request: ["If-Modified-Since": Self.date(-200)], stored: stored) == false)
        #expect(HTTPCacheRules.notModified(request: [:], stored: stored) == nil)
    }

    @Test("HTTP-date: the three forms, any case; every other spelling is invalid")
    func httpDates() {
        let expected = Date(timeIntervalSince1970: 2_544_400_878)  // Thu, 18 Aug 2050 02:01:18 GMT
        for valid in [
            "Thu, 18 Aug 2050 02:01:18 GMT", "THU, 18 AUG 2050 02:01:18 gmt", "Thursday, 18-Aug-50 02:01:18 GMT",
            "Thu Aug 18 02:01:18 2050",
        ] {
            #expect(HTTPDate.parse(valid, now: Self.received) == expected, "\(valid)")
        }
        #expect(HTTPDate.parse("Thu Aug  8 02:01:18 2050") == expected.addingTimeInterval(-10 * 86_400))
        for invalid in [
            "0", "Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 2050 02:01:18 AEST", "Thu, 18 Aug 50 02:01:18 GMT",
            "Thu 18 Aug 2050 02:01:18 GMT", "Thu, 18  Aug  2050 02:01:18 GMT", "Thu, 18-Aug-2050 02:01:18 GMT",
            "Thu, 18 Aug 2050 02.01.18 GMT", "Thu, 18 Aug 2050 2:01:18 GMT", "",
        ] {
            #expect(HTTPDate.parse(invalid, now: Self.received) == nil, "\(invalid)")
        }
        #expect(HTTPDate.parse(HTTPDate.format(Self.received)) == Self.received)
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test("freshness lifetime: max-age, else Expires minus Date, else a tenth since Last-Modified")
    func freshnessLifetime() {
        func lifetime(_ headers: HTTPHeaders, status: Int = 200) -> TimeInterval? {
            HTTPCacheRules.freshnessLifetime(
                status: status, control: CacheControl(headers), headers: headers, responseTime: Self.received)
        }
        #expect(lifetime(["Cache-Control": "max-age=0", "Expires": Self.date(3600)]) == 0)
        #expect(lifetime(["Cache-Control": "max-age=60", "Expires": Self.date(-3600)]) == 60)
        #expect(lifetime(["Date": Self.date(0), "Expires": Self.date(300)]) == 300)
        #expect(lifetime(["Date": Self.date(0), "Expires": Self.date(-300)]) == 0)
        #expect(lifetime(["Date": Self.date(0), "Expires": "0"]) == 0)
        #expect(lifetime(["Date": Self.date(0), "Expires": Self.date(300), "expires": Self.date(301)]) == 0)
        #expect(lifetime(["Date": Self.date(0), "Last-Modified": Self.date(-10_000)]) == 1_000)
        // Heuristics only for the statuses that allow them, or with `public`.
        #expect(lifetime(["Date": Self.date(0), "Last-Modified": Self.date(-10_000)], status: 201) == nil)
        #expect(
            lifetime(
                ["Date": Self.date(0), "Last-Modified": Self.date(-10_000), "Cache-Control": "public"], status: 599)
                == 1_000)
        #expect(lifetime([:]) == nil)
    }

    @Test("age: the first Age value when it is a non-negative integer, corrected by Date and the exchange's time")
    func age() {
        #expect(HTTPCacheRules.ageValue(["Age": "abc"]) == 0)
        #expect(HTTPCacheRules.ageValue(["Age": "-7200"]) == 0)
        #expect(HTTPCacheRules.ageValue(["Age": "7200.0"]) == 0)
        #expect(HTTPCacheRules.ageValue(["Age": "7200, 0"]) == 7200)
        #expect(HTTPCacheRules.ageValue(["Age": "0, 7200"]) == 0)
        #expect(
            HTTPCacheRules.ageValue(HTTPHeaders([.init(name: "Age", value: "7200"), .init(name: "Age", value: "0")]))
                == 7200)
        #expect(HTTPCacheRules.ageValue(["Age": "2147483649"]) == 2_147_483_648)
        #expect(HTTPCacheRules.ageValue(["Age": "3600;foo"]) == 3600)
        let sent = Self.received.addingTimeInterval(-2)
        // Date 10 s before it arrived: apparent age 10; Age 5 plus the 2 s exchange: 7; the larger wins.
        #expect(
            HTTPCacheRules.initialAge(
                headers: ["Date": Self.date(-10), "Age": "5"], requestTime: sent,
                responseTime: Self.received) == 10)
        #expect(
            HTTPCacheRules.initialAge(
                headers: ["Date": Self.date(0), "Age": "30"], requestTime: sent,
                responseTime: Self.received) == 32)
    }

    @Test("what may be stored: never partial content, never no-store (but for must-understand), Vary: * never")
    func storable() {
        func mayStore(
            _ status: Int, _ headers: HTTPHeaders = [:], request: HTTPHeaders = [:]
        ) -> Bool {
            HTTPCacheRules.mayStore(
                status: status, response: CacheControl(headers), headers: headers,
                request: CacheControl(request, isRequest: true), requestHeaders: request)
        }
        #expect(mayStore(200))
        #expect(!mayStore(206, ["Cache-Control": "max-age=100"]))
        #expect(!mayStore(200, request: ["Range": "bytes=0-4"]))
        #expect(!mayStore(200, ["Cache-Control": "no-store, max-age=100"]))
        #expect(!mayStore(200, request: ["Cache-Control": "no-store"]))
        #expect(mayStore(200, ["Cache-Control": "must-understand, no-store"]))
        #expect(!mayStore(599, ["Cache-Control": "no-store, must-understand, max-age=100"]))
        #expect(!mayStore(200, ["Vary": "Foo, *"]))
        #expect(!mayStore(500))
        #expect(mayStore(500, ["Cache-Control": "max-age=100"]))
        #expect(!mayStore(404))
        #expect(mayStore(404, ["Last-Modified": Self.date(-100)]))
        #expect(!mayStore(201, ["Last-Modified": Self.date(-100)]))
    }

    @Test("one byte range of a stored whole: first-last, first-, -suffix, clamped; anything else is the server's")
    func byteRanges() {
        #expect(HTTPCacheRules.byteRange("bytes=0-1", length: 10) == 0..<2)
        #expect(HTTPCacheRules.byteRange("bytes=5-", length: 10) == 5..<10)
        #expect(HTTPCacheRules.byteRange("bytes=-3", length: 10) == 7..<10)
        #expect(HTTPCacheRules.byteRange("bytes=-30", length: 10) == 0..<10)
        #expect(HTTPCacheRules.byteRange("bytes=8-20", length: 10) == 8..<10)
        for other in ["bytes=10-", "bytes=3-1", "bytes=0-1, 3-4", "items=0-1", "bytes=-0", "bytes=a-b", "bytes="] {
            #expect(HTTPCacheRules.byteRange(other, length: 10) == nil, "\(other)")
        }
    }

    @Test("hop-by-hop fields and those Connection names are not stored")
    func storedHeaders() {
        let stored = HTTPCacheRules.storedHeaders([
            "Connection": "a, B", "A": "1", "b": "2", "C": "3", "Keep-Alive": "timeout=5", "TE": "trailers",
            "Transfer-Encoding": "chunked", "Upgrade": "h2c", "Proxy-Authenticate": "Basic",
            "Proxy-Connection": "close", "Set-Cookie": "x=1", "Content-Length": "3",
        ])
        #expect(stored.map(\.name).sorted() == ["C", "Content-Length", "Set-Cookie"])
    }

    @Test("the fields a qualified no-cache names are not stored; the rest of the response is")
    func qualifiedNoCacheFields() {
        let stored = HTTPCacheRules.storedHeaders([
            "Cache-Control": "no-cache=\"Set-Cookie, a\", max-age=60", "Set-Cookie": "s=1", "A": "1", "B": "2",
        ])
        #expect(stored.map(\.name).sorted() == ["B", "Cache-Control"])
    }

    @Test("a HEAD describes a stored GET when its ETag, else its Last-Modified, and its Content-Length agree")
    func headDescribes() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(HTTPCacheRules.headDescribes(stored: ["A": "1"], bodyLength: 3, head: ["B": "2"]))
        #expect(HTTPCacheRules.headDescribes(stored: ["ETag": "\"x\""], bodyLength: 3, head: ["ETag": "\"x\""]))
        #expect(!HTTPCacheRules.headDescribes(stored: ["ETag": "\"x\""], bodyLength: 3, head: ["ETag": "\"y\""]))
        #expect(!HTTPCacheRules.headDescribes(stored: ["ETag": "\"x\""], bodyLength: 3, head: [:]))
        #expect(!HTTPCacheRules.headDescribes(stored: [:], bodyLength: 3, head: ["ETag": "\"x\""]))
        #expect(
            HTTPCacheRules.headDescribes(stored: ["Last-Modified": date], bodyLength: 3, head: ["Last-Modified": date]))
        #expect(!HTTPCacheRules.headDescribes(stored: ["Last-Modified": date], bodyLength: 3, head: [:]))
        #expect(HTTPCacheRules.headDescribes(stored: [:], bodyLength: 3, head: ["Content-Length": "3"]))
        #expect(!HTTPCacheRules.headDescribes(stored: [:], bodyLength: 3, head: ["Content-Length": "4"]))
    }

    @Test("a 304 updates the stored fields but the body's framing")
    func merge() {
        let merged = HTTPCacheRules.merge(
            ["Content-Length": "36", "A": "1", "B": "1", "ETag": "\"x\""],
            ["Content-Length": "10", "A": "2", "Connection": "close", "Cache-Control": "max-age=5"])
        #expect(merged["Content-Length"] == "36" && merged["A"] == "2" && merged["B"] == "1")
        #expect(merged["Cache-Control"] == "max-age=5" && merged["Connection"] == nil)
    }

    @Test("unsafe methods invalidate their URL and same-origin Location and Content-Location, on success only")
    func invalidation() throws {
        let url = try #require(URL(string: "https://api.test/items/1"))
        let headers: HTTPHeaders = [
            "Location": "/items/2", "Content-Location": "https://other.test/items/3",
        ]
        let urls = HTTPCacheRules.invalidatedURLs(method: .post, status: 201, url: url, headers: headers)
        #expect(urls.map(\.absoluteString) == ["https://api.test/items/1", "https://api.test/items/2"])
        for method in [HTTPMethod.put, .delete, .patch, HTTPMethod(rawValue: "M-SEARCH")] {
            #expect(HTTPCacheRules.invalidatedURLs(method: method, status: 204, url: url, headers: [:]) == [url])
        }
        #expect(HTTPCacheRules.invalidatedURLs(method: .post, status: 500, url: url, headers: [:]).isEmpty)
        #expect(HTTPCacheRules.invalidatedURLs(method: .get, status: 200, url: url, headers: [:]).isEmpty)
        #expect(HTTPCacheRules.invalidatedURLs(method: .options, status: 200, url: url, headers: [:]).isEmpty)
    }

    @Test("Vary: names lower-cased and sorted, * recognised on any line, values matched or absent in both")
    func vary() {
        #expect(Vary(["Vary": "Foo, bar"]).names == ["bar", "foo"])
        #expect(Vary(HTTPHeaders([.init(name: "Vary", value: ", "), .init(name: "Vary", value: "*")])).isStar)
        #expect(!Vary(["Vary": "Foo"]).isStar)
        let variant = CacheVariant(names: ["foo", "bar"], request: ["Foo": "1"])
        #expect(variant.matches(["foo": "1"]))
        #expect(!variant.matches(["Foo": "2"]))
        #expect(!variant.matches(["Foo": "1", "Bar": "x"]))
        #expect(!variant.matches([:]))
        #expect(CacheVariant(names: ["foo"], request: ["Foo": "1,2"]).matches(["Foo": "1, 2"]))
        #expect(
            CacheVariant(
                names: ["foo"], request: HTTPHeaders([.init(name: "Foo", value: "1"), .init(name: "Foo", value: "2")])
            )
            .matches(["Foo": "1, 2"]))
    }

    @Test("Accept-Language selects a variant by meaning: case, order within a weight, the language weighed highest")
    func acceptLanguageVariants() {
        let stored = CacheVariant(names: ["accept-language"], request: ["Accept-Language": "en, de;q=0.5"])
        #expect(stored.matches(["Accept-Language": "EN, De;q=0.5"]))
        #expect(stored.matches(["Accept-Language": "de;q=0.50, en"]))
        #expect(!stored.matches(["Accept-Language": "de, en;q=0.5"]))
        #expect(!stored.matches(["Accept-Language": "en"]))
        let both = CacheVariant(names: ["accept-language"], request: ["Accept-Language": "en, de"])
        #expect(both.matches(["Accept-Language": "de, en"]))
        // The stored response's Content-Language, when the request weighs it highest.
        #expect(both.matches(["Accept-Language": "fr;q=0.5, de"], stored: ["Content-Language": "de"]))
        #expect(!both.matches(["Accept-Language": "fr, de;q=0.5"], stored: ["Content-Language": "de"]))
        #expect(!both.matches(["Accept-Language": "fr;q=0.5, de"]))
        // Another field is matched as sent.
        let encoding = CacheVariant(names: ["accept-encoding"], request: ["Accept-Encoding": "gzip, br"])
        #expect(!encoding.matches(["Accept-Encoding": "br, gzip"]))
    }
}
