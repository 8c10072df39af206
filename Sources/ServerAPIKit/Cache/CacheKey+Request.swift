import Foundation

extension CacheKey {
    /// The key of a request: method, normalized URL (scheme and host lower-cased, query items
    /// sorted), a SHA-256 digest of an in-memory body, and the values of the varying headers.
    ///
    /// Two requests that differ in any of these never share an entry, so two users whose
    /// `Authorization` is listed as varying never see each other's responses.
    /// - Parameters:
    ///   - request: The resolved request.
    ///   - varying: Names of request headers whose values are part of the key.
    public init(request: TransportRequest, varying: [String] = []) {
        var text = request.method.rawValue + " " + Self.normalize(request.url)
        switch request.body {
        case .empty: break
        case let body:
            if let bytes = body.inMemoryBytes {
                text += " body:" + SHA256.hex(bytes)
            } else {
                // A streamed body is identified by its files' paths and sizes, never read here.
                text += " body:" + body.segments.map { segment in
                    switch segment {
                    case .data(let data): SHA256.hex(data)
                    case .file(let url): "file:\(url.path):\((try? BodySource.fileSize(url)) ?? -1)"
                    }
                }.joined(separator: ",")
            }
        }
        for name in varying.map({ $0.lowercased() }).sorted() {
            let values = request.headers.values(for: name).joined(separator: ",")
            text += " \(name)=" + SHA256.hex(values.utf8)
        }
        self.init(rawValue: text)
    }

    /// Lower-cases scheme and host, drops a default port and the fragment, sorts query items.
    static func normalize(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if (components.scheme == "http" && components.port == 80) || (components.scheme == "https" && components.port == 443) {
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
