import Foundation
import ServerAPIKit
import Testing

/// RFC 6265's own parser cases (abarth/http-state), re-implemented: each case's `Set-Cookie` fields go
/// into a jar as a transport hands them over, one field per line, and the jar's `Cookie` header for the
/// result URL must be the one the suite expects.
@Suite("Cookies: RFC 6265 parser cases (http-state)")
struct HTTPStateParserTests {
    /// The time the cases run at: before 7 Aug 2019, which case 0002 expects a cookie to outlive.
    static let now = Date(timeIntervalSince1970: 1_420_070_400)

    @Test("the Cookie header the suite expects", arguments: HTTPStateCase.all)
    func parserCase(_ testCase: HTTPStateCase) {
        let storage = MemoryCookieStorage(now: { Self.now })
        storage.store(setCookieLines: testCase.setCookie, from: testCase.origin)
        #expect(storage.cookieHeader(for: testCase.target) == testCase.expected)
    }

    @Test("all 218 enabled cases are in the table, each once")
    func table() {
        #expect(HTTPStateCase.all.count == 218)
        #expect(Set(HTTPStateCase.all.map(\.name)).count == HTTPStateCase.all.count)
    }
}
