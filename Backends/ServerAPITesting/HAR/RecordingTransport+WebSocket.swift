import Foundation
@_spi(Transport) import ServerAPIKit

extension RecordingTransport {
    /// Opens a WebSocket through the upstream transport and records it as one entry, as Chrome's DevTools export
    /// one: the handshake (the request, and the 101 or the refusal with its body), `_resourceType` "websocket",
    /// the URL as `ws://` or `wss://`, and the data messages both ways in `_webSocketMessages`.
    ///
    /// Each message is recorded whole (the frames of a fragmented one as the message they make) with its
    /// direction ("send", "receive"), its time in seconds since 1970, its opcode (1 text, 2 binary) and its data
    /// (the text, or the bytes in base64), inflated when the connection agreed on permessage-deflate (the messages
    /// as the application saw them); a message the client sends is recorded before it is handed to the
    /// upstream transport, so an answer never comes before its question in the file. Close, ping and pong frames
    /// are not messages: the first close frame either way (who sent it, its code and reason), or an end without
    /// one (and the failure, if the connection broke), is the entry's `_webSocketClose`.
    ///
    /// The entry is added to the archive (and the file written) when the handshake ends, then completed in place:
    /// the file is written again when the connection ends. A file written meanwhile (by another exchange) holds
    /// the messages so far and no `_webSocketClose`, which a replay treats as a connection left open. The handshake
    /// is redacted as any request is, and text messages lose the redaction's JSON fields and the handshake's
    /// secrets. A refused handshake is recorded with its status, headers and body; a failed one with its error;
    /// an `unsupported` error (a transport without WebSockets) is not recorded, as it is not the server's answer.
    /// - Parameter request: The handshake.
    /// - Returns: The upstream transport's answer, its connection recorded.
    /// - Throws: What the upstream transport throws, and `fileSystem` when the file cannot be written.
    public func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade {
        let (request, body) = try await Self.collectBody(request)
        let (upgrade, startedAt, start) = try await exchange(request, body: body, webSocket: true) {
            try await upstream.webSocket($0)
        }
        var entry = try wholeEntry(
            request, body: body, response: upgrade.response, startedAt: startedAt, start: start)
        entry.markAsWebSocket()
        guard let connection = upgrade.connection else {
            try recorder.append(entry)
            return upgrade
        }
        let index: Int
        do {
            index = try recorder.add(entry)
        } catch {
            connection.close()
            throw error
        }
        let recording = RecordingWebSocketConnection(
            upstream: connection, recorder: recorder, index: index, redaction: redaction,
            secrets: redaction.secrets(handshake: request), now: now,
            compressed: WebSocketDeflateNegotiation.answered(upgrade.response.headers) != nil)
        return WebSocketUpgrade(
            response: upgrade.response, connection: recording, handshakeVerified: upgrade.handshakeVerified)
    }
}
