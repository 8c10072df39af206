import ServerAPIKit

/// Reads an async sequence to its end: every element, and the `ServerAPIError` it ended with (`nil` when it ended
/// cleanly), as the tests of WebSockets and server-sent events read theirs.
public func collectAll<Sequence: AsyncSequence>(_ sequence: Sequence) async -> ([Sequence.Element], ServerAPIError?) {
    var collected: [Sequence.Element] = []
    do {
        for try await element in sequence { collected.append(element) }
        return (collected, nil)
    } catch {
        return (collected, error as? ServerAPIError)
    }
}

extension WebSocket {
    /// Reads `messages` to its end: every message, and the error it ended with (`nil` when the server closed it).
    public func collectMessages() async -> ([WebSocketMessage], ServerAPIError?) {
        await collectAll(messages)
    }
}
