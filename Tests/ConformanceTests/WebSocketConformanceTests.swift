import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession
import Testing

/// WebSockets over each transport against the WebSocket peer of the test servers (Tests/Fixtures/ws_server.py).
///
/// `CurlTransport` runs on whichever libcurl the process loaded (CI: Debian 12's 7.88 and bookworm-backports' 8.14;
/// WebSockets need no WebSocket support of libcurl's); off Linux it checks the typed `unsupported` error instead.
/// `URLSessionTransport` on Linux checks its `unsupported` error: the toolchains'
/// FoundationNetworking is built without WebSockets. So each test says which path it took and none is skipped.
/// What only curl does (the whole protocol, frame by frame; trust in the test CA; backpressure) is tested on curl.
@Suite("Conformance: WebSockets over each transport and the WebSocket peer")
struct WebSocketConformanceTests {
    /// The transports with WebSockets.
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case curl
        case urlsession

        var description: String { rawValue }
    }

    /// The peer a case runs against: the plain one declines the client's permessage-deflate offer (messages go
    /// uncompressed), the other takes it (every message compressed, both ways, fragments too). The cases that are the
    /// protocol's run against both; those about the transport (proxies, TLS, refusals) against the plain one.
    enum Peer: String, CaseIterable, CustomStringConvertible {
        case plain
        case deflate

        var description: String { rawValue }
    }

    private struct Header: ServerAPIPlugin {
        func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
            var request = request
            request.headers.add(name: "X-Plugin", value: "from-the-plugin")
            return request
        }
    }

    private static func manager(
        _ kind: Kind = .curl, plugins: [any ServerAPIPlugin] = [], cookies: (any CookieStorage)? = nil
    ) throws -> ServerAPIManager {
        let transport: any RequestPerforming =
            switch kind {
            case .curl: CurlTransport(configuration: .init(additionalTrustedCAFile: try TestServers.h2CAFile()))
            case .urlsession: URLSessionTransport()
            }
        return ServerAPIManager(transport: transport, plugins: plugins, configuration: .init(cookies: cookies))
    }

    private static func api(_ path: String, secure: Bool = false, peer: Peer = .plain) throws -> ServerAPI {
        let base =
            secure
            ? try TestServers.webSocketSecure()
            : peer == .deflate ? try TestServers.webSocketDeflate() : try TestServers.webSocket()
        return ServerAPI(url: try TestServers.url(base: base, path))
    }

    /// Opens a WebSocket when the transport has them; otherwise checks the `unsupported` error and returns `nil`.
    private static func open(
        _ manager: ServerAPIManager, _ api: ServerAPI, configuration: WebSocket.Configuration = .init()
    ) async throws -> WebSocket? {
        if manager.transport is URLSessionTransport {
            #if canImport(FoundationNetworking)
                let error = await expectError { try await manager.webSocket(api, configuration: configuration) }
                #expect(error?.kind == .unsupported)
                #expect(
                    error?.message.hasPrefix("this URLSession has no WebSockets") == true,
                    "\(String(describing: error))")
                #expect(manager.inFlight.isEmpty)
                return nil
            #else
                return try await manager.webSocket(api, configuration: configuration)
            #endif
        }
        guard CurlTransport.supportsWebSockets else {
            let error = await expectError { try await manager.webSocket(api, configuration: configuration) }
            #expect(error?.kind == .unsupported)
            #expect(
                error?.message.hasPrefix("CurlTransport runs WebSockets on Linux only") == true
            )
            return nil
        }
        let socket = try await manager.webSocket(api, configuration: configuration)
        // The deflate peer takes the offer the core makes by default; the others decline it.
        let compressing = try URL(string: TestServers.webSocketDeflate())?.port == api.url?.port
        let offered = configuration.compression != nil && manager.transport.carriesWebSocketExtensions
        #expect(
            (socket.compression != nil) == (compressing && offered),
            "compression agreed: \(String(describing: socket.compression)), against \(api.url?.absoluteString ?? "")")
        return socket
    }

    /// A key for the peer's `/report` that no earlier run used: the peer outlives a test run, and a key it already
    /// knows would answer with an earlier connection's close.
    private static func key(_ name: String) -> String { "\(name)-\(UUID().uuidString.prefix(8))" }

    /// The close code (and reason) the peer received on the connection opened with `?id=KEY`.
    private static func report(_ manager: ServerAPIManager, _ key: String) async throws -> String {
        let socket = try await manager.webSocket(try api("/report?of=\(key)"))
        var iterator = socket.messages.makeAsyncIterator()
        guard case .text(let report)? = try await iterator.next() else { return "no report" }
        await socket.close()
        return report
    }

    @Test("WebSockets work with every libcurl the transport supports (they need no WebSocket support of libcurl's)")
    func support() {
        #if os(Linux)
            #expect(CurlTransport.supportsWebSockets, "libcurl \(CurlTransport.libcurlVersion)")
        #else
            #expect(!CurlTransport.supportsWebSockets)
        #endif
    }

    @Test(
        "text and binary messages echo, and a clean close leaves nothing in flight", arguments: Kind.allCases,
        Peer.allCases)
    func echo(kind: Kind, peer: Peer) async throws {
        let key = Self.key("echo")
        let manager = try Self.manager(kind)
        guard let socket = try await Self.open(manager, try Self.api("/echo?id=\(key)", peer: peer)) else { return }
        try await socket.send(.text("héllo 👋"))
        try await socket.send(.binary(Data([0, 1, 2, 255])))
        try await socket.send(.text(""))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("héllo 👋"))
        #expect(try await iterator.next() == .binary(Data([0, 1, 2, 255])))
        #expect(try await iterator.next() == .text(""))
        await socket.close(code: WebSocketCloseCode(4001), reason: "client done")
        #expect(try await iterator.next() == nil)
        #expect(manager.inFlight.isEmpty)
        #expect(try await Self.report(manager, key) == "4001 client done")
    }

    @Test(
        "more sockets on one loop than one libcurl multi handle holds each echo, and close cleanly; sockets open after",
        arguments: Peer.allCases)
    func manySocketsOnOneLoop(peer: Peer) async throws {
        #if os(Linux)
            let transport = CurlTransport(configuration: .init(loopCount: 1))
            let manager = ServerAPIManager(transport: transport)
            let count = 3 * CurlWebSocket.socketsPerMultiHandle + 5
            let sockets = try await withThrowingTaskGroup(of: WebSocket.self) { group in
                for _ in 0..<count {
                    group.addTask { try await manager.webSocket(try Self.api("/echo", peer: peer)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, socket) in sockets.enumerated() {
                    group.addTask {
                        try await socket.send(.text("socket \(index)"))
                        var iterator = socket.messages.makeAsyncIterator()
                        #expect(try await iterator.next() == .text("socket \(index)"))
                    }
                }
                try await group.waitForAll()
            }
            for socket in sockets { await socket.close() }
            // The multi handles' counts went down with the closes: a new socket gets a place and works.
            let again = try await manager.webSocket(try Self.api("/echo", peer: peer))
            try await again.send(.text("again"))
            var iterator = again.messages.makeAsyncIterator()
            #expect(try await iterator.next() == .text("again"))
            await again.close()
            #expect(manager.inFlight.isEmpty)
        #endif
    }

    @Test("a 16 MiB message arrives whole, and one as large echoes back", arguments: Peer.allCases)
    func bigMessage(peer: Peer) async throws {
        let manager = try Self.manager()
        guard let socket = try await Self.open(manager, try Self.api("/big", peer: peer)) else { return }
        var iterator = socket.messages.makeAsyncIterator()
        guard case .binary(let big)? = try await iterator.next() else {
            Issue.record("no binary message")
            return
        }
        #expect(big.count == 16 << 20)
        #expect(big.prefix(300) == Data((0..<300).map { UInt8($0 % 251) }))
        #expect(big.suffix(1).first == UInt8(((16 << 20) - 1) % 251))
        try await socket.send(.binary(big))
        #expect(try await iterator.next() == .binary(big))
        await socket.close()
    }

    @Test(
        "a reader that falls behind pauses the transfer, and every message arrives, in order, once it reads",
        arguments: Peer.allCases)
    func backpressure(peer: Peer) async throws {
        guard
            let socket = try await Self.open(
                try Self.manager(), try Self.api("/stream", peer: peer), configuration: .init(receiveBufferSize: 4096))
        else { return }
        let session = try #require(socket.transportConnection as? CurlWebSocket)
        try await poll("the transfer paused") { session.isReceivePaused }
        var iterator = socket.messages.makeAsyncIterator()
        // Well past what was held when receiving paused (256 KiB of 1 KiB messages and the reader's 4 KiB): the
        // transfer resumed.
        for expected in 1...3000 {
            guard case .text(let tick)? = try await iterator.next() else {
                Issue.record("no tick \(expected)")
                return
            }
            guard tick.hasPrefix("tick \(expected) "), tick.utf8.count == 1024 else {
                Issue.record("tick \(expected) is \(tick.prefix(20))…, \(tick.utf8.count) bytes")
                return
            }
        }
        await socket.close()
    }

    @Test(
        "a message sent while receiving is paused (the reader is behind) goes out without waiting for the reader",
        arguments: Peer.allCases)
    func sendWhilePaused(peer: Peer) async throws {
        let manager = try Self.manager()
        let key = Self.key("paused")
        guard
            let socket = try await Self.open(
                manager, try Self.api("/flood?id=\(key)&size=64", peer: peer),
                configuration: .init(receiveBufferSize: 4096))
        else { return }
        let session = try #require(socket.transportConnection as? CurlWebSocket)
        try await poll("the transfer paused") { session.isReceivePaused }
        try await socket.send(.text("hello while paused"))
        try await poll("the server got the message", every: .milliseconds(50)) {
            let check = try await manager.webSocket(try Self.api("/received?of=\(key)"))
            var iterator = check.messages.makeAsyncIterator()
            return try await iterator.next() == .text("hello while paused")
        }
        #expect(session.isReceivePaused, "the reader never read: receiving stayed paused")
        _ = manager.cancelAll()
    }

    @Test("fragmented messages are reassembled", arguments: Kind.allCases, Peer.allCases)
    func fragmented(kind: Kind, peer: Peer) async throws {
        guard let socket = try await Self.open(try Self.manager(kind), try Self.api("/fragmented", peer: peer)) else {
            return
        }
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("fragmented"))
        #expect(try await iterator.next() == .binary(Data([0, 1, 2, 3])))
        await socket.close()
    }

    @Test("the client answers the server's ping, and its own ping gets a pong", arguments: Kind.allCases, Peer.allCases)
    func pingPong(kind: Kind, peer: Peer) async throws {
        guard let socket = try await Self.open(try Self.manager(kind), try Self.api("/ping", peer: peer)) else {
            return
        }
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("pong received"))
        try await socket.ping(timeout: .seconds(10))
        await socket.close()
    }

    @Test(
        """
        pings that arrive while a large message is part-sent are answered after it, not inside its frame (libcurl \
        8.14's frame mode wrote its pong inside; fixed in 8.16)
        """)
    func pingMidFrame() async throws {
        guard let socket = try await Self.open(try Self.manager(), try Self.api("/ping-mid-frame")) else { return }
        var iterator = socket.messages.makeAsyncIterator()
        try await socket.send(.text("start"))
        #expect(try await iterator.next() == .text("paused"))
        // Larger than the sockets' buffers: the peer, not reading, holds it part-way while it pings.
        let size = 16 << 20
        let block = Data((0..<251).map { UInt8($0) })
        var big = Data(capacity: size)
        while big.count < size { big.append(block.prefix(size - big.count)) }
        try await socket.send(.binary(big))
        #expect(try await iterator.next() == .text("\(size) bytes intact, 3 pongs"))
        await socket.close()
    }

    @Test(
        "the server's close code and reason reach the client, which echoes the code", arguments: Kind.allCases,
        Peer.allCases)
    func serverCloses(kind: Kind, peer: Peer) async throws {
        let key = Self.key("server-close")
        let manager = try Self.manager(kind)
        guard
            let socket = try await Self.open(manager, try Self.api("/close?code=4000&reason=bye&id=\(key)", peer: peer))
        else { return }
        let (messages, error) = await socket.collectMessages()
        #expect(messages == [.text("closing")])
        #expect(error == nil)
        #expect(socket.closeCode == WebSocketCloseCode(4000))
        #expect(socket.closeReason == "bye")
        #expect(try await Self.report(manager, key) == "4000 ")
    }

    @Test(
        "a server that drops the connection without a close frame fails the messages with network",
        arguments: Kind.allCases, Peer.allCases)
    func abrupt(kind: Kind, peer: Peer) async throws {
        guard let socket = try await Self.open(try Self.manager(kind), try Self.api("/abrupt", peer: peer)) else {
            return
        }
        let (messages, error) = await socket.collectMessages()
        #expect(messages == [.text("bye")])
        #expect(error?.kind == .network)
        #expect(socket.closeCode == nil)
    }

    @Test(
        "with a reconnection policy, a connection the server drops is made again and messages go on",
        arguments: Peer.allCases)
    func reconnects(peer: Peer) async throws {
        let manager = try Self.manager()
        let policy = WebSocket.Reconnection(retry: .milliseconds(50), jitter: 0, maximumReconnects: 3)
        guard CurlTransport.supportsWebSockets else {
            _ = try await Self.open(manager, try Self.api("/abrupt", peer: peer))
            return
        }
        let socket = try await manager.webSocket(try Self.api("/abrupt", peer: peer).tag("flaky"), reconnection: policy)
        var iterator = socket.messages.makeAsyncIterator()
        // The peer sends "bye" and drops the connection, each time.
        for _ in 0..<3 { #expect(try await iterator.next() == .text("bye")) }
        #expect(socket.reconnects >= 2)
        #expect(manager.inFlight.map(\.tag) == ["flaky"])
        await socket.close()
        try await poll("nothing in flight") { manager.inFlight.isEmpty }
    }

    @Test("through a SOCKS5 proxy: the server sees the proxy's address, and messages echo")
    func socksProxy() async throws {
        let proxy = try Proxy(try TestServers.socks5())
        let transport = CurlTransport(configuration: .init(proxy: proxy))
        let manager = ServerAPIManager(transport: transport)
        guard let socket = try await Self.open(manager, try Self.api("/whoami")) else { return }
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text(try TestServers.socks5Source()))
        try await socket.send(.text("through the proxy"))
        #expect(try await iterator.next() == .text("through the proxy"))
        await socket.close()
    }

    @Test("through an HTTP proxy, in a CONNECT tunnel; a proxy that wants credentials refuses with 407")
    func httpProxy() async throws {
        try await FixtureProcess.withServer(script: FixtureScript.forwardProxy, arguments: []) { port in
            let manager = ServerAPIManager(
                transport: CurlTransport(configuration: .init(proxy: try Proxy("http://127.0.0.1:\(port)"))))
            guard let socket = try await Self.open(manager, try Self.api("/echo")) else { return }
            try await socket.send(.text("tunnelled"))
            var iterator = socket.messages.makeAsyncIterator()
            #expect(try await iterator.next() == .text("tunnelled"))
            await socket.close()
            let stats = try await CurlTransport().perform(
                TransportRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)/__proxy/stats"))))
            let counts = try JSONSerialization.jsonObject(with: stats.data ?? Data()) as? [String: Int]
            #expect(counts?["tunnels"] == 1, "\(String(describing: counts))")
        }
        guard CurlTransport.supportsWebSockets else { return }
        try await FixtureProcess.withServer(script: FixtureScript.forwardProxy, arguments: ["--user", "u:p"]) { port in
            let manager = ServerAPIManager(
                transport: CurlTransport(configuration: .init(proxy: try Proxy("http://127.0.0.1:\(port)"))))
            let error = await expectError { try await manager.webSocket(try Self.api("/echo")) }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 407)
            #expect(error?.message.contains("proxy") == true, "\(String(describing: error))")
            #expect(manager.inFlight.isEmpty)
        }
    }

    @Test("text that is not UTF-8 fails the connection, closed with 1007", arguments: Peer.allCases)
    func invalidUTF8(peer: Peer) async throws {
        let key = Self.key("utf8")
        let manager = try Self.manager()
        guard let socket = try await Self.open(manager, try Self.api("/invalid-utf8?id=\(key)", peer: peer)) else {
            return
        }
        let (messages, error) = await socket.collectMessages()
        #expect(messages.isEmpty)
        #expect(error?.kind == .network)
        #expect(error?.message.contains("1007") == true)
        let report = try await Self.report(manager, key)
        #expect(report.hasPrefix("1007 "), "the peer received: \(report)")
    }

    @Test(
        "text that stops being UTF-8 in the middle of a message fails at once, not at the message's end",
        arguments: Peer.allCases)
    func invalidUTF8FailsFast(peer: Peer) async throws {
        let key = Self.key("fast")
        let manager = try Self.manager()
        guard let socket = try await Self.open(manager, try Self.api("/invalid-utf8-fragments?id=\(key)", peer: peer))
        else { return }
        let (messages, error) = await socket.collectMessages()
        #expect(messages.isEmpty)
        #expect(error?.kind == .network)
        #expect(error?.message.contains("1007") == true, "\(String(describing: error))")
        // The peer never ends the message: a client that waited for its end would have had the connection dropped.
        let report = try await Self.report(manager, key)
        #expect(report.hasPrefix("1007 "), "the peer received: \(report)")
    }

    @Test("a message in 65,536 frames of 64 bytes arrives whole, and echoes back", arguments: Peer.allCases)
    func manyFragments(peer: Peer) async throws {
        guard let socket = try await Self.open(try Self.manager(), try Self.api("/many-fragments", peer: peer)) else {
            return
        }
        var iterator = socket.messages.makeAsyncIterator()
        guard case .binary(let message)? = try await iterator.next() else {
            Issue.record("no binary message")
            return
        }
        let chunk = Data((0..<64).map { UInt8($0) })
        #expect(message.count == 4 << 20)
        #expect(message.prefix(64) == chunk)
        #expect(message.suffix(64) == chunk)
        try await socket.send(.binary(message))
        #expect(try await iterator.next() == .binary(message))
        await socket.close()
    }

    @Test("a message over the limit fails with responseTooLarge, closed with 1009", arguments: Peer.allCases)
    func oversize(peer: Peer) async throws {
        let key = Self.key("oversize")
        let manager = try Self.manager()
        guard
            let socket = try await Self.open(
                manager, try Self.api("/big?id=\(key)", peer: peer), configuration: .init(maxMessageSize: 1 << 20))
        else { return }
        let (messages, error) = await socket.collectMessages()
        #expect(messages.isEmpty)
        #expect(error?.kind == .responseTooLarge)
        let report = try await Self.report(manager, key)
        #expect(report.hasPrefix("1009 "), "the peer received: \(report)")
    }

    @Test(
        "cancelling mid-message ends the messages with cancelled and leaves nothing in flight", arguments: Peer.allCases
    )
    func cancelMidMessage(peer: Peer) async throws {
        let manager = try Self.manager()
        guard
            let socket = try await Self.open(
                manager, try Self.api("/big?size=67108864", peer: peer).tag("big"),
                configuration: .init(maxMessageSize: 64 << 20))
        else { return }
        let reader = Task { await socket.collectMessages() }
        _ = manager.cancel(tag: "big")
        let (messages, error) = await reader.value
        #expect(messages.isEmpty)
        #expect(error?.kind == .cancelled)
        #expect(manager.inFlight.isEmpty)
        #expect(socket.isClosed)
    }

    @Test("cancel by tag closes a streaming connection with cancelled", arguments: Kind.allCases, Peer.allCases)
    func cancelByTag(kind: Kind, peer: Peer) async throws {
        let manager = try Self.manager(kind)
        guard let socket = try await Self.open(manager, try Self.api("/stream", peer: peer).tag("ticks")) else {
            return
        }
        var iterator = socket.messages.makeAsyncIterator()
        guard case .text(let first)? = try await iterator.next() else {
            Issue.record("no first tick")
            return
        }
        #expect(first.hasPrefix("tick 1 "))
        #expect(manager.inFlight.map(\.tag) == ["ticks"])
        _ = manager.cancel(tag: "ticks")
        // Messages already received may still be read; then the cancellation.
        var error: ServerAPIError?
        do {
            while try await iterator.next() != nil {}
        } catch let failure as ServerAPIError {
            error = failure
        }
        #expect(error?.kind == .cancelled)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("a refused handshake is httpStatus with its status", arguments: [401, 404])
    func refused(status: Int) async throws {
        let manager = try Self.manager()
        guard CurlTransport.supportsWebSockets else {
            _ = try await Self.open(manager, try Self.api("/refuse/\(status)"))
            return
        }
        let error = await expectError { try await manager.webSocket(try Self.api("/refuse/\(status)")) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == status)
        #expect(manager.inFlight.isEmpty)
    }

    @Test(
        "a 101 that does not prove the server read the key fails the handshake with network, before any message",
        arguments: [
            ("ws-wrong-accept", "has a Sec-WebSocket-Accept that does not match the request's key"),
            ("ws-no-accept", "has no Sec-WebSocket-Accept"),
            ("ws-no-upgrade", "has no \"Upgrade: websocket\""),
        ])
    func unprovenUpgrade(route: String, complaint: String) async throws {
        // The fixture answers with fixed bytes: a 101 and then a text frame a client that took the upgrade would read.
        let api = ServerAPI(url: try TestServers.fixture("/raw/\(route)"))
        for kind in Kind.allCases {
            let manager = try Self.manager(kind)
            guard kind == .curl, CurlTransport.supportsWebSockets else {
                _ = try await Self.open(manager, api)
                continue
            }
            let error = await expectError { try await manager.webSocket(api) }
            #expect(error?.kind == .network)
            #expect(error?.message == "the WebSocket handshake's answer \(complaint) (RFC 6455 §4.1)")
            #expect(manager.inFlight.isEmpty)
        }
    }

    @Test("the subprotocol the server chose is the socket's", arguments: Kind.allCases, Peer.allCases)
    func subprotocol(kind: Kind, peer: Peer) async throws {
        guard
            let socket = try await Self.open(
                try Self.manager(kind), try Self.api("/echo", peer: peer).webSocketProtocols("chat.v2", "chat.v1"))
        else { return }
        #expect(socket.subprotocol == "chat.v2")
        await socket.close()
    }

    @Test("wss:// with the test CA")
    func secure() async throws {
        guard let socket = try await Self.open(try Self.manager(), try Self.api("/echo", secure: true)) else { return }
        try await socket.send(.text("over TLS"))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("over TLS"))
        await socket.close()
    }

    @Test("a plugin's header and the jar's cookies reach the handshake", arguments: Kind.allCases, Peer.allCases)
    func pluginHeader(kind: Kind, peer: Peer) async throws {
        let api = try Self.api("/headers", peer: peer)
        let jar = MemoryCookieStorage()
        jar.store(setCookieLines: ["session=s1; Path=/"], from: try #require(api.url))
        guard let socket = try await Self.open(try Self.manager(kind, plugins: [Header()], cookies: jar), api) else {
            return
        }
        var iterator = socket.messages.makeAsyncIterator()
        guard case .text(let json)? = try await iterator.next() else {
            Issue.record("no headers message")
            return
        }
        let headers = try JSONDecoder().decode([String: String].self, from: Data(json.utf8))
        #expect(headers["x-plugin"] == "from-the-plugin")
        #expect(headers["cookie"] == "session=s1")
        #expect(headers["upgrade"]?.lowercased() == "websocket")
        await socket.close()
    }
}
