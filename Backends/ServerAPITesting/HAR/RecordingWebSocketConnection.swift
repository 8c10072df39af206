import Foundation
@_spi(Backend) @_spi(Transport) import ServerAPIKit

/// A transport's WebSocket connection that writes what goes through it into its handshake's entry: every data
/// message both ways, whole, as it goes, and how the connection ended.
///
/// A message the client sends is recorded before it is handed to the transport, so an answer is never recorded
/// before the message it answers; a received one when the transport hands it over. Fragments are recorded as the
/// message they make; pings and pongs are not recorded; the first close frame either way (or a connection that
/// ends without one) is the entry's `webSocketClose`, and the other side's close frame in reply its `answer`.
///
/// A connection that agreed on permessage-deflate carries compressed messages: each direction is inflated here, as
/// the core inflates what it receives, so that the entry holds the messages as the application saw them (a replay
/// then plays them uncompressed, which permessage-deflate allows).
///
/// The entry is updated in memory as messages go. The file is written when the end is received (the server's
/// close frame or its answer, the end of the connection, its failure), where a file that cannot be written fails
/// the connection with `fileSystem`; and again, with everything, when the core tears the connection down.
final class RecordingWebSocketConnection: WebSocketConnection {
    private struct State {
        var sent = WebSocketMessageAssembler(maxMessageSize: .max)
        var received = WebSocketMessageAssembler(maxMessageSize: .max)
        /// Each direction's inflater: a window of 15 reads whatever window the agreement gave either side.
        var sentInflater: WebSocketDeflateReceiver
        var receivedInflater: WebSocketDeflateReceiver
        /// Who ended the connection first, once recorded.
        var closedBy: HARArchive.RecordedMessage.Direction?
        var answered = false
    }

    private let upstream: any WebSocketConnection
    private let recorder: HARRecorder
    private let index: Int
    private let redaction: HARRedaction
    private let secrets: [String]
    private let now: @Sendable () -> Date
    private let state: Locked<State>

    /// Records `upstream`'s traffic into the entry at `index` of `recorder`.
    /// - Parameters:
    ///   - upstream: The transport's connection.
    ///   - recorder: Where the handshake's entry is.
    ///   - index: The entry's index.
    ///   - redaction: What to replace in text messages.
    ///   - secrets: The handshake's secrets, removed from text messages wherever they appear.
    ///   - now: The wall clock for the messages' times.
    ///   - compressed: Whether the handshake agreed on permessage-deflate.
    init(
        upstream: any WebSocketConnection, recorder: HARRecorder, index: Int, redaction: HARRedaction,
        secrets: [String], now: @escaping @Sendable () -> Date, compressed: Bool
    ) {
        let window = compressed ? 15 : nil
        state = Locked(
            State(
                sentInflater: WebSocketDeflateReceiver(windowBits: window, maxMessageSize: .max),
                receivedInflater: WebSocketDeflateReceiver(windowBits: window, maxMessageSize: .max)))
        self.upstream = upstream
        self.recorder = recorder
        self.index = index
        self.redaction = redaction
        self.secrets = secrets
        self.now = now
    }

    func send(_ frame: WebSocketFrame) async throws {
        record(frame, .send)
        try await upstream.send(frame)
    }

    func receive() async throws -> WebSocketFrame? {
        let frame: WebSocketFrame?
        do {
            frame = try await upstream.receive()
        } catch {
            var recorded = HARArchive.RecordedError(ServerAPIError.wrap(error))
            recorded.message = redaction.scrub(redaction.redact(text: recorded.message), secrets: secrets)
            end(HARArchive.RecordedClose(type: .receive, time: time(), dropped: true, error: recorded))
            try recorder.write()
            throw error
        }
        guard let frame else {
            end(HARArchive.RecordedClose(type: .receive, time: time(), dropped: true))
            try recorder.write()
            return nil
        }
        record(frame, .receive)
        // The server's close frame ends the session (the client's answer to it, if any, is in `close()`'s write).
        if frame.opcode == .close { try recorder.write() }
        return frame
    }

    /// Tears the connection down, and writes the file once more with everything: the core calls it whenever a
    /// connection ends.
    func close() {
        upstream.close()
        // Torn down without a close frame either way (a cancelled call whose close frame could not go out).
        end(HARArchive.RecordedClose(type: .send, time: time(), dropped: true))
        // Nobody to tell if this write fails (the write when the end was received did tell): the entry is in the
        // archive, and the next exchange writes it.
        try? recorder.write()
    }

    /// Records a data message when `frame` completes one, and the first close frame either way.
    private func record(_ frame: WebSocketFrame, _ direction: HARArchive.RecordedMessage.Direction) {
        let event = state.withLock { state -> WebSocketMessageAssembler.Event? in
            let inflated =
                direction == .send ? state.sentInflater.receive(frame) : state.receivedInflater.receive(frame)
            // A frame that does not inflate fails the connection in the core, and its close is recorded.
            guard case .success(let frame) = inflated else { return nil }
            return direction == .send ? state.sent.receive(frame) : state.received.receive(frame)
        }
        switch event {
        case .message(let message)?:
            var record = HARArchive.RecordedMessage(message, type: direction, time: time())
            if case .text(let text) = message { record.data = redaction.redact(message: text, secrets: secrets) }
            recorder.update(index) { $0.webSocketMessages?.append(record) }
        case .close(let code, let reason)?:
            let code = code.map { Int($0.rawValue) }
            let reason = redaction.scrub(reason, secrets: secrets)
            if !end(HARArchive.RecordedClose(type: direction, time: time(), code: code, reason: reason)) {
                answer(HARArchive.RecordedClose.Answer(code: code, reason: reason), from: direction)
            }
        default:
            // Fragments, pings and pongs; a frame that breaks the rules fails the connection, and its close is
            // recorded.
            break
        }
    }

    /// Records how the connection ended, once; `false` when it was already recorded.
    @discardableResult
    private func end(_ close: HARArchive.RecordedClose) -> Bool {
        let first = state.withLock { state in
            guard state.closedBy == nil else { return false }
            state.closedBy = close.type
            return true
        }
        if first { recorder.update(index) { $0.webSocketClose = close } }
        return first
    }

    /// Records the close frame that answers the first one, once, when it comes from the other side.
    private func answer(_ answer: HARArchive.RecordedClose.Answer, from direction: HARArchive.RecordedMessage.Direction)
    {
        let first = state.withLock { state in
            guard let closedBy = state.closedBy, closedBy != direction, !state.answered else { return false }
            state.answered = true
            return true
        }
        if first { recorder.update(index) { $0.webSocketClose?.answer = answer } }
    }

    private func time() -> Double { now().timeIntervalSince1970 }
}
