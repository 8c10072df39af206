#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CacheKey {
    /// The key of a request: method, normalized URL (scheme and host lower-cased, query items
    /// sorted), a SHA-256 digest of an in-memory body, a SHA-256 digest of its `credentials` when it
    /// has any (always: they are not a header a call could list as varying), and the values of the
    /// varying headers.
    ///
    /// Two requests that differ in any of these never share an entry (nor, through the manager's
    /// coalescing, a response in flight), so two users whose `Authorization` is listed as varying, or
    /// who answer a Digest challenge with different credentials, never see each other's responses.
    /// - Parameters:
    ///   - request: The resolved request.
    ///   - varying: Names of request headers whose values are part of the key.
    package init(request: TransportRequest, varying: [String] = []) {
        var text = request.method.rawValue + " " + Self.normalize(request.url)
        // The same URL through two sockets is two servers: neither the cache nor coalescing mixes them.
        if let socket = request.unixSocketPath { text += " unix:" + socket }
        switch request.body {
        case .empty: break
        case .stream(let body):
            // Never read here, and never the same twice: no two calls share an entry.
            text += " body:stream:\(ObjectIdentifier(body).hashValue)"
        case let body:
            if let bytes = body.inMemoryBytes {
                text += " body:" + SHA256.hex(bytes)
            } else {
                // A streamed body is identified by its files' paths and sizes, never read here.
                text +=
                    " body:"
                    + body.segments.map { segment in
                        switch segment {
                        case .data(let data): SHA256.hex(data)
                        case .file(let url): "file:\(url.path):\((try? BodySource.fileSize(url)) ?? -1)"
                        }
                    }.joined(separator: ",")
            }
        }
        if let credentials = request.credentials {
            // Password included: a wrong password for the right user must not be answered from the cache.
            let identity = credentials.scheme.rawValue + "\n" + credentials.user + "\n" + credentials.password
            text += " credentials=" + SHA256.hex(identity.utf8)
        }
        for name in varying.map({ $0.lowercased() }).sorted() {
            let values = request.headers.values(for: name).joined(separator: ",")
            text += " \(name)=" + SHA256.hex(values.utf8)
        }
        self.init(rawValue: text)
    }

    /// Lower-cases scheme and host, drops a default port and the fragment, sorts query items.
    static func normalize(_ url: URL) -> String {
        let text = url.absoluteString
        return normalizeSimple(text) ?? normalizeWithComponents(url)
    }

    /// The same normalization by hand, for the common shape `scheme://host[:port][/path][?query]`
    /// with a plain host: `URLComponents` costs several times more. `nil` for anything else
    /// (user info, IP literals, percent-encoded or unusual hosts, empty query items), which
    /// `normalizeWithComponents` handles.
    static func normalizeSimple(_ text: String) -> String? {
        // Scanned as UTF-8 bytes: Character-based searching would cost more than it saves.
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = text[..<colon]
        var rest = text[colon...].utf8.dropFirst()
        guard rest.starts(with: "//".utf8), !scheme.isEmpty,
            scheme.utf8.allSatisfy({
                isAlphanumeric($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            })
        else { return nil }
        rest = rest.dropFirst(2)
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        var query: Substring.UTF8View?
        if let mark = rest.firstIndex(of: UInt8(ascii: "?")) {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        let slash = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        let authority = rest[..<slash]
        let path = Substring(rest[slash...])
        var host = authority
        var port: Substring.UTF8View?
        if let portColon = authority.firstIndex(of: UInt8(ascii: ":")) {
            host = authority[..<portColon]
            port = authority[authority.index(after: portColon)...]
        }
        guard !host.isEmpty,
            host.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") })
        else { return nil }
        if let port {
            guard !port.isEmpty, port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                port.first != UInt8(ascii: "0")
            else { return nil }
        }
        let lowerScheme = scheme.lowercased()
        var result = lowerScheme
        result += "://"
        result += Substring(host).lowercased()
        if let port {
            let portText = Substring(port)
            if !((lowerScheme == "http" && portText == "80") || (lowerScheme == "https" && portText == "443")) {
                result += ":"
                result += portText
            }
        }
        result += path.isEmpty ? "/" : path
        if let query {
            guard !query.isEmpty else { return nil }
            var items: [(name: String, value: String?)] = []
            for item in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
                guard !item.isEmpty else { return nil }
                if let equals = item.firstIndex(of: UInt8(ascii: "=")) {
                    items.append(
                        (String(Substring(item[..<equals])), String(Substring(item[item.index(after: equals)...]))))
                } else {
                    items.append((String(Substring(item)), nil))
                }
            }
            // The same comparison, on the same order, as the URLComponents path: equal keys end up alike.
            let sorted = items.sorted { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
            result += "?"
            for (index, item) in sorted.enumerated() {
                if index > 0 { result += "&" }
                result += item.name
                if let value = item.value {
                    result += "="
                    result += value
                }
            }
        }
        return result
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    /// The normalization through `URLComponents`, for every URL.
    static func normalizeWithComponents(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if (components.scheme == "http" && components.port == 80)
            || (components.scheme == "https" && components.port == 443)
        {
            components.port = nil
        }
        components.fragment = nil
        if let items = components.percentEncodedQueryItems, !items.isEmpty {
            components.percentEncodedQueryItems = items.sorted {
                ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "")
            }
        }
        if components.path.isEmpty { components.path = "/" }
        return components.string ?? url.absoluteString
    }
}
