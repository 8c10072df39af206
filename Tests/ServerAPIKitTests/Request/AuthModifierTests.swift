import Foundation
import ServerAPIKit
import Testing

@Suite("Auth modifiers")
struct AuthModifierTests {
    static let api = ServerAPI(url: URL(string: "http://api.test/a")!)

    @Test("basicAuth and bearerAuth set one Authorization header, replacing an earlier one")
    func headers() throws {
        let basic = try Self.api.header("Authorization", "old").basicAuth(user: "Aladdin", password: "open sesame")
            .transportRequest()
        #expect(basic.headers.values(for: "Authorization") == ["Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="])
        #expect(basic.credentials == nil)
        let bearer = try Self.api.bearerAuth("t0k").transportRequest()
        #expect(bearer.headers.values(for: "Authorization") == ["Bearer t0k"])
    }

    @Test("digestAuth travels to the transport as credentials, not as a header; its description hides the password")
    func digest() throws {
        let request = try Self.api.digestAuth(user: "u", password: "pw").transportRequest()
        #expect(request.credentials == .digest(user: "u", password: "pw"))
        #expect(!request.headers.contains("Authorization"))
        #expect(request.credentials?.description == "digest u:<redacted>")
    }
}
