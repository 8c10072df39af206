import Foundation
import ServerAPIKit
import Testing

@Suite("Unix-domain socket URLs and validation")
struct UnixSocketTests {
    @Test(
        "http+unix:// splits into the socket and an http URL on localhost",
        arguments: [
            ("http+unix://%2Ftmp%2Fapp.sock/items?x=1", "/tmp/app.sock", "http://localhost/items?x=1"),
            ("http+unix://%2Ftmp%2Fapp.sock", "/tmp/app.sock", "http://localhost/"),
            ("https+unix://%2Fvar%2Frun%2Fa%20b.sock/v1/", "/var/run/a b.sock", "https://localhost/v1/"),
        ])
    func split(text: String, socket: String, url: String) throws {
        let split = try #require(UnixSocket.split(URL(string: text)!))
        #expect(split.socketPath == socket)
        #expect(split.url.absoluteString == url)
    }

    @Test("the URL form round-trips")
    func roundTrip() throws {
        let url = try #require(UnixSocket.url(socketPath: "/tmp/x y.sock", path: "/get?a=1"))
        #expect(url.absoluteString == "http+unix://%2Ftmp%2Fx%20y.sock/get?a=1")
        #expect(UnixSocket.split(url)?.socketPath == "/tmp/x y.sock")
        #expect(UnixSocket.split(URL(string: "http://localhost/")!) == nil)
    }

    @Test("a ServerAPI with a http+unix URL or unixSocket(_:) resolves to the socket")
    func resolve() throws {
        let viaURL = try ServerAPI(url: URL(string: "http+unix://%2Ftmp%2Fs.sock/a")!).query("q", "1")
            .transportRequest()
        #expect(viaURL.unixSocketPath == "/tmp/s.sock")
        #expect(viaURL.url.absoluteString == "http://localhost/a?q=1")
        let viaHost = try ServerAPI(host: "http+unix://%2Ftmp%2Fs.sock", path: "/b").transportRequest()
        #expect(viaHost.unixSocketPath == "/tmp/s.sock")
        #expect(viaHost.url.absoluteString == "http://localhost/b")
        let option = try ServerAPI(host: "http://api.internal", path: "/c").unixSocket("/tmp/t.sock").transportRequest()
        #expect(option.unixSocketPath == "/tmp/t.sock")
        #expect(option.url.host == "api.internal")
    }

    @Test(
        "bad socket paths are invalidRequest",
        arguments: ["", "/tmp/a\u{0}b", "/" + String(repeating: "x", count: 120)])
    func invalid(path: String) {
        let error = #expect(throws: ServerAPIError.self) {
            _ = try ServerAPI(host: "http://localhost").unixSocket(path).transportRequest()
        }
        #expect(error?.kind == .invalidRequest)
    }

    @Test("a redirect to another origin leaves the socket")
    func redirect() {
        var request = TransportRequest(url: URL(string: "http://localhost/a")!)
        request.unixSocketPath = "/tmp/s.sock"
        let same = RedirectRule.redirected(request, to: URL(string: "http://localhost/b")!, status: 302)
        #expect(same.unixSocketPath == "/tmp/s.sock")
        let other = RedirectRule.redirected(request, to: URL(string: "http://elsewhere.test/")!, status: 302)
        #expect(other.unixSocketPath == nil)
    }

    @Test("the socket is part of the cache and coalescing key")
    func cacheKey() throws {
        let plain = try ServerAPI(host: "http://localhost", path: "/a").transportRequest()
        let one = try ServerAPI(host: "http://localhost", path: "/a").unixSocket("/tmp/one.sock").transportRequest()
        let two = try ServerAPI(host: "http://localhost", path: "/a").unixSocket("/tmp/two.sock").transportRequest()
        #expect(CacheKey(request: plain) != CacheKey(request: one))
        #expect(CacheKey(request: one) != CacheKey(request: two))
        #expect(CacheKey(request: one) == CacheKey(request: one))
    }
}
