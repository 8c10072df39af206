internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CurlTransport {
    /// Whether the libcurl this process loaded can open WebSockets: 8.11 or later, built with the `ws` and
    /// `wss` protocols, with `curl_ws_send`.
    ///
    /// 8.11 is where libcurl's WebSocket API stopped being experimental; earlier builds that have it at all (7.86 to
    /// 8.10, built with `--enable-websockets`) are refused, because their raw mode's sending rules changed since.
    public static var supportsWebSockets: Bool { webSocketSupport == nil }

    /// `nil` when WebSockets work, else why not, as the message of the `unsupported` error.
    static let webSocketSupport: String? = {
        let version = libcurlVersion
        let numbers = version.split(separator: ".").prefix(2).map { Int($0) ?? 0 }
        let official = numbers.count == 2 && (numbers[0], numbers[1]) >= (8, 11)
        guard official else { return "this libcurl (\(version)) has no WebSockets; 8.11 or later does" }
        var protocols = Set<String>()
        if let info = curl_version_info(CURLVERSION_FOURTH), var list = info.pointee.protocols {
            while let name = list.pointee {
                protocols.insert(String(cString: name).lowercased())
                list += 1
            }
        }
        guard protocols.contains("ws"), protocols.contains("wss") || !protocols.contains("https") else {
            return "this libcurl (\(version)) was built without WebSockets"
        }
        guard ccurl_ws_send_symbol() != nil else { return "this libcurl (\(version)) has no curl_ws_send" }
        return nil
    }()

    /// Opens a WebSocket over libcurl's WebSocket support in raw mode (see `CurlWebSocketSession`).
    ///
    /// Throws `unsupported` on a libcurl without WebSockets: "this libcurl (7.88.1) has no WebSockets; 8.11 or
    /// later does". A refused upgrade comes back with its status and headers; libcurl ends the transfer at the
    /// head, so its body is not read. The configuration's proxy is used: a SOCKS proxy as for any request, an HTTP
    /// one through a `CONNECT` tunnel (a proxy forwarding requests would not pass the upgrade on).
    public func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade {
        if let reason = Self.webSocketSupport {
            throw ServerAPIError(.unsupported, reason, requestID: request.id, url: request.url)
        }
        if request.isCancelled { throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url) }
        let configuration = self.configuration
        let session = CurlWebSocketSession(
            request: request,
            settings: CurlWebSocketSettings(
                proxy: configuration.proxy, connectTimeout: configuration.connectTimeout,
                caFile: configuration.additionalTrustedCAFile?.path,
                insecureHosts: Set(configuration.insecureHosts.map { $0.lowercased() }),
                resolve: configuration.resolve.map(\.curlEntry), tls: configuration.tls))
        do {
            return try await request.withCancellationHandler {
                try await withCheckedThrowingContinuation { session.start($0, threads: threads) }
            } onCancel: {
                session.close()
            }
        } catch {
            throw ServerAPIError.wrap(error).with(requestID: request.id, url: request.url)
        }
    }
}
