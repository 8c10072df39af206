import Foundation
import Testing

@testable import ServerAPIKit

@Suite("Building URLs")
struct URLBuildingTests {
    @Test(
        "host and path join with exactly one slash whatever the caller wrote",
        arguments: [
            ("https://api.test", "users", "https://api.test/users"),
            ("https://api.test/", "/users", "https://api.test/users"),
            ("https://api.test//", "//users", "https://api.test/users"),
            ("https://api.test/v1", "users/7", "https://api.test/v1/users/7"),
            ("https://api.test/v1/", "/users/7/", "https://api.test/v1/users/7/"),
            ("https://api.test", "", "https://api.test"),
            ("api.test", "x", "https://api.test/x"),
            ("http://127.0.0.1:8080", "/a", "http://127.0.0.1:8080/a"),
        ])
    func joins(host: String, path: String, expected: String) throws {
        #expect(try ServerAPI(host: host, path: path).resolvedURL().absoluteString == expected)
    }

    @Test("query values are percent-encoded: space, plus, ampersand, equals, slash, unicode, emoji")
    func encodesQuery() throws {
        let url = try ServerAPI(host: "https://api.test", path: "/search")
            .query("q", "a b+c&d=e/f")
            .query("name", "Zoë")
            .query("emoji", "🚀")
            .query("flag", nil)
            .query("k&y", "v")
            .resolvedURL()
        #expect(
            url.absoluteString
                == "https://api.test/search?q=a%20b%2Bc%26d%3De%2Ff&name=Zo%C3%AB&emoji=%F0%9F%9A%80&flag&k%26y=v")
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(items.first { $0.name == "q" }?.value == "a b+c&d=e/f")
        #expect(items.first { $0.name == "emoji" }?.value == "🚀")
        #expect(items.first { $0.name == "k&y" }?.value == "v")
    }

    @Test("a query already in the path is kept and extended")
    func keepsPathQuery() throws {
        let url = try ServerAPI(host: "https://api.test", path: "/list?page=2").query("size", "10").resolvedURL()
        #expect(url.absoluteString == "https://api.test/list?page=2&size=10")
    }

    @Test("query items from a dictionary are sorted, so the URL is stable")
    func sortsDictionaryQuery() throws {
        let url = try ServerAPI(host: "https://api.test").query(["b": "2", "a": "1", "c": "3"]).resolvedURL()
        #expect(url.query == "a=1&b=2&c=3")
    }

    @Test("unsafe path characters are encoded, existing escapes are kept")
    func encodesPath() throws {
        let url = try ServerAPI(host: "https://api.test", path: "/files/my report ü.pdf").resolvedURL()
        #expect(url.absoluteString == "https://api.test/files/my%20report%20%C3%BC.pdf")
        let kept = try ServerAPI(host: "https://api.test", path: "/files/a%20b").resolvedURL()
        #expect(kept.absoluteString == "https://api.test/files/a%20b")
    }

    @Test("a full URL replaces host and path and still takes query items")
    func fullURL() throws {
        let api = ServerAPI(url: URL(string: "http://example.test:81/x?y=1")!).query("z", "2")
        #expect(try api.resolvedURL().absoluteString == "http://example.test:81/x?y=1&z=2")
    }

    @Test(
        "an unusable URL is an invalidRequest error, not a crash",
        arguments: [
            ServerAPI(host: ""), ServerAPI(host: "ftp://files.test", path: "/a"),
            ServerAPI(host: "https://", path: "x"), ServerAPI(host: "http://exa mple.test"),
        ])
    func invalidURL(api: ServerAPI) {
        let error = #expect(throws: ServerAPIError.self) { try api.resolvedURL() }
        #expect(error?.kind == .invalidRequest)
        do {
            _ = try api.transportRequest()
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .invalidRequest)
        }
    }

    @Test("header names must be tokens and values must not carry line breaks")
    func headerValidation() throws {
        let good = ServerAPI(host: "https://api.test").header("X-Trace", "a b").header("x-trace", "c")
        let request = try good.transportRequest()
        #expect(request.headers.values(for: "X-TRACE") == ["a b", "c"])
        for bad in [
            ServerAPI(host: "https://api.test").header("Bad Name", "v"),
            ServerAPI(host: "https://api.test").header("X-Inject", "v\r\nEvil: 1"),
        ] {
            let error = #expect(throws: ServerAPIError.self) { try bad.transportRequest() }
            #expect(error?.kind == .invalidRequest)
        }
    }

    @Test("modifiers return modified copies that keep the id")
    func modifiersKeepID() throws {
        let base = ServerAPI(host: "https://api.test", path: "/a")
        let changed = base.method(.post).tag("search").timeout(.seconds(5)).retry(2).header("X-A", "1")
        #expect(changed.id == base.id)
        #expect(base.method == .get && base.tag == nil && base.retryCount == 0)
        #expect(changed.method == .post && changed.tag == "search" && changed.retryCount == 2)
        #expect(changed.timeout == .seconds(5) && changed.headers["x-a"] == "1")
        #expect(ServerAPI(host: "h").id != ServerAPI(host: "h").id)
    }

    @Test("headers are case-insensitive, may repeat, and setHeader replaces every value")
    func headers() {
        var headers: HTTPHeaders = ["Accept": "a", "accept": "b"]
        #expect(headers.values(for: "ACCEPT") == ["a", "b"])
        headers.replaceOrAdd(name: "ACCEPT", value: "c")
        #expect(headers.values(for: "accept") == ["c"] && headers.count == 1)
        headers["X-Gone"] = "1"
        headers["x-gone"] = nil
        #expect(!headers.contains("X-Gone"))
    }

    @Test("header names match by ASCII letters only: characters 0x20 apart that are not letters stay distinct")
    func headerNameFolding() {
        let headers: HTTPHeaders = ["X-Api-Key": "k", "X@": "at", "Content-Length": "5"]
        #expect(headers["x-API-kEY"] == "k" && headers["CONTENT-LENGTH"] == "5")
        #expect(headers["X`"] == nil && headers["x@"] == "at")
        #expect(headers["X-Api-Ke"] == nil && headers["X-Api-Kez"] == nil && headers["X\u{0D}Api-Key"] == nil)
        #expect(headers["x[api]"] == nil && !headers.contains("X{"))
    }

    @Test("a non-positive timeout is rejected")
    func badTimeout() {
        let error = #expect(throws: ServerAPIError.self) {
            try ServerAPI(host: "https://a.test").timeout(.zero).transportRequest()
        }
        #expect(error?.kind == .invalidRequest)
    }
}
