import Foundation
import ServerAPIKit
import Testing

@Suite("Redirect rule")
struct RedirectRuleTests {
    static let body = BodySource.data(Data("payload".utf8))
    static let headers: HTTPHeaders = [
        "Content-Type": "text/plain", "Content-Length": "7", "Content-Encoding": "identity",
        "Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic cHJveHk=",
        "X-Other": "kept",
    ]

    static func request(
        _ url: String = "http://api.test/start", method: HTTPMethod = .post, redirects: RedirectPolicy = .follow(max: 5)
    ) -> TransportRequest {
        TransportRequest(url: URL(string: url)!, method: method, headers: headers, body: body, redirects: redirects)
    }

    /// The request a decision follows with, or nil when it does not follow.
    static func followed(_ decision: RedirectDecision) -> TransportRequest? {
        if case .follow(let next) = decision { next } else { nil }
    }

    static func failure(_ decision: RedirectDecision) -> ServerAPIError? {
        if case .fail(let error) = decision { error } else { nil }
    }

    static let methods: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options]
    /// Written out rather than computed, so the test does not repeat the rule it checks.
    static let becomeGet: Set<String> = [
        "303 GET", "303 POST", "303 PUT", "303 PATCH", "303 DELETE", "303 OPTIONS", "301 POST", "302 POST",
    ]

    @Test("each redirect status rewrites each method as browsers do", arguments: [301, 302, 303, 307, 308], methods)
    func methodRewriting(status: Int, method: HTTPMethod) throws {
        let next = try #require(
            Self.followed(
                RedirectRule.decide(Self.request(method: method), status: status, location: "/next", followed: 0)))
        let becomesGet = Self.becomeGet.contains("\(status) \(method)")
        #expect(next.url.absoluteString == "http://api.test/next")
        #expect(next.method == (becomesGet ? .get : method))
        #expect(next.body == (becomesGet ? .empty : Self.body))
        for name in ["Content-Type", "Content-Length", "Content-Encoding"] {
            #expect(next.headers.contains(name) == !becomesGet, "\(name)")
        }
        // Same origin: the credentials stay.
        #expect(next.headers["Authorization"] == "Bearer secret")
        #expect(next.headers["X-Other"] == "kept")
    }

    @Test("becoming a GET drops every header that describes the body, whatever its case")
    func bodyHeadersDropped() throws {
        var request = Self.request()
        request.headers = [
            "content-type": "a", "CONTENT-LENGTH": "7", "Content-Encoding": "gzip", "Transfer-Encoding": "chunked",
            "Content-Language": "en", "Content-Location": "/x", "Accept": "text/plain",
        ]
        let next = try #require(Self.followed(RedirectRule.decide(request, status: 303, location: "/n", followed: 0)))
        #expect(next.headers.fields.map(\.name) == ["Accept"])
    }

    @Test("a 303 after a 303 stays a GET, and a 307 after a 303 keeps the GET without a body")
    func chained() throws {
        let first = try #require(
            Self.followed(RedirectRule.decide(Self.request(), status: 303, location: "/a", followed: 0)))
        let second = try #require(Self.followed(RedirectRule.decide(first, status: 307, location: "/b", followed: 1)))
        #expect(second.method == .get)
        #expect(second.body == .empty)
        #expect(second.url.path == "/b")
    }

    @Test(
        "a status that is not a followed redirect is delivered, even with a Location",
        arguments: [200, 204, 300, 304, 305, 306, 404, 500])
    func notRedirects(status: Int) {
        let decision = RedirectRule.decide(Self.request(), status: status, location: "/elsewhere", followed: 0)
        #expect(Self.followed(decision) == nil)
        #expect(Self.failure(decision) == nil)
    }

    @Test("a 3xx without a Location, or with an empty one, is delivered", arguments: [nil, "", "  \t"] as [String?])
    func noLocation(location: String?) {
        let decision = RedirectRule.decide(Self.request(), status: 302, location: location, followed: 0)
        guard case .deliver = decision else {
            Issue.record("expected .deliver, got \(decision)")
            return
        }
    }

    @Test("with redirects off, the 3xx is delivered whatever the count")
    func policyNone() {
        let decision = RedirectRule.decide(
            Self.request(redirects: .none), status: 301, location: "/next", followed: 100)
        guard case .deliver = decision else {
            Issue.record("expected .deliver, got \(decision)")
            return
        }
    }

    @Test("redirects are followed up to the limit; the next one fails with tooManyRedirects")
    func limit() throws {
        let request = Self.request(redirects: .follow(max: 3))
        for followed in 0..<3 {
            #expect(Self.followed(RedirectRule.decide(request, status: 302, location: "/n", followed: followed)) != nil)
        }
        let error = try #require(Self.failure(RedirectRule.decide(request, status: 302, location: "/n", followed: 3)))
        #expect(error.kind == .tooManyRedirects)
        #expect(error.status == 302)
        #expect(error.message == "the server redirected more than 3 times")
        let none = try #require(
            Self.failure(
                RedirectRule.decide(Self.request(redirects: .follow(max: 0)), status: 307, location: "/n", followed: 0))
        )
        #expect(none.kind == .tooManyRedirects)
    }

    @Test(
        "Location is resolved against the request URL: relative, absolute, scheme-relative, dot segments",
        arguments: [
            ("/next", "http://api.test:8080/next"),
            ("next", "http://api.test:8080/a/next"),
            ("../up?x=1", "http://api.test:8080/up?x=1"),
            ("./same/../here", "http://api.test:8080/a/here"),
            ("?page=2", "http://api.test:8080/a/b?page=2"),
            ("//cdn.test/file", "http://cdn.test/file"),
            ("//cdn.test:9000/file", "http://cdn.test:9000/file"),
            ("https://other.test/x?y=z", "https://other.test/x?y=z"),
            ("HTTP://Other.Test/x", "HTTP://Other.Test/x"),
            ("/with space/ü", "http://api.test:8080/with%20space/%C3%BC"),
            ("  /trimmed  ", "http://api.test:8080/trimmed"),
        ])
    func resolution(location: String, expected: String) throws {
        let request = Self.request("http://api.test:8080/a/b?q=1", method: .get)
        let next = try #require(
            Self.followed(RedirectRule.decide(request, status: 302, location: location, followed: 0)))
        #expect(next.url.absoluteString == expected)
    }

    @Test(
        "a Location that is not an http(s) URL with a host fails the call as a network error",
        arguments: [
            "ftp://files.test/x", "mailto:someone@api.test", "file:///etc/passwd", "javascript:alert(1)",
            "http:relative", "http:///no-host", "https://",
        ])
    func notHTTP(location: String) throws {
        let error = try #require(
            Self.failure(RedirectRule.decide(Self.request(), status: 301, location: location, followed: 0)))
        #expect(error.kind == .network)
        #expect(error.status == 301)
        #expect(error.message == "the server redirected to \"\(location)\", which is not an http(s) URL")
    }

    @Test(
        "credentials (headers and Digest) never cross origins: scheme, host or port changes drop them; default ports are the same origin",
        arguments: [
            ("http://api.test/a", "/b", false),
            ("http://api.test/a", "http://API.test:80/b", false),
            ("https://api.test/a", "https://api.test:443/b", false),
            ("http://api.test:8080/a", "//api.test:8080/b", false),
            ("http://api.test/a", "https://api.test/b", true),
            ("https://api.test/a", "http://api.test:443/b", true),
            ("http://api.test/a", "http://api.test:8080/b", true),
            ("http://api.test:8080/a", "/b", false),
            ("http://api.test/a", "//cdn.test/b", true),
            ("http://127.0.0.1:8000/a", "http://localhost:8000/b", true),
        ])
    func crossOrigin(from: String, location: String, crossesOrigin: Bool) throws {
        for status in [302, 307] {
            var request = Self.request(from, method: .get)
            request.credentials = .digest(user: "u", password: "p")
            let next = try #require(
                Self.followed(RedirectRule.decide(request, status: status, location: location, followed: 0)))
            for name in ["Authorization", "Cookie", "Proxy-Authorization"] {
                #expect(next.headers.contains(name) == !crossesOrigin, "\(name) \(from) → \(location)")
            }
            #expect(next.headers["X-Other"] == "kept")
            #expect(next.credentials == (crossesOrigin ? nil : request.credentials), "digest \(from) → \(location)")
            #expect(RedirectRule.sameOrigin(request.url, next.url) == !crossesOrigin)
        }
    }

    @Test("credential headers are dropped whatever case the caller wrote them in")
    func credentialCase() throws {
        var request = Self.request(method: .get)
        request.headers = ["authorization": "a", "COOKIE": "c", "proxy-authorization": "p", "Accept": "*/*"]
        let next = try #require(
            Self.followed(RedirectRule.decide(request, status: 302, location: "http://other.test/", followed: 0)))
        #expect(next.headers.fields.map(\.name) == ["Accept"])
    }

    @Test("the other fields of the request travel with the redirect unchanged")
    func keepsTheRest() throws {
        var request = Self.request()
        request.timeout = .seconds(7)
        request.maxResponseSize = 1000
        request.attempt = 2
        let next = try #require(Self.followed(RedirectRule.decide(request, status: 303, location: "/n", followed: 0)))
        #expect(next.id == request.id)
        #expect(next.timeout == .seconds(7))
        #expect(next.maxResponseSize == 1000)
        #expect(next.attempt == 2)
        #expect(next.redirects == request.redirects)
    }
}
