import Foundation
@_spi(Transport) import ServerAPIKit

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

extension URLSessionTransport {
    /// Opens a WebSocket over a `URLSessionWebSocketTask` (see `URLSessionWebSocket` for how frames map onto it).
    ///
    /// Throws `unsupported` where URLSession has no WebSockets: on Linux, FoundationNetworking opens them only when it
    /// was built against a libcurl with WebSockets, and the Swift toolchains for Debian 12 and Ubuntu 22.04 and 24.04
    /// were not (their FoundationNetworking refuses a `ws` URL whatever libcurl is loaded). A refused upgrade comes
    /// back with its status and headers; URLSession does not hand over its body.
    ///
    /// - Important: URLSession runs the protocol itself, so the core's checks see messages, not frames: pings,
    ///   pongs and the close handshake are URLSession's, and a close code other than those `CloseCode` names is
    ///   sent as 1000 on Linux. Use `CurlTransport` for the whole protocol.
    public func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade {
        do throws(ServerAPIError) {
            if isShuttingDown { throw Self.shutDownRefusal }
            if request.unixSocketPath != nil {
                throw ServerAPIError(
                    .invalidRequest, "URLSession cannot connect to a Unix-domain socket: use the curl transport")
            }
            if let credentials = request.credentials { throw Self.refusal(credentials) }
        } catch {
            throw error.with(requestID: request.id, url: request.url)
        }
        if request.isCancelled { throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url) }
        let socket = URLSessionWebSocket(request: request, transport: self)
        do {
            return try await request.withCancellationHandler {
                try await withCheckedThrowingContinuation { socket.start($0) }
            } onCancel: {
                socket.close()
            }
        } catch {
            throw ServerAPIError.wrap(error).with(requestID: request.id, url: request.url)
        }
    }

    /// Why this URLSession cannot open a WebSocket: FoundationNetworking refused the `ws` URL.
    static let webSocketRefusal = ServerAPIError(
        .unsupported,
        "this URLSession has no WebSockets: FoundationNetworking was built against a libcurl without them; "
            + "CurlTransport has them")
}
