import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import Testing

@Suite("CurlTransport: redirects")
struct CurlRedirectTests {
    @Test("redirects are followed and counted")
    func follow() async throws {
        try await CurlTestServer.with { server in
            let response = try await CurlTransport().perform(TransportRequest(url: server.url("/redirect/3")))
            #expect(response.status == 200)
            #expect(response.url == server.url("/redirect/0"))
            #expect(response.metrics.redirects == 3)
            #expect(try Echo(response).path == "/redirect/0")
        }
    }

    @Test("with redirects off, the 3xx is the response")
    func none() async throws {
        try await CurlTestServer.with { server in
            let response = try await CurlTransport().perform(
                TransportRequest(url: server.url("/redirect/2"), redirects: .none))
            #expect(response.status == 302)
            #expect(response.headers["Location"] == "/redirect/1")
            #expect(response.data == Data("redirecting".utf8))
        }
    }

    @Test("a redirect loop, or one redirect too many, is tooManyRedirects")
    func tooMany() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport()
            let loop = await expectError {
                try await transport.perform(TransportRequest(url: server.url("/loop"), redirects: .follow(max: 5)))
            }
            #expect(loop?.kind == .tooManyRedirects)
            let over = await expectError {
                try await transport.perform(
                    TransportRequest(url: server.url("/redirect/3"), redirects: .follow(max: 2)))
            }
            #expect(over?.kind == .tooManyRedirects)
            let exact = try await transport.perform(
                TransportRequest(url: server.url("/redirect/3"), redirects: .follow(max: 3)))
            #expect(exact.status == 200)
        }
    }

    @Test("Authorization and Cookie are dropped on a redirect to another host, kept on the same one")
    func credentials() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport()
            let headers: HTTPHeaders = ["Authorization": "Bearer secret", "Cookie": "session=1", "X-Other": "kept"]
            for (target, crossHost) in [(server.otherHostURL("/echo"), true), (server.url("/echo"), false)] {
                let query = "url=" + target.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let response = try await transport.perform(
                    TransportRequest(url: server.url("/redirect-to?\(query)"), headers: headers))
                let echo = try Echo(response)
                #expect(response.url == target)
                #expect(echo.values("Authorization") == (crossHost ? [] : ["Bearer secret"]))
                #expect(echo.values("Cookie") == (crossHost ? [] : ["session=1"]))
                #expect(echo.values("X-Other") == ["kept"])
            }
        }
    }

    @Test("303 turns any method into a GET without body; 307 and 308 keep method and body")
    func methodRewriting() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport()
            let body = Data("payload".utf8)
            let cases: [(Int, HTTPMethod, String, Int)] = [
                (303, .put, "GET", 0), (303, .post, "GET", 0), (302, .post, "GET", 0), (302, .patch, "PATCH", 7),
                (307, .post, "POST", 7), (308, .put, "PUT", 7),
            ]
            for (status, method, expectedMethod, expectedLength) in cases {
                let request = TransportRequest(
                    url: server.url("/redirect-to?status=\(status)&url=%2Fecho"), method: method,
                    headers: ["Content-Type": "text/plain"], body: .data(body))
                let echo = try Echo(try await transport.perform(request))
                #expect(echo.method == expectedMethod, "\(status) after \(method)")
                #expect(echo.length == expectedLength, "\(status) after \(method)")
                #expect(echo.values("Content-Type") == (expectedLength > 0 ? ["text/plain"] : []))
            }
        }
    }
}
