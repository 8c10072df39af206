import Foundation
@_spi(Transport) import ServerAPIKit

/// A recorded WebSocket session as a replay plays it: the data messages both ways, in order, how it ended, and
/// how the server answered the client's close.
struct WebSocketReplayScript: Sendable, Hashable {
    /// One recorded message: which way it went, and what it was.
    struct Step: Sendable, Hashable {
        var direction: HARArchive.RecordedMessage.Direction
        var message: WebSocketMessage
    }

    /// A close frame's code (`nil`: none) and reason.
    struct CloseFrame: Sendable, Hashable {
        var code: WebSocketCloseCode?
        var reason: String

        init(code: Int?, reason: String) {
            self.code = code.flatMap { UInt16(exactly: $0) }.map { WebSocketCloseCode($0) }
            self.reason = reason
        }

        /// A browser's close row: the payload (two bytes of code, then the reason) in base64.
        init(browserData data: String) {
            let payload = HARArchive.base64Bytes(data) ?? Data()
            let start = payload.startIndex
            self.init(
                code: payload.count >= 2 ? Int(payload[start]) << 8 | Int(payload[start + 1]) : nil,
                reason: String(decoding: payload.dropFirst(2), as: UTF8.self))
        }

        var frame: WebSocketFrame { .close(code, reason: reason) }
    }

    /// What the replayed server does once every step is played.
    enum End: Sendable, Hashable {
        /// Nothing: the connection stays open until the client closes it (the client closed first, or the file
        /// was saved while the socket was open, or a browser's file says nothing of the close).
        case open
        /// It sends this close frame.
        case close(CloseFrame)
        /// The connection ends without a close frame: with this failure, or as a dropped connection.
        case drop(HARArchive.RecordedError?)
    }

    var steps: [Step]
    var end: End
    /// The close frame the server answered the client's with, when the client closed first and it was recorded;
    /// `nil`: the replayed server echoes the client's code.
    var answer: CloseFrame?

    /// The session an entry recorded: its `_webSocketMessages` (text and binary messages, in order; a browser's
    /// close frames, opcode 8, taken as the end when `_webSocketClose` is missing; other opcodes and "error" rows
    /// skipped) and its `_webSocketClose`.
    /// - Parameter describing: What to call the entry in errors.
    /// - Throws: `decoding` for a binary message whose data is not base64 (which `HARArchive.validate(name:)` refuses
    ///   first, for every archive a `ReplayingTransport` answers from).
    init(_ entry: HARArchive.Entry, describing: String) throws(ServerAPIError) {
        steps = []
        var browserClose: (direction: HARArchive.RecordedMessage.Direction, frame: CloseFrame, answer: CloseFrame?)?
        for (index, record) in (entry.webSocketMessages ?? []).enumerated() {
            guard record.type == .send || record.type == .receive else { continue }
            switch record.opcode {
            case 1, 2:
                guard let message = record.message else {
                    throw ServerAPIError(
                        .decoding,
                        "message \(index + 1) of \(describing) is binary (opcode 2) but its data is not base64")
                }
                steps.append(Step(direction: record.type, message: message))
            case 8:
                let frame = CloseFrame(browserData: record.data)
                if let first = browserClose {
                    if first.direction != record.type, first.answer == nil { browserClose?.answer = frame }
                } else {
                    browserClose = (record.type, frame, nil)
                }
            default:
                continue
            }
        }
        if let close = entry.webSocketClose {
            switch (close.type, close.dropped) {
            case (.receive, true): end = .drop(close.error)
            case (.receive, false): end = .close(CloseFrame(code: close.code, reason: close.reason))
            default: end = .open
            }
            answer = close.answer.map { CloseFrame(code: $0.code, reason: $0.reason) }
        } else if let browserClose, browserClose.direction == .receive {
            end = .close(browserClose.frame)
        } else {
            end = .open
            answer = browserClose?.answer
        }
    }
}
