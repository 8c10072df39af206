internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The proxy's part of a transfer, HTTP exchange or WebSocket alike: what a failure it explains means, and how the
/// easy handle is pointed at it (`configure`, beside the transfer's other options in CurlTransfer.swift).
enum CurlProxy {
    /// The error for a failure the proxy explains; `nil` for any other failure.
    /// - Parameters:
    ///   - code: The transfer's `CURLcode`.
    ///   - route: The proxy the request went through (`CurlProxyRoute`), without credentials; `nil` when direct.
    ///   - url: The request's URL.
    static func failure(_ code: CURLcode, easy: CurlEasyHandle, route: String?, url: URL) -> ServerAPIError? {
        guard let proxy = route else { return nil }
        let underlying = CurlError(
            code: Int(code.rawValue), summary: String(cString: curl_easy_strerror(code)), detail: easy.errorMessage)
        let reason = underlying.detail ?? underlying.summary
        if CurlProxyRoute.isSOCKS(proxy) {
            let port = url.port ?? (url.scheme == "https" ? 443 : 80)
            let target = "\(url.host ?? "the server"):\(port)"
            return socksFailure(
                code: Int(code.rawValue), proxyCode: easy.long(CURLINFO_PROXY_ERROR) ?? 0, proxy: proxy,
                target: target, underlying: underlying)
        }
        // The status of the proxy's answer to CONNECT, for requests through a tunnel.
        let connectStatus = easy.long(CURLINFO_HTTP_CONNECTCODE) ?? 0
        if connectStatus == 407 { return proxyRefused(proxy, status: 407, underlying: underlying) }
        if connectStatus >= 300 {
            return ServerAPIError(
                .cannotConnect,
                "the proxy \(proxy) could not open a tunnel to \(url.host ?? "the server"): it answered "
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

    /// The error for a SOCKS proxy refusing the credentials: of the kind and status an HTTP proxy's 407
    /// gets (`proxyRefused(_:status:underlying:)`), so a caller tells a refused proxy login the same way
    /// for both families of proxy.
    static func socksRefused(_ proxy: String, _ why: String, underlying: any Error) -> ServerAPIError {
        ServerAPIError(
            .httpStatus, "the SOCKS proxy \(proxy) \(why): the proxy credentials are missing or wrong",
            status: 407, underlying: underlying)
    }

    /// The error for a failed transfer through the SOCKS proxy `proxy`, from libcurl's `CURLcode` and, for
    /// `CURLE_PROXY` (97), its `CURLINFO_PROXY_ERROR` (a `CURLproxycode`); `nil` when the proxy does not
    /// explain it. libcurl 7.88 and 8.14 report SOCKS failures alike (`CURLE_PROXY` and a proxy code), so
    /// the version is not consulted; a libcurl older than 7.73 reported them as `CURLE_COULDNT_CONNECT`
    /// with its message alone, which is read as a fallback.
    /// - Parameters:
    ///   - code: The `CURLcode`.
    ///   - proxyCode: The `CURLproxycode`, 0 when libcurl gave none.
    ///   - proxy: The proxy's URL, without credentials.
    ///   - target: The server's `host:port`, which the proxy was asked to connect to.
    ///   - underlying: libcurl's error.
    static func socksFailure(
        code: Int, proxyCode: Int, proxy: String, target: String, underlying: CurlError
    ) -> ServerAPIError? {
        let reason = underlying.detail ?? underlying.summary
        let socksVersion = proxy.hasPrefix("socks4") ? "SOCKS4" : "SOCKS5"
        func px(_ value: CURLproxycode) -> Int { Int(value.rawValue) }
        switch code {
        case Int(CURLE_COULDNT_RESOLVE_PROXY.rawValue):
            return ServerAPIError(
                .cannotConnect, "the SOCKS proxy \(proxy) could not be resolved (\(reason))", underlying: underlying)
        case Int(CURLE_COULDNT_CONNECT.rawValue):
            if reason.contains("rejected by the SOCKS5 server") {
                return socksRefused(proxy, "rejected the user name and password (\(reason))", underlying: underlying)
            }
            // libcurl connects only to the proxy: reaching the server is the proxy's business.
            return ServerAPIError(
                .cannotConnect, "could not connect to the SOCKS proxy \(proxy) (\(reason))", underlying: underlying)
        case Int(CURLE_PROXY.rawValue):
            break
        default:
            return nil
        }
        switch proxyCode {
        case px(CURLPX_USER_REJECTED):
            return socksRefused(proxy, "rejected the user name and password (\(reason))", underlying: underlying)
        case px(CURLPX_NO_AUTH):
            return socksRefused(
                proxy, "accepted none of the authentication methods offered (\(reason))", underlying: underlying)
        case px(CURLPX_IDENTD), px(CURLPX_IDENTD_DIFFER):
            return socksRefused(proxy, "refused the SOCKS4 user name (\(reason))", underlying: underlying)
        case px(CURLPX_CLOSED):
            // RFC 1929 lets a SOCKS5 server refuse credentials by closing the connection, and servers that
            // need credentials close it on a client that offers none: a close in the handshake is read as a
            // refusal, as a 407 would be.
            return socksRefused(
                proxy, "closed the connection during the \(socksVersion) handshake (\(reason))", underlying: underlying)
        case px(CURLPX_REPLY_HOST_UNREACHABLE), px(CURLPX_REPLY_NETWORK_UNREACHABLE),
            px(CURLPX_REPLY_CONNECTION_REFUSED), px(CURLPX_REPLY_TTL_EXPIRED), px(CURLPX_REPLY_GENERAL_SERVER_FAILURE),
            px(CURLPX_REPLY_NOT_ALLOWED), px(CURLPX_REQUEST_FAILED):
            return ServerAPIError(
                .cannotConnect, "the SOCKS proxy \(proxy) could not connect to \(target) (\(reason))",
                underlying: underlying)
        case px(CURLPX_RESOLVE_HOST):
            return ServerAPIError(
                .cannotConnect,
                "could not resolve the host of \(target) on this machine, as the proxy \(proxy) needs (it does not "
                    + "resolve names itself; socks5h:// or socks4a:// let the proxy resolve them) (\(reason))",
                underlying: underlying)
        case px(CURLPX_LONG_USER), px(CURLPX_LONG_PASSWD), px(CURLPX_LONG_HOSTNAME):
            return ServerAPIError(
                .invalidRequest, "the request cannot be sent through the SOCKS proxy \(proxy) (\(reason))",
                underlying: underlying)
        default:
            return ServerAPIError(
                .cannotConnect, "the \(socksVersion) handshake with the proxy \(proxy) failed (\(reason))",
                underlying: underlying)
        }
    }
}

/// Which proxy libcurl uses for a URL, worked out the way libcurl does, for error messages.
enum CurlProxyRoute {
    /// Whether a route `proxy(for:_:environment:)` returned is a SOCKS proxy.
    static func isSOCKS(_ route: String) -> Bool { route.lowercased().hasPrefix("socks") }

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
        guard
            let value = (names + ["all_proxy", "ALL_PROXY"]).lazy.compactMap({ environment[$0] }).first(where: {
                !$0.isEmpty
            })
        else { return nil }
        var rules = Proxy.environment
        rules.bypass = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "").split(separator: ",").map(String.init)
        guard !rules.bypasses(host) else { return nil }
        return (try? Proxy(value))?.url?.absoluteString ?? "from the environment"
    }
}
