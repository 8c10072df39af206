import Foundation
import ServerAPIKit

/// Proxy URLs and `no_proxy` lists: a proxy that is accepted is an http(s) URL with a host and a port and
/// without credentials, path, query or fragment (they move to `credentials` or are dropped).
enum ProxyHarness {
    /// Input: the proxy URL line, then a `no_proxy` list line, then a host.
    static func run(_ data: Data) {
        let (fields, _) = data.lines(3)
        let bypass = fields[1].split(separator: ",").map(String.init)
        guard let proxy = try? Proxy(fields[0], bypass: bypass) else {
            _ = (try? Proxy("http://proxy.test:3128", bypass: bypass))?.bypasses(fields[2])
            return
        }
        guard let url = proxy.url else { return require(false, "a proxy without a URL", input: data) }
        require(
            url.scheme == "http" || url.scheme == "https", "the scheme \(String(describing: url.scheme))", input: data)
        require(url.host?.isEmpty == false, "a proxy without a host", input: data)
        require(url.port != nil, "a proxy without a port", input: data)
        require(url.user == nil && url.password == nil, "credentials left in \(url)", input: data)
        require(url.query == nil && url.fragment == nil, "a query or fragment left in \(url)", input: data)
        // The password is never shown (unless it is also a part of what is shown anyway).
        if let credentials = proxy.credentials, credentials.password.count >= 4 {
            let password = credentials.password
            let shown = [credentials.user + ":<redacted>", url.absoluteString + " (with credentials)"]
            if !shown.contains(where: { $0.contains(password) }) {
                require(!proxy.description.contains(password), "the password in \(proxy)", input: data)
                require(!String(describing: credentials).contains(password), "the password shown", input: data)
                require(!String(reflecting: credentials).contains(password), "the password dumped", input: data)
            }
        }
        _ = proxy.bypasses(fields[2])
    }
}
