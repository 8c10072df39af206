internal import CCurl
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ServerAPIKit

extension CurlTransfer {
    /// Points the easy handle at the configured proxy, or connects directly.
    func configureProxy() throws(ServerAPIError) {
        guard let proxy = settings.proxy else {
            // Connect directly: libcurl would otherwise pick a proxy from http_proxy/https_proxy in the
            // environment, which no other transport does.
            try easy.set(CURLOPT_PROXY, "")
            return
        }
        // Proxy.environment: no CURLOPT_PROXY or CURLOPT_NOPROXY, so libcurl reads the variables itself.
        guard let url = proxy.url else { return }
        try easy.set(CURLOPT_PROXY, url.absoluteString)
        // Set even when empty: an explicit proxy is not bypassed by the environment's no_proxy.
        try easy.set(CURLOPT_NOPROXY, proxy.bypass.joined(separator: ","))
        if let credentials = proxy.credentials {
            // Separate options rather than CURLOPT_PROXYUSERPWD, so a ':' in the user name is kept.
            try easy.set(CURLOPT_PROXYUSERNAME, credentials.user)
            try easy.set(CURLOPT_PROXYPASSWORD, credentials.password)
        }
        if url.scheme == "https" {
            // An https:// proxy is verified like a server: with the transport's extra CA file, and not
            // at all only when its host is listed as insecure.
            if let caFile = settings.caFile { try easy.set(CURLOPT_PROXY_CAINFO, caFile) }
            if let host = url.host?.lowercased(), settings.insecureHosts.contains(host) {
                try easy.set(CURLOPT_PROXY_SSL_VERIFYPEER, false)
                try easy.set(CURLOPT_PROXY_SSL_VERIFYHOST, 0)
            }
        }
    }

    /// The proxy the current request goes through (its URL, without credentials); `nil` when direct.
    var proxyRoute: String? {
        guard let proxy = settings.proxy else { return nil }
        return CurlProxyRoute.proxy(for: request.url, proxy)
    }

    /// The error for a failure the proxy or the stall limit explains; `nil` for any other failure.
    func proxyOrStallFailure(_ code: CURLcode) -> ServerAPIError? {
        let detail = easy.errorMessage
        let underlying = CurlError(
            code: Int(code.rawValue), summary: String(cString: curl_easy_strerror(code)), detail: detail)
        let reason = detail ?? underlying.summary
        if code == CURLE_OPERATION_TIMEDOUT, let stall = stallTimeout,
            detail?.lowercased().contains("too slow") == true
        {
            // libcurl reports both timeouts with one code; only the stall check says "Operation too slow".
            var error = stall.error(underlying: underlying)
            if status > 0 { error.status = status }
            return error
        }
        guard let proxy = proxyRoute else { return nil }
        // The status of the proxy's answer to CONNECT, for https:// requests through a tunnel.
        let connectStatus = easy.long(CURLINFO_HTTP_CONNECTCODE) ?? 0
        if connectStatus == 407 { return Self.proxyRefused(proxy, status: 407, underlying: underlying) }
        if connectStatus >= 300 {
            return ServerAPIError(
                .cannotConnect,
                "the proxy \(proxy) could not open a tunnel to \(request.url.host ?? "the server"): it answered "
                    + "\(connectStatus) \(HTTPStatus.reason(connectStatus)) (\(reason))",
                status: connectStatus, underlying: underlying)
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_PROXY:
            return ServerAPIError(
                .cannotConnect, "the proxy \(proxy) could not be resolved (\(reason))", underlying: underlying)
        case CURLE_COULDNT_CONNECT:
            // Through a proxy, libcurl only ever connects to the proxy: the server is the proxy's business.
            return ServerAPIError(
                .cannotConnect, "could not connect to the proxy \(proxy) (\(reason))", underlying: underlying)
        default:
            return nil
        }
    }

    /// The error for a 407 from the proxy: its credentials are missing or wrong.
    static func proxyRefused(_ proxy: String, status: Int, underlying: (any Error)? = nil) -> ServerAPIError {
        ServerAPIError(
            .httpStatus,
            "the proxy \(proxy) answered 407 Proxy Authentication Required: the proxy credentials are missing or wrong",
            status: status, underlying: underlying)
    }
}

/// Which proxy libcurl uses for a URL, worked out the way libcurl does, for error messages.
enum CurlProxyRoute {
    /// The proxy's URL (without credentials) for a request to `url`, or `nil` when it goes directly.
    static func proxy(
        for url: URL, _ proxy: Proxy, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        let host = url.host ?? ""
        if let server = proxy.url {
            return proxy.bypasses(host) ? nil : server.absoluteString
        }
        // libcurl reads only the lower-case http_proxy (HTTP_PROXY can be set by a CGI request's Proxy header).
        let names = url.scheme?.lowercased() == "https" ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]
        guard let value = (names + ["all_proxy", "ALL_PROXY"]).lazy.compactMap({ environment[$0] }).first(where: {
            !$0.isEmpty
        }) else { return nil }
        var rules = Proxy.environment
        rules.bypass = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "").split(separator: ",").map(String.init)
        guard !rules.bypasses(host) else { return nil }
        return (try? Proxy(value))?.url?.absoluteString ?? "from the environment"
    }
}
