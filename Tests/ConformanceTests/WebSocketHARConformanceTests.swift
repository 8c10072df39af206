import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import ServerAPITesting
import Testing

/// A WebSocket session with the WebSocket peer (Tests/Fixtures/ws_server.py), recorded to HAR through
/// `CurlTransport` and replayed with no server; with the peer that declines compression and with the one that takes
/// permessage-deflate (the file holds the messages inflated, as the application saw them, either way).
///
/// Where `CurlTransport` has WebSockets (Linux, any libcurl) it records and replays; elsewhere it checks the typed
/// `unsupported` error, and that the recording kept no entry for it, as the other WebSocket conformance tests do.
@Suite(
    "Conformance: a WebSocket session over CurlTransport recorded to HAR and replayed without the server",
    .timeLimit(.minutes(1)))
struct WebSocketHARConformanceTests {
    /// What a client saw: the echoes, how the connection ended, and a refused handshake's error.
    struct Session: Hashable {
        var echoes: [WebSocketMessage]
        var closeCode: WebSocketCloseCode?
        var closeReason: String?
        var refusal: String
    }

    static let sent: [WebSocketMessage] = [
        .text("héllo 👋"),
        .binary(Data([0, 1, 2, 255])),
        .text(""),
        // Larger than one read of the socket: framed by the core, recorded and replayed whole.
        .binary(Data((0..<200_000).map { UInt8($0 % 251) })),
    ]

    /// Sends each message to /echo and reads its echo, closes with 4001, then asks /refuse/401.
    static func converse(_ manager: ServerAPIManager, base: String) async throws -> Session {
        let socket = try await manager.webSocket(ServerAPI(url: try TestServers.url(base: base, "/echo")))
        var iterator = socket.messages.makeAsyncIterator()
        var echoes: [WebSocketMessage] = []
        for message in sent {
            try await socket.send(message)
            if let echo = try await iterator.next() { echoes.append(echo) }
        }
        await socket.close(code: WebSocketCloseCode(4001), reason: "client done")
        #expect(try await iterator.next() == nil)
        let refusal = await expectError {
            try await manager.webSocket(ServerAPI(url: try TestServers.url(base: base, "/refuse/401")))
        }
        return Session(
            echoes: echoes, closeCode: socket.closeCode, closeReason: socket.closeReason,
            refusal: "\(refusal?.kind.rawValue ?? "-") \(refusal?.status ?? 0) \(refusal?.message ?? "-")")
    }

    @Test(
        "a session with /echo is recorded as a HAR entry, then replayed with no server: the same echoes and close",
        arguments: [false, true])
    func recordThenReplay(compressed: Bool) async throws {
        let scratch = try Scratch()
        let file = scratch.file("echo.har")
        let base = compressed ? try TestServers.webSocketDeflate() : try TestServers.webSocket()
        let recording = RecordingTransport(recording: CurlTransport(), to: file)
        let manager = ServerAPIManager(transport: recording)
        guard CurlTransport.supportsWebSockets else {
            let error = await expectError {
                try await manager.webSocket(ServerAPI(url: try TestServers.url(base: base, "/echo")))
            }
            #expect(error?.kind == .unsupported)
            #expect(
                error?.message.hasPrefix("CurlTransport runs WebSockets on Linux only") == true
            )
            // The transport's limit is not the server's answer: nothing to replay.
            #expect(recording.archive.entries.isEmpty)
            return
        }
        let live = try await Self.converse(manager, base: base)
        #expect(live.echoes == Self.sent)
        #expect(live.closeCode == WebSocketCloseCode(4001))
        #expect(live.closeReason == "client done")
        #expect(live.refusal.hasPrefix("HTTP status 401 "))

        var archive = try HARArchive(contentsOf: file)
        #expect(archive.entries.count == 2)
        let entry = try #require(archive.entries.first)
        #expect(entry.resourceType == "websocket")
        #expect(entry.request.url == base + "/echo")
        #expect(entry.response.status == 101)
        #expect(entry.webSocketMessages?.map(\.type) == Array(repeating: [.send, .receive], count: 4).flatMap { $0 })
        #expect(entry.webSocketMessages?.map(\.opcode) == [1, 1, 2, 2, 1, 1, 2, 2])
        // Inflated: the 200,000 bytes sent and echoed, whole, as the application saw them.
        #expect(
            entry.webSocketMessages?.last?.data
                == Self.sent.last.map { message -> String in
                    guard case .binary(let bytes) = message else { return "" }
                    return bytes.base64EncodedString()
                })
        let agreed = entry.response.headers.contains { $0.name.lowercased() == "sec-websocket-extensions" }
        #expect(agreed == compressed)
        #expect(entry.webSocketClose?.type == .send)
        #expect(entry.webSocketClose?.code == 4001)
        #expect(entry.webSocketClose?.reason == "client done")
        // The peer answers with the same code and reason.
        #expect(entry.webSocketClose?.answer == HARArchive.RecordedClose.Answer(code: 4001, reason: "client done"))
        #expect(archive.entries.last?.response.status == 401)

        // The same session, to a port nothing listens on: only the recording can answer it.
        let offline = "ws://127.0.0.1:\(try closedPort())"
        for index in archive.entries.indices {
            archive.entries[index].request.url = archive.entries[index].request.url
                .replacingOccurrences(of: base, with: offline)
        }
        let replay = try ReplayingTransport(archive: archive)
        let replayed = try await Self.converse(ServerAPIManager(transport: replay), base: offline)
        #expect(replayed == live)
        #expect(replay.unusedEntries.isEmpty)
    }
}
