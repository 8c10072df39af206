import Foundation
@_spi(Backend) import ServerAPIKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A time the tests move by hand.
final class ManualDate: Sendable {
    private let current: Locked<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { current = Locked(start) }
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite("Cookies: jar and storages")
struct CookieJarTests {
    static func url(_ string: String) -> URL { URL(string: string)! }

    @Test(
        "matching: domain, host-only, path, secure",
        arguments: [
            ("a=1", "https://example.com/", true),
            ("a=1", "https://www.example.com/", false),
            ("a=1; Domain=example.com", "https://www.example.com/", true),
            ("a=1; Domain=example.com", "https://example.com/", true),
            ("a=1; Domain=example.com", "https://badexample.com/", false),
            ("a=1; Path=/docs", "https://example.com/docs", true),
            ("a=1; Path=/docs", "https://example.com/docs/web", true),
            ("a=1; Path=/docs", "https://example.com/docsx", false),
            ("a=1; Path=/docs", "https://example.com/", false),
            ("a=1; Path=/docs/", "https://example.com/docs/x", true),
            ("a=1; Secure", "https://example.com/", true),
            ("a=1; Secure", "http://example.com/", false),
        ])
    func matching(line: String, target: String, sent: Bool) {
        let storage = MemoryCookieStorage()
        storage.store(setCookieLines: [line], from: Self.url("https://example.com/"))
        #expect((storage.cookieHeader(for: Self.url(target)) != nil) == sent)
    }

    @Test("order: longer paths first, then earlier creation")
    func order() {
        let clock = ManualDate()
        let storage = MemoryCookieStorage(now: { clock.now })
        let origin = Self.url("https://example.com/")
        storage.store(setCookieLines: ["first=1; Path=/"], from: origin)
        clock.advance(1)
        storage.store(setCookieLines: ["deep=2; Path=/a/b"], from: origin)
        clock.advance(1)
        storage.store(setCookieLines: ["second=3; Path=/"], from: origin)
        storage.store(setCookieLines: ["mid=4; Path=/a"], from: origin)
        #expect(storage.cookieHeader(for: Self.url("https://example.com/a/b/c")) == "deep=2; mid=4; first=1; second=3")
    }

    @Test("replacing keeps the creation time; an expired cookie deletes")
    func replaceAndDelete() throws {
        let clock = ManualDate()
        let storage = MemoryCookieStorage(now: { clock.now })
        let origin = Self.url("https://example.com/")
        storage.store(setCookieLines: ["a=1"], from: origin)
        let created = try #require(storage.allCookies.first).created
        clock.advance(10)
        storage.store(setCookieLines: ["a=2"], from: origin)
        #expect(storage.allCookies.map(\.value) == ["2"])
        #expect(storage.allCookies.first?.created == created)
        storage.store(setCookieLines: ["a=gone; Max-Age=0"], from: origin)
        #expect(storage.allCookies.isEmpty)
        storage.store(setCookieLines: ["b=1", "b=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT"], from: origin)
        #expect(storage.allCookies.isEmpty)
    }

    @Test("expiry follows the injected clock")
    func expiry() {
        let clock = ManualDate()
        let storage = MemoryCookieStorage(now: { clock.now })
        let origin = Self.url("https://example.com/")
        storage.store(setCookieLines: ["short=1; Max-Age=60", "session=2"], from: origin)
        #expect(storage.cookieHeader(for: origin) == "short=1; session=2")
        clock.advance(59)
        #expect(storage.cookieHeader(for: origin) == "short=1; session=2")
        clock.advance(1)
        #expect(storage.cookieHeader(for: origin) == "session=2")
        #expect(storage.allCookies.map(\.name) == ["session"])
    }

    @Test("caps evict the oldest, per domain and in all")
    func caps() {
        let clock = ManualDate()
        let storage = MemoryCookieStorage(limits: .init(perDomain: 3, total: 5), now: { clock.now })
        for index in 0..<5 {
            clock.advance(1)
            storage.store(setCookieLines: ["a\(index)=1"], from: Self.url("https://one.test/"))
        }
        #expect(storage.allCookies.map(\.name) == ["a2", "a3", "a4"])
        for index in 0..<3 {
            clock.advance(1)
            storage.store(setCookieLines: ["b\(index)=1"], from: Self.url("https://two.test/"))
        }
        #expect(storage.allCookies.map(\.name) == ["a3", "a4", "b0", "b1", "b2"])
    }

    @Test("the jar's cookies join a request's own Cookie header")
    func requestHook() {
        let storage = MemoryCookieStorage()
        storage.store(setCookieLines: ["jar=1"], from: Self.url("https://example.com/"))
        var request = TransportRequest(url: Self.url("https://example.com/x"), headers: ["Cookie": "own=2"])
        request.attachCookies(storage)
        #expect(request.headers["Cookie"] == "own=2; jar=1")
    }

    @Test("a UTF-8 cookie from the jar leaves the request valid, its bytes as they came")
    func utf8RequestHook() throws {
        let storage = MemoryCookieStorage()
        storage.store(setCookieLines: ["春节回=家路·春运"], from: Self.url("https://example.com/"))
        var request = TransportRequest(url: Self.url("https://example.com/x"))
        request.attachCookies(storage)
        try request.prepare()
        #expect(request.headers["Cookie"].map { Array($0.utf8) } == Array("春节回=家路·春运".utf8))
    }

    @Test("a redirect stores its cookies and sends them on; another site gets neither jar nor caller cookies")
    func redirects() throws {
        let storage = MemoryCookieStorage()
        var request = TransportRequest(url: Self.url("https://example.com/login"), headers: ["Cookie": "own=2"])
        request.attachCookies(storage)
        var machine = ExchangeStateMachine(download: false)
        let head: HTTPHeaders = ["Location": "/home", "Set-Cookie": "sid=abc; Path=/"]
        guard case .dropBody(let next) = machine.headReceived(status: 302, headers: head, request: request) else {
            Issue.record("the redirect is not followed")
            return
        }
        #expect(next.headers["Cookie"] == "own=2; sid=abc")
        guard case .follow(let same) = machine.finished() else {
            Issue.record("the redirect's body ends without the redirect being followed")
            return
        }
        let away: HTTPHeaders = ["Location": "https://other.test/"]
        guard case .dropBody(let other) = machine.headReceived(status: 302, headers: away, request: same) else {
            Issue.record("the second redirect is not followed")
            return
        }
        #expect(other.headers["Cookie"] == nil)
        // The library-asked path (FoundationNetworking) does the same.
        var asked = ExchangeStateMachine(download: false, redirects: .askedByLibrary)
        guard
            case .follow(let hop) = asked.redirectReceived(
                status: 302, location: "/next", request: request, headers: ["Set-Cookie": "x=1"])
        else {
            Issue.record("the redirect the library asks about is not followed")
            return
        }
        #expect(hop.headers["Cookie"] == "own=2; sid=abc; x=1")
    }

    @Test("file storage: round trip, 0600, atomic replace")
    func fileRoundTrip() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jar-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("sessions/host/name.json")
        let origin = Self.url("https://example.com/")
        let first = FileCookieStorage(url: file)
        first.store(setCookieLines: ["a=1; Max-Age=3600; Secure; HttpOnly; SameSite=Strict", "b=2"], from: origin)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)
        #expect(leftovers == ["name.json"])
        let second = FileCookieStorage(url: file)
        // Dates are kept as seconds since 1970: equal to well under a millisecond.
        #expect(second.allCookies.map(\.name) == first.allCookies.map(\.name))
        for (read, written) in zip(second.allCookies, first.allCookies) {
            #expect(abs(read.created.timeIntervalSince(written.created)) < 0.001)
            #expect(read.secure == written.secure && read.httpOnly == written.httpOnly && read.path == written.path)
        }
        #expect(second.allCookies.first?.expires != nil)
        #expect(second.cookieHeader(for: origin) == "a=1; b=2")
        #expect(second.allCookies.first?.sameSite == .strict)
        second.removeAll()
        #expect(FileCookieStorage(url: file).allCookies.isEmpty)
    }

    @Test(
        "file storage: a corrupt file is empty, and replaced",
        arguments: [
            "not json", "{\"format\":\"serverapikit-cookies\",\"version\":1,\"cookies\":[{\"name\":1}]}",
            "{\"cookies\":[]}", "{\"format\":\"serverapikit-cookies\",\"version\":1,\"cookies\":[",
        ])
    func corrupt(contents: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jar-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("jar.json")
        try Data(contents.utf8).write(to: file)
        let storage = FileCookieStorage(url: file)
        #expect(storage.allCookies.isEmpty)
        let rewritten = try String(contentsOf: file, encoding: .utf8)
        #expect(rewritten != contents)
        #expect(rewritten.contains("serverapikit-cookies"))
        storage.store(setCookieLines: ["a=1"], from: Self.url("http://example.com/"))
        #expect(FileCookieStorage(url: file).allCookies.map(\.name) == ["a"])
    }

    @Test("file storage: UTF-8 values round-trip; a cookie no response could set is dropped on load")
    func fileChecksCookies() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jar-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("jar.json")
        let origin = Self.url("http://example.com/")
        FileCookieStorage(url: file).store(setCookieLines: ["名=春节 回家"], from: origin)
        #expect(FileCookieStorage(url: file).cookieHeader(for: origin) == "名=春节 回家")

        func entry(_ name: String, _ value: String, domain: String = "example.com", path: String = "/") -> String {
            let fields: [String: Any] = [
                "name": name, "value": value, "domain": domain, "hostOnly": true, "path": path,
                "secure": false, "httpOnly": false, "created": 0,
            ]
            let data = try! JSONSerialization.data(withJSONObject: fields)
            return String(decoding: data, as: UTF8.self)
        }
        let entries = [
            entry("good", "1"), entry("a", "1\r\nX-Injected: yes"), entry("", "1"), entry("b=c", "1"),
            entry("c", "1;d=2"), entry("d", "1", domain: ""), entry("e", "1", path: "relative"),
            entry("f", "1", domain: "exämple.com"), entry("g", "\u{FFFD}"),
        ]
        let list = entries.joined(separator: ",")
        let contents = "{\"format\":\"serverapikit-cookies\",\"version\":1,\"cookies\":[\(list)]}"
        try Data(contents.utf8).write(to: file)
        let storage = FileCookieStorage(url: file)
        #expect(storage.allCookies.map(\.name) == ["good"])
        #expect(FileCookieStorage(url: file).allCookies.map(\.name) == ["good"], "the file was rewritten")
    }

    @Test("file storage: expired cookies are dropped on load")
    func fileExpiry() {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jar-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("jar.json")
        let clock = ManualDate()
        FileCookieStorage(url: file, now: { clock.now }).store(
            setCookieLines: ["a=1; Max-Age=10", "b=2"], from: Self.url("http://example.com/"))
        clock.advance(20)
        #expect(FileCookieStorage(url: file, now: { clock.now }).allCookies.map(\.name) == ["b"])
    }
}
