internal import CCurl
@_spi(Transport) import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CurlTransport {
    /// Whether this transport can open WebSockets here: on Linux, with any libcurl it supports (7.81 and later).
    ///
    /// A WebSocket is a connection on one of the transport's loops: libcurl connects it (`CURLOPT_CONNECT_ONLY`,
    /// with the transport's proxy, TLS and host settings) and moves its bytes (`curl_easy_send`, `curl_easy_recv`),
    /// and the core writes the handshake and the frames, so libcurl's own WebSocket support is not needed. The
    /// loops watch WebSockets in an epoll set: other systems have none yet.
    public static var supportsWebSockets: Bool { webSocketSupport == nil }

    /// `nil` when WebSockets work, else why not, as the message of the `unsupported` error.
    static let webSocketSupport: String? = {
        #if os(Linux)
            nil
        #else
            "CurlTransport runs WebSockets on Linux only (its loops watch them with epoll)"
        #endif
    }()

    /// Opens a WebSocket on one of the transport's loops (see `CurlWebSocket`).
    ///
    /// A refused upgrade comes back with its status, headers and the start of its body. The configuration's proxy
    /// is used: a SOCKS proxy as for any request, an HTTP one through a `CONNECT` tunnel (a forwarding proxy would
    /// not pass the upgrade on). The request's timeout bounds the handshake; cancelling the calling task ends it.
    public func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade {
        if let reason = Self.webSocketSupport {
            throw ServerAPIError(.unsupported, reason, requestID: request.id, url: request.url)
        }
        if request.isCancelled { throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url) }
        let loop = webSocketLoop()
        let id = CurlJob.nextID()
        let socket = CurlWebSocket(id: id, loop: loop, owner: self)
        let response = try await request.withCancellationHandler {
            try await withCurlContinuation { continuation in
                loop.submit(CurlJob(id: id, request: request, continuation: continuation, webSocket: socket))
            }
        } onCancel: {
            loop.cancel(id)
        }
        return WebSocketUpgrade(response: response, connection: response.status == 101 ? socket : nil)
    }
}
