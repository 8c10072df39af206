import Foundation
import Testing

@testable import ServerAPIKit

@Suite("ServerOrigin: the one origin the redirect rule, the cache and the resilience policies compare")
struct ServerOriginTests {
    @Test("the case of scheme and host and an explicit default port do not make another origin")
    func sameOrigin() throws {
        let written = try #require(URL(string: "HTTPS://API.Example.com/a?x=1"))
        let other = try #require(URL(string: "https://api.example.com:443/b"))
        #expect(ServerOrigin.same(written, other))
        #expect(ServerOrigin(written) == ServerOrigin(scheme: "https", host: "api.example.com"))
        #expect(ServerOrigin(written).description == "https://api.example.com:443")
        let plain = try #require(URL(string: "http://h.test/"))
        #expect(ServerOrigin.same(plain, try #require(URL(string: "HTTP://H.TEST:80/x"))))
    }

    @Test("another scheme, host or port is another origin")
    func otherOrigins() throws {
        let base = try #require(URL(string: "https://api.example.com/"))
        for text in ["http://api.example.com/", "https://api.example.com:8443/", "https://example.com/"] {
            #expect(!ServerOrigin.same(base, try #require(URL(string: text))), "\(text)")
        }
    }

    @Test("a redirect to the same origin written in capitals keeps the credentials")
    func redirectKeepsCredentialsOnSameOrigin() throws {
        let request = TransportRequest(
            url: try #require(URL(string: "https://api.example.com/start")),
            headers: ["Authorization": "Bearer t"])
        let next = try #require(
            RedirectRuleTests.followed(
                RedirectRule.decide(request, status: 302, location: "HTTPS://API.EXAMPLE.COM:443/next", followed: 0)))
        #expect(next.headers["Authorization"] == "Bearer t")
    }
}
