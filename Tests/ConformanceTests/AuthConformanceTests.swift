import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Digest credentials (`TransportRequest.credentials`): answered by libcurl, refused by URLSession, and
/// never sent to another origin on a redirect.
@Suite("Conformance: Digest authentication")
struct AuthConformanceTests {
    static let credentials = HTTPCredentials.digest(user: "u", password: "p")

    @Test(
        "Digest credentials answer httpbin's challenge (curl); URLSession refuses the call",
        arguments: TransportKind.allCases)
    func digest(kind: TransportKind) async throws {
        let transport = kind.make()
        let url = try kind.httpbin("/digest-auth/auth/u/p")
        if kind == .urlsession {
            let error = await #expect(throws: ServerAPIError.self) {
                _ = try await transport.send(url) { $0.credentials = Self.credentials }
            }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.message.contains("digest") == true)
            return
        }
        let response = try await transport.send(url) { $0.credentials = Self.credentials }
        #expect(response.status == 200)
        let body = try JSONSerialization.jsonObject(with: response.data ?? Data()) as? [String: Any]
        #expect(body?["authenticated"] as? Bool == true)
        #expect(body?["user"] as? String == "u")
    }

    @Test(
        "a wrong Digest password is delivered as the 401 with its challenge",
        arguments: [TransportKind.curl, .curlHTTP2])
    func wrongPassword(kind: TransportKind) async throws {
        let response = try await kind.make().send(try kind.httpbin("/digest-auth/auth/u/p")) {
            $0.credentials = .digest(user: "u", password: "wrong")
        }
        #expect(response.status == 401)
        #expect(response.headers["WWW-Authenticate"]?.hasPrefix("Digest") == true)
    }

    @Test(
        "a Digest challenge libcurl cannot answer (SHA-512) is the response, as without credentials",
        arguments: [TransportKind.curl, .curlHTTP2])
    func unanswerable(kind: TransportKind) async throws {
        let response = try await kind.make().send(try kind.httpbin("/digest-auth/auth/u/p/SHA-512")) {
            $0.credentials = Self.credentials
        }
        #expect(response.status == 401)
        #expect(response.headers["WWW-Authenticate"]?.contains("algorithm=SHA-512") == true)
        #expect(response.headers.values(for: "Set-Cookie").isEmpty == false)
    }

    @Test("a challenge the request has no Digest credentials for is the response", arguments: [TransportKind.curl])
    func noCredentials(kind: TransportKind) async throws {
        let response = try await kind.make().send(try kind.httpbin("/digest-auth/auth/u/p"))
        #expect(response.status == 401)
    }

    @Test("Digest credentials follow a redirect on the same origin", arguments: [TransportKind.curl, .curlHTTP2])
    func sameOriginRedirect(kind: TransportKind) async throws {
        let response = try await kind.make().send(
            try kind.httpbin("/redirect-to?url=%2Fdigest-auth%2Fauth%2Fu%2Fp")
        ) { $0.credentials = Self.credentials }
        #expect(response.status == 200)
        #expect(response.metrics.redirects == 1)
    }

    @Test(
        "Digest credentials are not sent to another origin on a redirect", arguments: [TransportKind.curl, .curlHTTP2])
    func crossOriginRedirect(kind: TransportKind) async throws {
        // 127.0.0.1 → localhost: another origin, the same httpbin, which answers 401 without credentials.
        let target = try kind.httpbin("/digest-auth/auth/u/p").absoluteString
            .replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let query = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let response = try await kind.make().send(try kind.httpbin("/redirect-to?url=\(query)")) {
            $0.credentials = Self.credentials
        }
        #expect(response.url.host == "localhost")
        #expect(response.status == 401)
    }
}
