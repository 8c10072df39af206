import Foundation
import ServerAPIKit

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

// What FoundationNetworking (swift-corelibs-foundation on Linux, libcurl inside) does with proxies,
// measured with Swift 6.3 and libcurl 7.88 against the forwarding proxy fixture:
// - `URLSessionConfiguration.connectionProxyDictionary` is stored and ignored: requests go directly.
// - The environment is honoured, because libcurl reads it and FoundationNetworking never sets
//   CURLOPT_PROXY: `http_proxy` (lower case only), `https_proxy`/`HTTPS_PROXY`, `all_proxy`, and
//   `no_proxy` to bypass. There is no way to turn that off for one session.
// So on Linux this transport can honour `Proxy.environment` (it is what happens anyway) and must refuse
// an explicit proxy, rather than send the requests around it.

extension URLSessionTransport {
    /// Creates a transport that sends its requests through `proxy`, or refuses to be created when it
    /// cannot.
    ///
    /// - On Linux, FoundationNetworking ignores `connectionProxyDictionary` but follows the proxy
    ///   environment variables (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`) whatever you do:
    ///   `Proxy.environment` and `nil` are accepted, an explicit proxy is refused. Use `CurlTransport`
    ///   for an explicit proxy on Linux.
    /// - On Apple platforms an explicit HTTP(S) proxy without credentials is set through
    ///   `connectionProxyDictionary` (with `bypass` as its exceptions list); credentials are refused.
    /// - A SOCKS proxy (`socks5h://`, `socks5://`, `socks4a://`, `socks4://`) is refused on every platform:
    ///   FoundationNetworking has no SOCKS setting, and Apple's dictionary cannot say whether the proxy or
    ///   the device resolves host names. Use `CurlTransport` for a SOCKS proxy.
    ///
    /// - Parameters:
    ///   - configuration: The session's settings.
    ///   - proxy: The proxy; `nil` sends requests the way the platform does by default.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` when this platform's URLSession cannot honour
    ///   `proxy`: the transport never silently connects around a proxy it was given.
    public convenience init(configuration: Configuration = Configuration(), proxy: Proxy?) throws(ServerAPIError) {
        _ = try Self.proxyDictionary(for: proxy)
        var configuration = configuration
        configuration.proxy = proxy
        self.init(configuration: configuration)
    }

    /// The `connectionProxyDictionary` for `proxy`, `nil` to leave the session's default, or an error
    /// when this platform cannot honour it.
    static func proxyDictionary(for proxy: Proxy?) throws(ServerAPIError) -> [AnyHashable: Any]? {
        guard let proxy, let url = proxy.url, let host = url.host else { return nil }
        guard !proxy.isSOCKS else {
            throw ServerAPIError(
                .invalidRequest,
                "URLSessionTransport does not support SOCKS proxies (\(proxy)): use CurlTransport for a SOCKS proxy")
        }
        #if canImport(FoundationNetworking)
            throw ServerAPIError(
                .invalidRequest,
                "URLSessionTransport cannot use the proxy \(proxy) on Linux: FoundationNetworking ignores "
                    + "URLSessionConfiguration.connectionProxyDictionary and would connect directly. Use "
                    + "CurlTransport, or Proxy.environment with http_proxy/https_proxy set")
        #else
            guard proxy.credentials == nil else {
                throw ServerAPIError(
                    .invalidRequest,
                    "URLSessionTransport cannot send proxy credentials (\(proxy)); use CurlTransport for a proxy "
                        + "that needs them")
            }
            let port = url.port ?? (url.scheme == "https" ? 443 : 80)
            return [
                "HTTPEnable": 1, "HTTPProxy": host, "HTTPPort": port,
                "HTTPSEnable": 1, "HTTPSProxy": host, "HTTPSPort": port,
                "ExceptionsList": proxy.bypass,
            ]
        #endif
    }
}
