import Foundation

@testable import ServerAPIKit

/// `Set-Cookie` parsing (and its date and list splitting): a cookie it returns has a name, a path, a domain
/// the response's host may set, and no `Secure` flag from plain http.
enum SetCookieHarness {
    static let urls = [
        URL(string: "https://www.example.com/a/b")!, URL(string: "http://example.com")!,
        URL(string: "http://127.0.0.1:8080/x/")!,
    ]
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let url = urls[data.count % urls.count]
        if let cookie = SetCookie.parse(text, from: url, now: now) {
            require(!cookie.name.isEmpty, "a cookie without a name", input: data)
            require(!cookie.name.contains(";") && !cookie.value.contains(";"), "a cookie holds a ;", input: data)
            require(cookie.path.hasPrefix("/"), "the cookie path \(cookie.path)", input: data)
            require(url.scheme == "https" || !cookie.secure, "a Secure cookie from http", input: data)
            let host = url.host!.lowercased()
            let domain = cookie.domain.lowercased()
            require(
                host == domain || host.hasSuffix("." + domain),
                "\(host) set a cookie for \(cookie.domain)", input: data)
        }
        for part in SetCookie.split(text) {
            require(!part.isEmpty, "an empty cookie line from split", input: data)
        }
        _ = SetCookie.parseDate(text)
    }
}
