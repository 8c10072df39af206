import Foundation
@_spi(Backend) @_spi(Transport) import ServerAPIKit

/// The client's side of a replayed WebSocket: the recorded server's messages, each released once the client has
/// sent the messages recorded before it, then the recorded end.
///
/// The recorded session is a script: a received message is delivered as soon as every client message recorded
/// before it has been sent (so a request and its answer replay in order, and messages the server sent on its own
/// arrive at once); a client message is compared with the next one the client sent in the recording, after the
/// recording's redaction. One that differs, or one more than the recording has, is not recorded: `send` throws
/// `notRecorded` and the replayed server closes the connection with 1008. Pings are answered; the client's close
/// frame is answered as the server answered it in the recording (else its code is echoed, as a server does).
///
/// A recording holds the messages as the application saw them, inflated. When the replayed handshake agrees on
/// permessage-deflate, the client's compressed messages are inflated before they are compared, and the recorded
/// server's messages go uncompressed (which permessage-deflate allows).
final class ReplayedWebSocketConnection: WebSocketConnection {
    private struct State {
        /// The script's next step.
        var next = 0
        /// How many messages the client has sent.
        var sent = 0
        var clientFrames = WebSocketMessageAssembler(maxMessageSize: .max)
        /// Inflates the client's compressed messages; passes frames through when compression was not agreed.
        var clientInflater: WebSocketDeflateReceiver
        /// Frames for the client, in order.
        var inbox: [WebSocketFrame] = []
        var reader: CheckedContinuation<WebSocketFrame?, any Error>?
        /// The replayed server sent its close frame (or dropped): it takes no more messages.
        var serverClosed = false
        /// No more frames come: `receive` returns `nil` (or throws `failure`) once `inbox` is empty.
        var ended = false
        var failure: ServerAPIError?
        /// `close()` ran: every call ends.
        var torn = false
    }

    private typealias Delivery = (
        CheckedContinuation<WebSocketFrame?, any Error>, Result<WebSocketFrame?, ServerAPIError>
    )

    private let script: WebSocketReplayScript
    private let request: TransportRequest
    private let redaction: HARRedaction
    private let secrets: [String]
    private let describing: String
    private let recordingAdvice: String
    private let state: Locked<State>

    /// Plays a recorded session.
    /// - Parameters:
    ///   - script: The session.
    ///   - request: The handshake as it was asked (its secrets are scrubbed from the client's text messages
    ///     before they are compared, as they were when the session was recorded).
    ///   - redaction: The recording's redaction.
    ///   - recordingAdvice: How to record the session again (`ReplayingTransport.RecordingAdvice.again`), for the
    ///     error of a client message the recording does not have.
    ///   - describing: The entry, for errors: "entry 2 of 3 in chat.har (GET ws://chat.test/room)".
    ///   - compressed: Whether the replayed handshake agreed on permessage-deflate.
    init(
        script: WebSocketReplayScript, request: TransportRequest, redaction: HARRedaction, recordingAdvice: String,
        describing: String, compressed: Bool
    ) {
        state = Locked(
            State(clientInflater: WebSocketDeflateReceiver(windowBits: compressed ? 15 : nil, maxMessageSize: .max)))
        self.script = script
        self.request = request
        self.redaction = redaction
        self.secrets = redaction.secrets(handshake: request)
        self.recordingAdvice = recordingAdvice
        self.describing = describing
        state.withLock { release(&$0) }
    }

    func send(_ frame: WebSocketFrame) async throws {
        let (outcome, delivery) = state.withLock { state -> (Result<Void, ServerAPIError>, Delivery?) in
            guard !state.torn else {
                return (.failure(ServerAPIError(.network, "the replayed WebSocket is closed")), nil)
            }
            let outcome = take(frame, &state)
            return (outcome, deliver(&state))
        }
        if let (reader, result) = delivery { reader.resume(with: result) }
        try outcome.get()
    }

    func receive() async throws -> WebSocketFrame? {
        try await withCheckedThrowingContinuation { (reader: CheckedContinuation<WebSocketFrame?, any Error>) in
            let answer = state.withLock { state -> Result<WebSocketFrame?, ServerAPIError>? in
                state.reader = reader
                return deliver(&state)?.1
            }
            if let answer { reader.resume(with: answer) }
        }
    }

    func close() {
        let reader = state.withLock { state in
            state.torn = true
            state.ended = true
            state.failure = nil
            state.inbox.removeAll()
            return state.reader.take()
        }
        reader?.resume(returning: nil)
    }

    /// The reader and what to resume it with, when one waits and there is an answer.
    private func deliver(_ state: inout State) -> Delivery? {
        guard let reader = state.reader else { return nil }
        if !state.inbox.isEmpty {
            state.reader = nil
            return (reader, .success(state.inbox.removeFirst()))
        }
        guard state.ended else { return nil }
        state.reader = nil
        return (reader, state.failure.map { .failure($0) } ?? .success(nil))
    }

    /// Queues the server's messages up to the next one the client sends; after the last step, the recorded end.
    private func release(_ state: inout State) {
        while state.next < script.steps.count, script.steps[state.next].direction == .receive {
            state.inbox.append(WebSocketFrame(script.steps[state.next].message))
            state.next += 1
        }
        guard state.next == script.steps.count, !state.serverClosed else { return }
        switch script.end {
        case .open:
            break
        case .close(let frame):
            state.inbox.append(frame.frame)
            state.serverClosed = true
        case .drop(let error):
            state.serverClosed = true
            state.ended = true
            state.failure = error?.serverAPIError(requestID: request.id, url: request.url)
        }
    }

    /// What a frame from the client does.
    private func take(_ frame: WebSocketFrame, _ state: inout State) -> Result<Void, ServerAPIError> {
        let inflated: WebSocketFrame
        switch state.clientInflater.receive(frame) {
        case .success(let frame): inflated = frame
        case .failure(let failure):
            state.sent += 1
            return mismatch("a frame that breaks the protocol (\(failure.message))", &state)
        }
        switch state.clientFrames.receive(inflated) {
        case nil, .pong?:
            return .success(())
        case .ping(let payload)?:
            if !state.ended { state.inbox.append(WebSocketFrame(.pong, payload: payload)) }
            return .success(())
        case .close(let code, _)?:
            // A server answers the client's close frame with its own (as it did in the recording, else echoing the
            // code), unless it closed first; then the connection ends.
            if !state.serverClosed {
                state.inbox.append(script.answer?.frame ?? .close(code))
                state.serverClosed = true
            }
            state.ended = true
            return .success(())
        case .fail(let failure)?:
            state.sent += 1
            return mismatch("a frame that breaks the protocol (\(failure.message))", &state)
        case .message(let message)?:
            // A server that closed takes no more messages.
            guard !state.serverClosed else { return .success(()) }
            state.sent += 1
            guard state.next < script.steps.count else {
                return mismatch(
                    "\(Self.describe(message)), where the recording has no more messages from the client", &state)
            }
            // Received steps are released as soon as they are due: the next step is the client's.
            let expected = script.steps[state.next].message
            guard comparable(message) == expected else {
                return mismatch("\(Self.describe(message)), where the recording has \(Self.describe(expected))", &state)
            }
            state.next += 1
            release(&state)
            return .success(())
        }
    }

    /// The client's message as the recording wrote it: a text message redacted.
    private func comparable(_ message: WebSocketMessage) -> WebSocketMessage {
        guard case .text(let text) = message else { return message }
        return .text(redaction.redact(message: text, secrets: secrets))
    }

    /// Closes with 1008 and returns the `notRecorded` error `send` throws.
    private func mismatch(_ what: String, _ state: inout State) -> Result<Void, ServerAPIError> {
        state.inbox.append(.close(.policyViolation, reason: "not recorded: message \(state.sent) differs"))
        state.serverClosed = true
        return .failure(
            ServerAPIError(
                .notRecorded,
                "the WebSocket of \(describing) did not record the client's message \(state.sent): it sent \(what). "
                    + "The replayed server closed the connection with 1008. Record the session again with "
                    + "\(recordingAdvice).",
                requestID: request.id, url: request.url))
    }

    /// A message in an error: text quoted (its start), binary by its size.
    static func describe(_ message: WebSocketMessage) -> String {
        switch message {
        case .text(let text):
            let shown = text.count > 60 ? text.prefix(60) + "…" : Substring(text)
            return "text \"\(shown)\""
        case .binary(let bytes):
            return "binary (\(bytes.count) bytes)"
        }
    }
}
