import Foundation
import ServerAPIKit

extension HARArchive {
    /// One WebSocket data message of an entry, as Chrome's DevTools export it: an element of the entry's
    /// `_webSocketMessages`, `{"type": "send", "time": 1718000000.25, "opcode": 1, "data": "hello"}`.
    ///
    /// A message is whole: the frames of a fragmented message are recorded as the one message they make. Close,
    /// ping and pong frames are not data messages and are not recorded here (how the connection ended is the
    /// entry's `webSocketClose`).
    public struct RecordedMessage: Codable, Sendable, Hashable {
        /// Which way a message went.
        public struct Direction: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
            /// The word written in the file: "send", "receive".
            public var rawValue: String
            /// A direction by its word.
            /// - Parameter rawValue: The word, such as "send".
            public init(rawValue: String) { self.rawValue = rawValue }

            /// "send": the client sent it.
            public static let send = Direction(rawValue: "send")
            /// "receive": the server sent it.
            public static let receive = Direction(rawValue: "receive")

            /// The word written in the file.
            public var description: String { rawValue }
        }

        /// Which way it went: `.send` or `.receive` (Chrome also writes "error" rows, which a replay skips).
        public var type: Direction
        /// When it went, in seconds since 1970 (fractional).
        public var time: Double
        /// Its opcode: 1 for text, 2 for binary. A browser's file may hold others (8, a close frame, whose code a
        /// replay uses when the entry has no `webSocketClose`); a replay skips the rest.
        public var opcode: Int
        /// The payload: a text message's text, or a binary message's bytes in base64.
        public var data: String

        /// Creates a recorded message.
        /// - Parameters:
        ///   - type: Which way it went.
        ///   - time: When, in seconds since 1970.
        ///   - opcode: 1 for text, 2 for binary.
        ///   - data: The text, or the bytes in base64.
        public init(type: Direction, time: Double, opcode: Int, data: String) {
            self.type = type
            self.time = time
            self.opcode = opcode
            self.data = data
        }

        /// Records a whole message: text as it is, binary in base64.
        /// - Parameters:
        ///   - message: The message.
        ///   - type: Which way it went.
        ///   - time: When, in seconds since 1970.
        public init(_ message: WebSocketMessage, type: Direction, time: Double) {
            switch message {
            case .text(let text): self.init(type: type, time: time, opcode: 1, data: text)
            case .binary(let bytes): self.init(type: type, time: time, opcode: 2, data: bytes.base64EncodedString())
            }
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(.type, default: Direction(rawValue: ""))
            time = try container.decode(.time, default: 0)
            opcode = try container.decodeInteger(.opcode, default: 1)
            data = try container.decode(.data, default: "")
        }

        /// The message: text for opcode 1, the decoded bytes for opcode 2; `nil` for another opcode, or binary
        /// data that is not base64.
        public var message: WebSocketMessage? {
            switch opcode {
            case 1: return .text(data)
            case 2: return HARArchive.base64Bytes(data).map { .binary($0) }
            default: return nil
            }
        }
    }

    /// How a recorded WebSocket ended: the entry's `_webSocketClose`, a field of ours (browsers keep no close).
    ///
    /// `{"type": "receive", "time": 1718000001.5, "code": 4000, "reason": "bye", "dropped": false}`: the server
    /// closed first, with 4000 and "bye". `type` "send": the client closed first; `answer` is then the server's
    /// close frame in reply (`{"code": 4000, "reason": "bye"}`), when one came. `dropped`: the connection ended
    /// without a close frame, broken (`error` says how) or torn down.
    public struct RecordedClose: Codable, Sendable, Hashable {
        /// The close frame that answered the first one, from the other side.
        public struct Answer: Codable, Sendable, Hashable {
            /// Its code; `nil` when it carried none.
            public var code: Int?
            /// Its reason; empty when it had none.
            public var reason: String

            /// Creates an answer.
            /// - Parameters:
            ///   - code: Its code, if any.
            ///   - reason: Its reason.
            public init(code: Int?, reason: String = "") {
                self.code = code
                self.reason = reason
            }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                code = try container.decodeInteger(.code)
                reason = try container.decode(.reason, default: "")
            }
        }

        /// Who ended the connection: `.receive` for the server (its close frame came first, or its side
        /// dropped), `.send` for the client.
        public var type: RecordedMessage.Direction
        /// When, in seconds since 1970.
        public var time: Double
        /// The first close frame's code; `nil` when it carried none, or when no close frame came (`dropped`).
        public var code: Int?
        /// The first close frame's reason; empty when it had none.
        public var reason: String
        /// Whether the connection ended without a close frame.
        public var dropped: Bool
        /// Why the connection broke, for one that ended with a failure rather than a close frame.
        public var error: RecordedError?
        /// The other side's close frame in reply to the first one, when one came.
        public var answer: Answer?

        /// Creates a recorded end.
        /// - Parameters:
        ///   - type: Who ended the connection.
        ///   - time: When, in seconds since 1970.
        ///   - code: The close frame's code, if any.
        ///   - reason: The close frame's reason.
        ///   - dropped: Whether the connection ended without a close frame.
        ///   - error: Why it broke, if it did.
        ///   - answer: The other side's close frame in reply, if one came.
        public init(
            type: RecordedMessage.Direction, time: Double, code: Int? = nil, reason: String = "",
            dropped: Bool = false, error: RecordedError? = nil, answer: Answer? = nil
        ) {
            self.type = type
            self.time = time
            self.code = code
            self.reason = reason
            self.dropped = dropped
            self.error = error
            self.answer = answer
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(.type, default: .receive)
            time = try container.decode(.time, default: 0)
            code = try container.decodeInteger(.code)
            reason = try container.decode(.reason, default: "")
            dropped = try container.decode(.dropped, default: false)
            error = try container.decodeIfPresent(.error)
            answer = try container.decodeIfPresent(.answer)
        }
    }
}

extension HARArchive.Entry {
    /// Marks a handshake's entry as Chrome marks one: `_resourceType` "websocket", the URL in its `ws://` or
    /// `wss://` form, and an empty list of messages that recording fills.
    mutating func markAsWebSocket() {
        resourceType = "websocket"
        webSocketMessages = []
        let url = request.url
        if url.lowercased().hasPrefix("https://") {
            request.url = "wss://" + url.dropFirst(8)
        } else if url.lowercased().hasPrefix("http://") {
            request.url = "ws://" + url.dropFirst(7)
        }
    }
}

extension HARRedaction {
    /// A WebSocket text message as it is written (and, on replay, as a client's message is compared): the named
    /// JSON fields replaced when it is JSON, and the handshake's secrets removed wherever they appear.
    /// - Parameters:
    ///   - text: The message.
    ///   - secrets: What `secrets(headers:url:body:mimeType:)` found in the handshake.
    func redact(message text: String, secrets: [String]) -> String {
        var text = text
        if !jsonFields.isEmpty {
            text = String(decoding: redact(body: Data(text.utf8), mimeType: "application/json"), as: UTF8.self)
        }
        return secrets.isEmpty ? text : scrub(text, secrets: secrets)
    }

    /// The secrets a handshake carries (its credentials, cookies, named query parameters).
    func secrets(handshake request: TransportRequest) -> [String] {
        secrets(headers: request.headers, url: request.url, body: Data(), mimeType: "")
    }
}
