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
            let error = #expect(throws: ServerAPIError.self) { try ServerAPI(host: host, path: "/x").resolvedURL() }
            #expect(error?.kind == .invalidRequest, "\(host)")
        }
    }
}

@Suite struct ResolvedFullURLTests {
    @Test(
        "A full http(s) URL is sent as it is; query items are added to it; other schemes are refused",
        arguments: [
            ("https://api.test/a%20b?x=1#frag", [], "https://api.test/a%20b?x=1#frag"),
            ("HTTP://api.test/items", [], "HTTP://api.test/items"),
            ("https://api.test/items?x=1", [QueryItem(name: "y", value: "2 3")], "https://api.test/items?x=1&y=2%203"),
        ])
    func fullURL(url: String, query: [QueryItem], expected: String) throws {
        var api = ServerAPI(url: URL(string: url)!)
        api.query = query
        #expect(try api.resolvedURL().absoluteString == expected)
    }

    @Test("A full URL that is not http(s), or has no host, is an invalid request")
    func refused() {
        for url in ["ftp://api.test/x", "file:///etc/passwd", "https:///nohost"] {
            let error = #expect(throws: ServerAPIError.self) { try ServerAPI(url: URL(string: url)!).resolvedURL() }
            #expect(error?.kind == .invalidRequest, "\(url)")
        }
    }
}
