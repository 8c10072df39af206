import Foundation
import ServerAPIKit

extension ReplayingTransport {
    /// Answers a WebSocket handshake from the recorded entry that matches it (as any request is matched: a
    /// recorded `ws://` or `wss://` URL matches the handshake's `http://` or `https://` one), or in the record
    /// modes opens it through the upstream transport and records it.
    ///
    /// A recorded 101 opens a connection that plays the recorded session: each message the server sent arrives
    /// once the client has sent the messages recorded before it (a request and its answer replay in order; what
    /// the server sent on its own arrives at once), without the recorded delays. Each message the client sends
    /// must be the next one it sent in the recording (text compared after the recording's redaction): one that
    /// differs, or one more than the recording has, makes `send` throw `notRecorded` (the message says which
    /// message, what was sent and what was recorded) and the replayed server close the connection with 1008.
    /// When the recording ends, the connection ends as it did: a server's close frame with its code and reason, a
    /// dropped connection (with its recorded failure, if any); when the client closed first, or the recording
    /// has no end (a file saved while the socket was open, a browser's file), it stays open until the client
    /// closes it. The server's pings are not replayed; the client's are answered. A recorded refusal is the
    /// handshake's answer, with its status, headers and body; a recorded failure is thrown.
    /// - Parameter request: The handshake.
    /// - Returns: The recorded answer, or the upstream's in the record modes.
    /// - Throws: `notRecorded` when no entry matches in `.replay`; the recorded failure. (A binary message whose data
    ///   is not base64 was refused with the file, `decoding`.)
    public func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade {
        let (request, body) = try await prepare(request)
        guard let (entry, name) = try match(request, body: body) else {
            return try await upstreamRecording(request).webSocket(request)
        }
        return try ReplayedResponse(entry: entry, request: request, transport: self.name).webSocket(
            redaction: configuration.redaction, recordingAdvice: configuration.recordingAdvice.again,
            describing: "\(name) (\(entry.request.method) \(entry.request.url))")
    }
}
