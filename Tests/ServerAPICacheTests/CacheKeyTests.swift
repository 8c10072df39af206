import Foundation
import Testing

@testable import ServerAPIKit

@Suite struct CacheKeyTests {
    static let urls = [
        "https://api.example.com", "https://api.example.com/", "HTTPS://API.Example.COM/Items?b=2&a=1",
        "http://api.example.com:80/x", "https://api.example.com:443/x", "https://api.example.com:8443/x?z",
        "http://api.example.com:443/x", "https://api.example.com/a/b%20c/?q=a%26b&q=a&p", "https://h/p?a=&a&a=1",
        "https://h/p?b=1#frag", "https://h/p#frag?x=1", "https://h/p?a=1&&b=2", "https://h/p?",
        "https://user:pw@h/p?b&a",
        "https://[::1]:8080/p?b&a", "https://my_host/p", "https://h/p?x=%2F&x=%2f&X=1", "https://h:0080/p",
        "https://h/p?émoji=✓&a=1", "https://sub.domain-name.example/path;params?c=3&b=2&a=1",
    ]

    @Test("the fast normalization gives exactly what URLComponents gives", arguments: urls)
    func fastPathAgrees(text: String) throws {
        let url = try #require(URL(string: text))
        #expect(CacheKey.normalize(url) == CacheKey.normalizeWithComponents(url))
    }

    @Test("the fast normalization agrees with URLComponents on many generated URLs")
    func generated() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        func pick(_ choices: [String]) -> String { choices[next(choices.count)] }
        var checked = 0
        for _ in 0..<2_000 {
            var text = pick(["http", "https", "HTTP", "Https"]) + "://" + pick(["api.test", "API.Test", "a-b.c", "x"])
            text += pick(["", "", ":80", ":443", ":8080"])
            text += pick(["", "/", "/a", "/a/b", "/A%20B/", "/p;x"])
            if next(3) > 0 {
                let items = (0..<(1 + next(4))).map { _ in
                    pick(["a", "b", "B", "a=", "a=1", "b=2", "a=2", "c=%2F", "c=x=y", "d=%26", "", "=v"])
                }
                text += "?" + items.joined(separator: "&")
            }
            if next(4) == 0 { text += "#" + pick(["", "f", "f?x=1"]) }
            guard let url = URL(string: text) else { continue }
            #expect(CacheKey.normalize(url) == CacheKey.normalizeWithComponents(url), "\(text)")
            checked += 1
        }
        #expect(checked > 1_500)
    }

    @Test("the fast normalization handles the common shapes itself")
    func fastPathTaken() throws {
        let url = try #require(URL(string: "HTTPS://API.Example.COM:443/Items?b=2&a=1#top"))
        #expect(CacheKey.normalizeSimple(url.absoluteString) == "https://api.example.com/Items?a=1&b=2")
        #expect(CacheKey.normalizeSimple("https://user@h/p") == nil)
    }

    @Test("requests that differ in method, URL, body or a varying header have different keys")
    func distinctKeys() throws {
        let base = ServerAPI(host: "https://api.test", path: "/items").query("a", "1")
        func key(_ api: ServerAPI) throws -> CacheKey {
            CacheKey(request: try api.transportRequest(), varying: api.varyingHeaders)
        }
        #expect(try key(base) == key(ServerAPI(host: "https://API.test", path: "/items").query("a", "1")))
        #expect(try key(base) != key(base.method(.head)))
        #expect(try key(base) != key(base.query("b", "2")))
        #expect(
            try key(base.method(.post).body(.data(Data("x".utf8))))
                != key(base.method(.post).body(.data(Data("y".utf8)))))
        let varying = base.varying("Authorization")
        #expect(try key(varying.setHeader("Authorization", "a")) != key(varying.setHeader("Authorization", "b")))
        #expect(try key(base.setHeader("Authorization", "a")) == key(base.setHeader("Authorization", "b")))
        #expect(try !key(varying.setHeader("Authorization", "secret-token")).rawValue.contains("secret-token"))
    }

    @Test("Digest credentials are always part of the key, user and password, and never appear in it")
    func credentialsInKey() throws {
        let base = ServerAPI(host: "https://api.test", path: "/me")
        func key(_ api: ServerAPI) throws -> CacheKey { CacheKey(request: try api.transportRequest()) }
        let alice = base.digestAuth(user: "alice", password: "wonderland")
        #expect(try key(alice) == key(base.digestAuth(user: "alice", password: "wonderland")))
        #expect(try key(alice) != key(base))
        #expect(try key(alice) != key(base.digestAuth(user: "bob", password: "wonderland")))
        #expect(try key(alice) != key(base.digestAuth(user: "alice", password: "guess")))
        let text = try key(alice).rawValue
        #expect(!text.contains("alice") && !text.contains("wonderland"))
    }
}
