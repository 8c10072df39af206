import Foundation
import ServerAPIKit
import Testing

/// URL resolution skips Foundation for the common case; these pin the cases around the shortcut.
@Suite struct ResolvedURLFastPathTests {
    @Test(
        "Hosts are trimmed of spaces and tabs, schemes are detected, full URLs in the path win",
        arguments: [
            ("api.test", "/items", "https://api.test/items"),
            ("  api.test\t", "/items", "https://api.test/items"),
            ("\u{00A0}api.test", "items", "https://api.test/items"),
            ("http://api.test/v1/", "/items", "http://api.test/v1/items"),
            ("api.test", "https://other.test/x", "https://other.test/x"),
        ])
    func resolves(host: String, path: String, expected: String) throws {
        #expect(try ServerAPI(host: host, path: path).resolvedURL().absoluteString == expected)
    }

    @Test("A blank host, or a scheme found after a colon that is not http(s), is an invalid request")
    func rejected() {
        for host in [" \t ", "a:b:://api.test", "ftp://api.test", "https:://api.test"] {
            #expect(throws: ServerAPIError.self) { try ServerAPI(host: host, path: "/x").resolvedURL() }
        }
    }
}
