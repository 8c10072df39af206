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

/// The resolution is kept with the description; every change to its URL parts makes it again.
@Suite struct ResolvedURLKeptTests {
    @Test("a change to host, path, URL or query, in place or on a copy, resolves again; the original keeps its URL")
    func changesResolveAgain() throws {
        var api = ServerAPI(host: "api.test", path: "/items")
        #expect(try api.resolvedURL().absoluteString == "https://api.test/items")
        // In place: this value holds the only reference to its storage.
        api.path = "/other"
        #expect(try api.resolvedURL().absoluteString == "https://api.test/other")
        api.query = [QueryItem(name: "q", value: "a b")]
        #expect(try api.transportRequest().url.absoluteString == "https://api.test/other?q=a%20b")
        // On a copy: the two share their storage until one of them changes.
        var copy = api
        copy.host = "https://user:secret@copy.test"
        #expect(try copy.resolvedURL().absoluteString == "https://user:secret@copy.test/other?q=a%20b")
        let request = try copy.transportRequest()
        #expect(request.url.absoluteString == "https://copy.test/other?q=a%20b")
        #expect(request.headers["Authorization"] == "Basic dXNlcjpzZWNyZXQ=")
        #expect(try api.resolvedURL().absoluteString == "https://api.test/other?q=a%20b")
        copy.url = URL(string: "http+unix://%2Ftmp%2Fs.sock/ping")
        let target = try copy.resolvedTarget()
        #expect(target.url.absoluteString == "http://localhost/ping?q=a%20b")
        #expect(target.unixSocketPath == "/tmp/s.sock")
        // The socket of a call's own `unixSocketPath` is not part of the kept resolution: it is read each time.
        var plain = api
        plain.unixSocketPath = "/tmp/other.sock"
        #expect(try plain.resolvedTarget().unixSocketPath == "/tmp/other.sock")
    }

    @Test("an invalid description fails every time, and one shared by many tasks resolves to one URL")
    func failuresAndSharing() async throws {
        let invalid = ServerAPI(host: " ", path: "/x")
        for _ in 0..<2 {
            let error = #expect(throws: ServerAPIError.self) { try invalid.transportRequest() }
            #expect(error?.kind == .invalidRequest)
        }
        let shared = ServerAPI(host: "api.test", path: "/shared").query("n", "1")
        let urls = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<32 { group.addTask { try? shared.transportRequest().url.absoluteString } }
            return await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(urls == ["https://api.test/shared?n=1"])
    }
}
