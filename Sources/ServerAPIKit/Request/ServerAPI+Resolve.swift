#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ServerAPI {
    /// The absolute URL this call goes to, with its query encoded.
    /// - Throws: `invalidRequest` when no valid http(s) URL can be made.
    public func resolvedURL() throws(ServerAPIError) -> URL {
        try resolvedTarget().url
    }

    /// The URL this call sends and the Unix socket it connects to: a `http+unix://` URL (as `url`, or as
    /// `host`) becomes a `http://localhost/…` URL and its socket; otherwise the socket is `unixSocketPath`.
    /// - Throws: `invalidRequest` when no valid http(s) URL can be made.
    package func resolvedTarget() throws(ServerAPIError) -> (url: URL, unixSocketPath: String?) {
        let resolved = try resolvedWire()
        return (resolved.url, resolved.socketPath ?? unixSocketPath)
    }

    /// What the call's wire group resolves to, made once per description: every send, attempt and copy of the
    /// same `ServerAPI` that did not change its URL parts reads the same resolution.
    package func resolvedWire() throws(ServerAPIError) -> ResolvedWire {
        try _wire.resolved { wire throws(ServerAPIError) in try wire.resolve() }
    }

    /// Resolves the call into what a transport sends: URL, headers with the body's
    /// content type, the body source and every limit.
    /// - Throws: `invalidRequest` for a bad URL, header or body.
    @inline(never)
    public func transportRequest(attempt: Int = 1) throws(ServerAPIError) -> TransportRequest {
        let resolved = try resolvedWire()
        let url = resolved.sentURL
        let socket = resolved.socketPath ?? unixSocketPath
        var headers = self.headers
        // User-info goes into the header it stands for, out of the URL (see `URLUserInfo`); credentials the
        // call gives itself win.
        if let authorization = resolved.authorization, credentials == nil, !headers.contains("Authorization") {
            headers.add(name: "Authorization", value: authorization)
        }
        do throws(ServerAPIError) {
            let (source, contentType) = try body.resolve()
            if let contentType, !headers.contains("Content-Type") {
                headers.add(name: "Content-Type", value: contentType)
            }
            // The transfer settings go as they are: a new limit needs no line here.
            var transfer = self.transfer
            transfer.unixSocketPath = socket
            var request = TransportRequest(
                id: id, url: url, method: method, headers: headers, body: source, transfer: transfer,
                attempt: attempt)
            request.credentials = credentials
            // Checked once here: the transport sends a prepared request without checking it again. The URL and
            // the method were checked with the resolution, unless the user-info was taken out of the URL since.
            if resolved.authorization != nil {
                try request.prepare()
            } else {
                try request.prepare(resolvedMethodIsToken: resolved.methodIsToken)
            }
            return request
        } catch {
            throw error.with(requestID: id, url: url)
        }
    }

    /// Whether the text contains `://`. A byte search: Foundation's `contains` costs a bridge per call.
    fileprivate static func hasScheme(_ text: String) -> Bool {
        var matched = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: matched == 0 ? ":" : "/") {
                matched += 1
                if matched == 3 { return true }
            } else {
                matched = byte == UInt8(ascii: ":") ? 1 : 0
            }
        }
        return false
    }

    /// The text without leading and trailing spaces and tabs in Unicode's sense (`CharacterSet.whitespaces`);
    /// a host rarely has any, so its scalars are looked at only when the first or last byte may be one.
    fileprivate static func trimmingWhitespace(_ text: String) -> String {
        guard let first = text.utf8.first, let last = text.utf8.last else { return text }
        func plain(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x80 }
        return plain(first) && plain(last) ? text : String(HTTPSyntax.trimming(text, HTTPSyntax.isSpace))
    }

    fileprivate static func splitQuery(_ path: String) -> (String, String?) {
        guard let mark = path.firstIndex(of: "?") else { return (path, nil) }
        return (String(path[..<mark]), String(path[path.index(after: mark)...]))
    }
}

/// What a call's URL parts (`host`, `path`, `url`, `query`) resolve to.
package struct ResolvedWire: Sendable {
    /// The absolute http(s) URL with its query encoded, user-info still in it (`ServerAPI.resolvedURL()`).
    package var url: URL
    /// The Unix socket a `http+unix://` URL names; `nil` for any other URL.
    package var socketPath: String?
    /// `url` without its user-info: what the transport sends.
    package var sentURL: URL
    /// The `Authorization` value the user-info stands for (`Basic …`), when the URL has user-info.
    package var authorization: String?
    /// Whether the group's method is an HTTP token (`TransportRequest.prepare(resolvedMethodIsToken:)`).
    package var methodIsToken: Bool
}

extension ServerAPI.Wire {
    /// Resolves the URL parts: the `http+unix://` socket split off, the query encoded, the user-info split off.
    /// - Throws: `invalidRequest` when no valid http(s) URL can be made.
    fileprivate func resolve() throws(ServerAPIError) -> ResolvedWire {
        // Most hosts have no "+": the byte check keeps Foundation's string search off every call's path.
        let namesSocket = host.utf8.contains(UInt8(ascii: "+")) && host.lowercased().contains("+unix://")
        let unixURL = url ?? (namesSocket ? URL(string: host) : nil)
        var wire = self
        var socketPath: String?
        if let unixURL, let split = UnixSocket.split(unixURL) {
            if url == nil {
                // The host names the socket; the path is the call's.
                wire.host = split.url.absoluteString
            } else {
                wire.url = split.url
            }
            socketPath = split.socketPath
        }
        let url = try wire.networkURL()
        let userInfo = URLUserInfo.split(url)
        return ResolvedWire(
            url: url, socketPath: socketPath, sentURL: userInfo?.url ?? url, authorization: userInfo?.authorization,
            methodIsToken: HTTPMethod.isToken(method))
    }

    fileprivate func networkURL() throws(ServerAPIError) -> URL {
        // A full URL without extra query items is already what the transport sends: parsing its
        // text again would make the same URL, at a cost on every call.
        if let url, query.isEmpty, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false
        {
            return url
        }
        var base: String
        if let url {
            base = url.absoluteString
        } else if ServerAPI.hasScheme(path) {
            base = path
        } else {
            let trimmedHost = ServerAPI.trimmingWhitespace(host)
            guard !trimmedHost.isEmpty else {
                throw ServerAPIError(.invalidRequest, "the call has neither a host nor a URL")
            }
            var root = ServerAPI.hasScheme(trimmedHost) ? trimmedHost : "https://" + trimmedHost
            while root.hasSuffix("/") { root.removeLast() }
            var tail = Substring(path)
            while tail.hasPrefix("/") { tail.removeFirst() }
            let (pathPart, queryPart) = ServerAPI.splitQuery(String(tail))
            base = tail.isEmpty ? root : root + "/" + PercentEncoding.encodePath(pathPart)
            if let queryPart { base += "?" + queryPart }
        }
        if !query.isEmpty {
            let encoded = query.map { item in
                let name = PercentEncoding.encode(item.name)
                return item.value.map { "\(name)=\(PercentEncoding.encode($0))" } ?? name
            }.joined(separator: "&")
            if let hash = base.firstIndex(of: "#") { base = String(base[..<hash]) }
            base += base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
            base += encoded
        }
        // The text as written: its escapes kept, only what a URL may not contain escaped (see `PercentEncoding`).
        guard let resolved = URL(string: PercentEncoding.encodeURL(base)), let scheme = resolved.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = resolved.host, !host.isEmpty
        else {
            throw ServerAPIError(.invalidRequest, "\"\(base)\" is not a valid http(s) URL")
        }
        return resolved
    }
}
