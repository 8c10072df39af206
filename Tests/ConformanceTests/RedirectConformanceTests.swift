import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Redirects: followed up to the limit, or returned; loops end; credentials stay with their host.
@Suite("Conformance: redirects")
struct RedirectConformanceTests {
    @Test("redirects are followed up to the limit", arguments: TransportKind.allCases)
    func followed(kind: TransportKind) async throws {
        let response = try await kind.make().send(try kind.httpbin("/redirect/3")) {
            $0.redirects = .follow(max: 3)
        }
        #expect(response.status == 200)
        #expect(response.url.path == "/get")
        #expect(response.metrics.redirects == 3)
    }

    @Test("one redirect more than allowed is tooManyRedirects", arguments: TransportKind.allCases)
    func overLimit(kind: TransportKind) async throws {
        let transport = kind.make()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(try kind.httpbin("/redirect/4")) { $0.redirects = .follow(max: 3) }
        }
        #expect(error?.kind == .tooManyRedirects)
    }

    @Test("a redirect loop ends with tooManyRedirects", arguments: TransportKind.allCases)
    func loop(kind: TransportKind) async throws {
        let transport = kind.make()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(try kind.fixture("/redirect-loop"), timeout: .seconds(20))
        }
        #expect(error?.kind == .tooManyRedirects)
    }

    @Test(
        "with redirects off, the 3xx itself is the response", arguments: TransportKind.allCases,
        [301, 302, 303, 307, 308])
    func notFollowed(kind: TransportKind, status: Int) async throws {
        let response = try await kind.make().send(
            try kind.fixture("/redirect-to?url=/headers&status=\(status)")
        ) { $0.redirects = .none }
        #expect(response.status == status)
        #expect(response.headers["Location"] == "/headers")
        #expect(response.metrics.redirects == 0)
    }

    @Test(
        "Authorization and Cookie are kept on the same host and dropped for another", arguments: TransportKind.allCases)
    func credentialsStayWithTheirHost(kind: TransportKind) async throws {
        let transport = kind.make()
        let headers: HTTPHeaders = ["Authorization": "Bearer secret", "Cookie": "session=1", "X-Other": "kept"]

        let sameHost = try Echo(
            try await transport.send(try kind.fixture("/redirect-chain/2"), headers: headers))
        #expect(sameHost.values("Authorization") == ["Bearer secret"])
        #expect(sameHost.values("Cookie") == ["session=1"])

        let otherHost = try await transport.send(try kind.fixture("/redirect-cross-host"), headers: headers)
        #expect(otherHost.status == 200)
        #expect(otherHost.url.host == "localhost")
        let echo = try Echo(otherHost)
        #expect(echo.values("Authorization").isEmpty)
        #expect(echo.values("Cookie").isEmpty)
        #expect(echo.values("X-Other") == ["kept"])
    }

    @Test(
        "Proxy-Authorization, Cookie and Authorization are kept on the same origin and dropped for another host or port",
        arguments: TransportKind.allCases)
    func credentialsStayWithTheirOrigin(kind: TransportKind) async throws {
        let transport = kind.make()
        let headers: HTTPHeaders = [
            "Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic cHJveHk=",
            "X-Other": "kept",
        ]
        let credentials = ["Authorization", "Cookie", "Proxy-Authorization"]

        let sameOrigin = try Echo(
            try await transport.send(try kind.fixture("/redirect-chain/1"), headers: headers))
        for name in credentials { #expect(sameOrigin.values(name).count == 1, "\(name)") }

        // 127.0.0.1 → localhost, same port.
        let otherHost = try await transport.send(try kind.fixture("/redirect-cross-host"), headers: headers)
        #expect(otherHost.url.host == "localhost")
        let echo = try Echo(otherHost)
        for name in credentials { #expect(echo.values(name).isEmpty, "\(name)") }
        #expect(echo.values("X-Other") == ["kept"])

        // Same host, another port: httpbin.
        let target = try kind.httpbin("/headers")
        let query = target.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let otherPort = try await transport.send(
            try kind.fixture("/redirect-to?status=307&url=\(query)"), headers: headers)
        #expect(otherPort.status == 200)
        #expect(otherPort.url.port == target.port)
        let received = try JSONDecoder().decode(HTTPBinHeaders.self, from: otherPort.data ?? Data()).headers
        let names = Set(received.keys.map { $0.lowercased() })
        for name in credentials { #expect(!names.contains(name.lowercased()), "\(name)") }
        #expect(received["X-Other"] == "kept")
    }

    @Test("a POST answered 303 is followed with a GET without a body", arguments: TransportKind.allCases)
    func seeOther(kind: TransportKind) async throws {
        let response = try await kind.make().send(
            try kind.fixture("/redirect-to?url=/echo&status=303"), method: .post,
            headers: ["Content-Type": "text/plain"], body: .data(Data("a body".utf8)))
        let echo = try Echo(response)
        #expect(echo.method == "GET")
        #expect(echo.length == 0)
        #expect(echo.values("Content-Type").isEmpty)
        #expect(echo.values("Content-Length").allSatisfy { $0 == "0" })
    }
}

/// What httpbin's `/headers` answers.
private struct HTTPBinHeaders: Decodable {
    var headers: [String: String]
}
