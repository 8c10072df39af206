#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The matching rules of RFC 6265 §5.1: canonical hosts, domain-match, path-match, the default path,
/// and the public suffixes a `Domain` attribute may not name.
package enum CookieRules {
    /// Multi-label public suffixes refused as a `Domain` (besides every single label, i.e. every TLD).
    /// A small built-in list of common registries and hosting suffixes, not the whole Public Suffix List.
    package static let publicSuffixes: Set<String> = [
        "co.uk", "org.uk", "ac.uk", "gov.uk", "ltd.uk", "plc.uk", "me.uk", "net.uk", "sch.uk", "nhs.uk",
        "com.au", "net.au", "org.au", "edu.au", "gov.au", "asn.au", "id.au",
        "co.nz", "org.nz", "net.nz", "govt.nz", "ac.nz",
        "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp", "gr.jp",
        "co.kr", "or.kr", "ne.kr", "go.kr",
        "com.br", "net.br", "org.br", "gov.br",
        "com.cn", "net.cn", "org.cn", "gov.cn", "edu.cn",
        "com.tw", "org.tw", "net.tw", "com.hk", "org.hk", "com.sg", "edu.sg",
        "co.in", "net.in", "org.in", "gov.in", "ac.in",
        "co.za", "org.za", "gov.za", "com.mx", "org.mx", "gob.mx", "com.ar", "com.tr", "gov.tr",
        "co.il", "org.il", "ac.il", "com.ua", "co.id", "or.id", "com.my", "com.ph", "com.vn",
        "com.es", "com.pl", "com.ru", "co.at", "or.at", "co.it",
        "github.io", "gitlab.io", "herokuapp.com", "appspot.com", "azurewebsites.net", "cloudfront.net",
        "netlify.app", "vercel.app", "pages.dev", "workers.dev", "web.app", "firebaseapp.com",
        "blogspot.com", "s3.amazonaws.com", "fly.dev", "onrender.com",
    ]

    /// Whether `domain` is a public suffix: a single label (a TLD) or one of `publicSuffixes`.
    package static func isPublicSuffix(_ domain: String) -> Bool {
        !domain.contains(".") || publicSuffixes.contains(domain)
    }

    /// Whether a host is an IP address (v4 dotted quad, or v6).
    package static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } && Int(part)! <= 255
            }
    }

    /// A URL's host, lower-case, without IPv6 brackets or a trailing dot; `nil` without a host.
    package static func canonicalHost(of url: URL) -> String? {
        guard var host = url.host?.lowercased(), !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }
        return host.isEmpty ? nil : host
    }

    /// Domain-match (§5.1.3): the host is the domain, or ends with "." + domain and is not an IP address.
    package static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        return host.hasSuffix("." + domain) && !isIPAddress(host)
    }

    /// The path of a request URL as a cookie sees it: its percent-encoded path, "/" when empty.
    package static func requestPath(of url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        return path.hasPrefix("/") ? path : "/" + path
    }

    /// Path-match (§5.1.4).
    package static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// The default path (§5.1.4): the request path up to, not including, its last "/"; "/" at the top.
    package static func defaultPath(of url: URL) -> String {
        let path = requestPath(of: url)
        guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }
}
