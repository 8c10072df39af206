import Foundation
import ServerAPIKit
import Testing

@Suite("Cookies: Set-Cookie parsing")
struct SetCookieTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let url = URL(string: "https://www.example.com/account/login")!

    static func parse(_ line: String, _ url: URL = url) -> Cookie? { SetCookie.parse(line, from: url, now: now) }

    @Test("name, value and defaults")
    func defaults() throws {
        let cookie = try #require(Self.parse(" sid = abc123 "))
        #expect(cookie.name == "sid")
        #expect(cookie.value == "abc123")
        #expect(cookie.domain == "www.example.com")
        #expect(cookie.hostOnly)
        #expect(cookie.path == "/account")
        #expect(!cookie.secure && !cookie.httpOnly)
        #expect(cookie.expires == nil)
        #expect(cookie.created == Self.now)
    }

    @Test(
        "attributes are case-insensitive",
        arguments: [
            "a=b; SECURE; HTTPONLY; PATH=/x; DOMAIN=Example.COM; SAMESITE=Lax",
            "a=b; secure; httponly; path=/x; domain=.example.com; samesite=lax",
            "a=b;Secure;HttpOnly;Path=/x;Domain=EXAMPLE.com;SameSite=LAX",
        ])
    func caseInsensitive(line: String) throws {
        let cookie = try #require(Self.parse(line))
        #expect(cookie.secure && cookie.httpOnly)
        #expect(cookie.path == "/x")
        #expect(cookie.domain == "example.com")
        #expect(!cookie.hostOnly)
        #expect(cookie.sameSite == .lax)
    }

    @Test(
        "malformed lines are ignored",
        arguments: [
            "", ";", "novalue", "=value", " =value", "; a=b", "a\u{01}=b", "a=b\u{7F}", "a=b\u{0}c", "a=\u{FFFD}",
        ])
    func malformed(line: String) {
        #expect(Self.parse(line) == nil)
    }

    @Test("UTF-8 names and values are kept, and go back as the bytes they came as")
    func utf8() throws {
        let cookie = try #require(Self.parse("春节回=家路·春运; 完全手册"))
        #expect(cookie.name == "春节回")
        #expect(cookie.value == "家路·春运")
        let storage = MemoryCookieStorage(now: { Self.now })
        storage.store(setCookieLines: ["é=\"ü ñ\""], from: Self.url)
        let header = try #require(storage.cookieHeader(for: Self.url))
        #expect(Array(header.utf8) == [0xC3, 0xA9, 0x3D, 0x22, 0xC3, 0xBC, 0x20, 0xC3, 0xB1, 0x22])
    }

    @Test(
        "odd but valid lines never crash",
        arguments: [
            "a=", "a==b", "a=b; Max-Age=", "a=b; Max-Age=abc", "a=b; Max-Age=-", "a=b; Expires=",
            "a=b; Expires=garbage",
            "a=b; Path=", "a=b; Path=relative", "a=b; Domain=", "a=b; ;;; =; x", "a=b; Max-Age=99999999999999999999999",
            "a=b; Expires=Wed, 31 Feb 2024 00:00:00 GMT", "a=b; SameSite=whatever",
        ])
    func odd(line: String) throws {
        let cookie = try #require(Self.parse(line))
        #expect(cookie.name == "a")
        #expect(cookie.path.hasPrefix("/"))
    }

    @Test(
        "Expires date formats",
        arguments: [
            ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
            ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777.0),
            ("Sun Nov  6 08:49:37 1994", 784_111_777.0),
            ("Thu, 01-Jan-2037 00:00:00 GMT", 2_114_380_800.0),
            ("01 Jan 2037 00:00:00", 2_114_380_800.0),
        ])
    func dates(text: String, seconds: Double) {
        #expect(SetCookie.parseDate(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(
        "invalid dates are not dates",
        arguments: [
            "", "garbage", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:00:00 GMT", "06 Nov 1994",
            "Sun, 06 Foo 1994 08:49:37 GMT", "Thu, 31 Feb 2024 00:00:00 GMT",
        ])
    func invalidDates(text: String) {
        #expect(SetCookie.parseDate(text) == nil)
    }

    @Test("Max-Age wins over Expires, in either order")
    func maxAgeWins() throws {
        let first = try #require(Self.parse("a=b; Max-Age=60; Expires=Sun, 06 Nov 1994 08:49:37 GMT"))
        let last = try #require(Self.parse("a=b; Expires=Sun, 06 Nov 1994 08:49:37 GMT; Max-Age=60"))
        #expect(first.expires == Self.now.addingTimeInterval(60))
        #expect(last.expires == Self.now.addingTimeInterval(60))
        let zero = try #require(Self.parse("a=b; Max-Age=0"))
        #expect(zero.isExpired(at: Self.now))
    }

    @Test(
        "Domain must domain-match the host and not be a public suffix",
        arguments: [
            ("a=b; Domain=example.com", true),
            ("a=b; Domain=www.example.com", true),
            ("a=b; Domain=other.com", false),
            ("a=b; Domain=ample.com", false),
            ("a=b; Domain=com", false),
            ("a=b; Domain=.com", false),
            ("a=b; Domain=sub.www.example.com", false),
            // One leading "." is dropped, no more; a trailing "." never domain-matches (RFC 6265 §5.2.3).
            ("a=b; Domain=.example.com", true),
            ("a=b; Domain=..example.com", false),
            ("a=b; Domain=example.com.", false),
            ("a=b; Domain=example.com..", false),
            ("a=b; Domain=.", true),
            ("a=b; Domain=other.com; Domain=example.com", true),
            ("a=b; Domain=example.com; Domain=other.com", false),
        ])
    func domainAttribute(line: String, accepted: Bool) {
        #expect((Self.parse(line) != nil) == accepted)
    }

    @Test("multi-label public suffixes are refused, except as the host itself")
    func publicSuffixes() throws {
        let uk = URL(string: "https://shop.example.co.uk/")!
        #expect(Self.parse("a=b; Domain=co.uk", uk) == nil)
        #expect(try #require(Self.parse("a=b; Domain=example.co.uk", uk)).domain == "example.co.uk")
        let pages = URL(string: "https://me.github.io/")!
        #expect(Self.parse("a=b; Domain=github.io", pages) == nil)
        // A TLD host may set a Domain of itself: it becomes host-only.
        let bare = try #require(Self.parse("a=b; Domain=localhost", URL(string: "http://localhost:8080/")!))
        #expect(bare.hostOnly && bare.domain == "localhost")
    }

    @Test("IP hosts: a Domain other than the address is refused")
    func ipHosts() throws {
        let ip = URL(string: "http://127.0.0.1:8080/")!
        #expect(Self.parse("a=b; Domain=0.0.1", ip) == nil)
        #expect(Self.parse("a=b; Domain=1", ip) == nil)
        #expect(Self.parse("a=b; Domain=example.com", ip) == nil)
        let same = try #require(Self.parse("a=b; Domain=127.0.0.1", ip))
        #expect(same.hostOnly && same.domain == "127.0.0.1")
    }

    @Test("a Secure cookie from http is refused")
    func secureFromHTTP() {
        #expect(Self.parse("a=b; Secure", URL(string: "http://www.example.com/")!) == nil)
        #expect(Self.parse("a=b; Secure") != nil)
    }

    @Test("joined Set-Cookie fields split at cookie boundaries only")
    func split() {
        let joined = "a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Path=/, b=2, c=3; HttpOnly"
        #expect(
            SetCookie.split(joined) == ["a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Path=/", "b=2", "c=3; HttpOnly"])
        #expect(SetCookie.split("a=1") == ["a=1"])
        #expect(SetCookie.split("") == [])
    }
}
