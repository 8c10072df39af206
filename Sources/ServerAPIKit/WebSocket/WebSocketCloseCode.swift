/// A WebSocket close status code (RFC 6455 §7.4): the reason a side gives when it closes.
///
/// An open vocabulary: any code a peer sends is kept as it came (4000–4999 are the application's own).
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// Creates a code.
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection was fulfilled.
    public static let normalClosure = WebSocketCloseCode(1000)
    /// 1001: an endpoint is going away (a server shutting down, a client leaving).
    public static let goingAway = WebSocketCloseCode(1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(1002)
    /// 1003: a kind of data the endpoint cannot accept.
    public static let unsupportedData = WebSocketCloseCode(1003)
    /// 1005: the close frame carried no code (never sent on the wire).
    public static let noStatusReceived = WebSocketCloseCode(1005)
    /// 1006: the connection ended without a close frame (never sent on the wire).
    public static let abnormalClosure = WebSocketCloseCode(1006)
    /// 1007: a text message that is not valid UTF-8.
    public static let invalidPayload = WebSocketCloseCode(1007)
    /// 1008: a message that violates the endpoint's policy.
    public static let policyViolation = WebSocketCloseCode(1008)
    /// 1009: a message too big to process.
    public static let messageTooBig = WebSocketCloseCode(1009)
    /// 1010: the server did not negotiate an extension the client requires.
    public static let mandatoryExtension = WebSocketCloseCode(1010)
    /// 1011: the server met an unexpected condition.
    public static let internalError = WebSocketCloseCode(1011)
    /// 1012: the server is restarting; come back later (IANA's registry).
    public static let serviceRestart = WebSocketCloseCode(1012)
    /// 1013: the server is overloaded; come back later (IANA's registry).
    public static let tryAgainLater = WebSocketCloseCode(1013)
    /// 1014: a gateway got an invalid answer from the server behind it (IANA's registry).
    public static let badGateway = WebSocketCloseCode(1014)

    /// The number, such as "1000".
    public var description: String { String(rawValue) }

    /// Whether an endpoint may send this code in a close frame: RFC 6455 §7.4's 1000–1003 and 1007–1011, the
    /// 1012–1014 IANA's registry added since, and 3000–4999 (1004–1006 and 1015 are never sent).
    package var isSendable: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
