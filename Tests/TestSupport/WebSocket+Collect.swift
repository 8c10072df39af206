import ServerAPIKit

extension WebSocket {
    /// Reads `messages` to its end: every message, and the error it ended with (`nil` when the server closed it).
    public func collectMessages() async -> ([WebSocketMessage], ServerAPIError?) {
        var collected: [WebSocketMessage] = []
        do {
            for try await message in messages { collected.append(message) }
            return (collected, nil)
        } catch {
            return (collected, error as? ServerAPIError)
        }
    }
}
