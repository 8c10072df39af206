#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One whole WebSocket message, sent or received: text or binary.
///
/// Fragmented messages arrive reassembled; a text message is valid UTF-8 (one that is not fails the
/// connection with close code 1007).
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message.
    case text(String)
    /// A binary message.
    case binary(Data)

    /// The message's payload size in bytes.
    public var count: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }
}
