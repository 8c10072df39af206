import Foundation
import ServerAPICurl
import ServerAPIKit

/// ServerAPIKit's client: a `WebSocket` opened by `ServerAPIManager.webSocket`, driven through its public API only
/// (`send`, `messages`, `close`), so that the run measures whatever transport and core the library has.
final class ServerAPIKitSocket: BenchSocket {
    private let socket: ServerAPIKit.WebSocket
    private let payload: WebSocketMessage

    private init(socket: ServerAPIKit.WebSocket, payload: WebSocketMessage) {
        self.socket = socket
        self.payload = payload
    }

    /// Opens a connection to `url` through `manager`.
    /// - Parameter payload: What `sendMessage()` sends: one value for every connection, as the bytes are not copied.
    static func open(
        _ manager: ServerAPIManager, url: URL, payload: WebSocketMessage
    ) async throws -> ServerAPIKitSocket {
        let socket = try await manager.webSocket(
            ServerAPI(url: url).timeout(.seconds(30)), configuration: .init(maxMessageSize: Wire.maxFrameSize))
        return ServerAPIKitSocket(socket: socket, payload: payload)
    }

    func sendMessage() async throws {
        try await socket.send(payload)
    }

    func sendText(_ text: String) async throws {
        try await socket.send(.text(text))
    }

    func receive() async throws -> Incoming {
        var messages = socket.messages.makeAsyncIterator()
        switch try await messages.next() {
        case .binary(let data)?:
            return .binary(count: data.count, intact: data.first == Wire.fill && data.last == Wire.fill)
        case .text(let text)?:
            return .text(text)
        case nil:
            throw BenchFailure("the server closed the connection")
        }
    }

    func countUntilText(size: Int) async throws -> Tally {
        var tally = Tally()
        for try await message in socket.messages {
            switch message {
            case .binary(let data):
                tally.messages += 1
                tally.bytes += data.count
                if data.count != size { tally.wrongSize += 1 }
            case .text(let text):
                tally.text = text
                return tally
            }
        }
        throw BenchFailure("the server closed the connection")
    }

    func close() async throws {
        await socket.close()
    }
}
