import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession
import Testing

/// `ServerAPIManager.shutdown(gracePeriod:)` and the transports' `shutdown(gracePeriod:)` against the real servers:
/// calls in flight finish in the grace period, what outlives it is cancelled, new calls are refused, WebSockets are
/// closed with 1001, and a curl transport's threads are gone when it returns.
@Suite("Conformance: graceful shutdown of the manager and its transport")
struct ShutdownConformanceTests {
    /// The transports a server app shuts down.
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case curl
        case urlsession

        var description: String { rawValue }

        func make() -> any RequestPerforming {
            switch self {
            case .curl: CurlTransport(configuration: TransportKind.curl.curlConfiguration(.init()))
            case .urlsession: URLSessionTransport()
            }
        }
    }

    /// Counts the attempts handed to the transport: a call is on its way to the server once counted.
    private final class Sent: ServerAPIPlugin {
        let count = EventCounter()
        func willSend(_ request: TransportRequest, for api: ServerAPI) { count.fire() }
    }

    private static func manager(_ kind: Kind, sent: Sent, ownsTransport: Bool = true) -> ServerAPIManager {
        ServerAPIManager(transport: kind.make(), plugins: [sent], ownsTransport: ownsTransport)
    }

    @Test(
        "100 slow calls in flight when shutdown is called all complete in the grace period; later calls are refused",
        .timeLimit(.minutes(3)), arguments: Kind.allCases)
    func slowCallsFinish(kind: Kind) async throws {
        let sent = Sent()
        let manager = Self.manager(kind, sent: sent)
        let calls = try (0..<100).map { index in
            let api = ServerAPI(url: try TestServers.fixture("/sometimes-slow?percent=100&delay_ms=500&n=\(index)"))
                .timeout(TestTiming.bound(.seconds(120))).format(.data)
            return Task { try await manager.send(api) }
        }
        await sent.count.wait(for: calls.count)
        #expect(manager.inFlight.count == calls.count)
        await manager.shutdown(gracePeriod: TestTiming.bound(.seconds(120)))
        #expect(manager.isShuttingDown)
        for call in calls {
            let result = try await call.value
            #expect(result.status == 200)
        }
        #expect(manager.inFlight.isEmpty)
        let late = await expectError {
            try await manager.send(ServerAPI(url: try TestServers.fixture("/hang?key=late-\(UUID().uuidString)")))
        }
        #expect(late?.kind == .shuttingDown)
        #expect(sent.count.count == calls.count, "the refused call reached the transport")
    }

    @Test(
        "a call, a stream and a download slower than the grace period are cancelled; the download keeps its part",
        .timeLimit(.minutes(2)), arguments: Kind.allCases)
    func slowerThanGraceIsCancelled(kind: Kind) async throws {
        let sent = Sent()
        let manager = Self.manager(kind, sent: sent)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shutdown-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        let key = "shutdown-\(UUID().uuidString)"
        let hanging = Task { try await manager.send(ServerAPI(url: try TestServers.fixture("/hang?key=\(key)"))) }
        let download = Task {
            try await manager.send(
                ServerAPI(url: try TestServers.fixture("/hang-body?size=100000&after=1000"))
                    .download(to: destination, resume: true))
        }
        let arrived = EventCounter()
        let streamed = Task {
            let response = try await manager.stream(
                ServerAPI(url: try TestServers.fixture("/hang-body?size=100000&after=1000")))
            var count = 0
            for try await chunk in response.body {
                count += chunk.count
                if count >= 1000 { arrived.fire() }
            }
            return count
        }
        await sent.count.wait(for: 3)
        await arrived.wait()
        // The download's first bytes are on disk once the partial file has them.
        let partial = directory.appendingPathComponent("file.bin.part")
        try await poll("the download's first bytes", within: TestTiming.bound(.seconds(10))) {
            ((try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0) >= 1000
        }
        await manager.shutdown(gracePeriod: .milliseconds(200))
        let errors = [
            await expectError { try await hanging.value }, await expectError { try await download.value },
            await expectError { try await streamed.value },
        ]
        for error in errors { #expect(error?.kind == .cancelled, "\(String(describing: error))") }
        #expect(errors[0]?.message.contains("grace period") == true, "\(String(describing: errors[0]))")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        let kept = try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int
        #expect((kept ?? 0) >= 1000)
        #expect(manager.inFlight.isEmpty)
        // The server saw the hanging call's client leave.
        let checker = ServerAPIManager(transport: Kind.curl.make())
        try await poll("the server to see the client leave", within: TestTiming.bound(.seconds(10))) {
            let state = try await checker.send(ServerAPI(url: try TestServers.fixture("/hang/state?key=\(key)")))
            return state.json?["client_left"]?.boolValue == true
        }
        await checker.shutdown(gracePeriod: .zero)
    }

    @Test(
        "a call made while the calls in flight drain fails at once with shuttingDown, sending nothing",
        .timeLimit(.minutes(1)), arguments: Kind.allCases)
    func refusedWhileDraining(kind: Kind) async throws {
        let sent = Sent()
        let manager = Self.manager(kind, sent: sent)
        let slow = Task {
            try await manager.send(
                ServerAPI(url: try TestServers.fixture("/sometimes-slow?percent=100&delay_ms=1000&drain=1")).format(
                    .data))
        }
        await sent.count.wait()
        let shutdown = Task { await manager.shutdown(gracePeriod: TestTiming.bound(.seconds(60))) }
        try await poll("the shutdown to start") { manager.isShuttingDown }
        let refused = await expectError {
            try await manager.send(ServerAPI(url: try TestServers.fixture("/hang?key=never-\(UUID().uuidString)")))
        }
        #expect(refused?.kind == .shuttingDown)
        #expect(refused?.message == "the manager is shutting down: it takes no new calls")
        let batch = await expectError {
            try await manager.send(
                BatchRequest([ServerAPI(url: try TestServers.fixture("/hang?key=never-\(UUID().uuidString)"))]))
        }
        #expect(batch?.kind == .shuttingDown)
        #expect(try await slow.value.status == 200)
        await shutdown.value
        #expect(sent.count.count == 1)
    }

    @Test(
        "a manager that does not own its transport leaves it running; the owner's shutdown then refuses its calls",
        .timeLimit(.minutes(1)), arguments: Kind.allCases)
    func sharedTransport(kind: Kind) async throws {
        let transport = kind.make()
        let borrower = ServerAPIManager(transport: transport, ownsTransport: false)
        let other = ServerAPIManager(transport: transport, ownsTransport: false)
        await borrower.shutdown(gracePeriod: .zero)
        let refused = await expectError { try await borrower.send(ServerAPI(url: try TestServers.httpbin("/get"))) }
        #expect(refused?.kind == .shuttingDown)
        #expect(try await other.send(ServerAPI(url: try TestServers.httpbin("/get"))).status == 200)
        await transport.shutdown(gracePeriod: .zero)
        let closed = await expectError { try await other.send(ServerAPI(url: try TestServers.httpbin("/get"))) }
        #expect(closed?.kind == .shuttingDown)
        #expect(closed?.message == "the transport is shutting down: it takes no new requests")
    }

    @Test(
        "shutting down twice, or from several tasks at once, returns once the shutdown is done",
        arguments: Kind.allCases)
    func concurrentShutdowns(kind: Kind) async throws {
        let sent = Sent()
        let manager = Self.manager(kind, sent: sent)
        let slow = Task {
            try await manager.send(
                ServerAPI(url: try TestServers.fixture("/sometimes-slow?percent=100&delay_ms=300")).format(.data))
        }
        await sent.count.wait()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { await manager.shutdown(gracePeriod: TestTiming.bound(.seconds(60))) } }
        }
        // Every shutdown returned after the one that ran it: the call in flight had ended.
        #expect(manager.inFlight.isEmpty)
        #expect(try await slow.value.status == 200)
        await manager.shutdown(gracePeriod: .zero)
        await manager.transport.shutdown(gracePeriod: .zero)
    }

    @Test(
        "after shutdown returns, none of the curl transport's threads is left in the process", .timeLimit(.minutes(1)))
    func curlThreadsAreGone() async throws {
        var configuration = CurlTransport.Configuration()
        configuration.loopCount = 3
        configuration.loopAssignment = .roundRobin
        let transport = CurlTransport(configuration: configuration)
        let manager = ServerAPIManager(transport: transport)
        for _ in 0..<3 { _ = try await manager.send(ServerAPI(url: try TestServers.httpbin("/get"))) }
        var socket: WebSocket?
        if CurlTransport.supportsWebSockets {
            socket = try await manager.webSocket(
                ServerAPI(url: try TestServers.url(base: TestServers.webSocket(), "/echo")))
        }
        let threads = transport.threadTaskIDs
        // A WebSocket lives on a loop: no thread of its own.
        #expect(threads.count == 3)
        for thread in threads {
            let name = Self.threadName(thread)
            #expect(name?.hasPrefix("ServerAPI.curl") == true, "thread \(thread) is \(String(describing: name))")
        }
        await manager.shutdown(gracePeriod: TestTiming.bound(.seconds(10)))
        #expect(transport.threadTaskIDs.isEmpty)
        let left = threads.filter { Self.threadName($0)?.hasPrefix("ServerAPI.curl") == true }
        #expect(left.isEmpty, "threads still in /proc/self/task: \(left)")
        #expect(socket?.isClosed ?? true)
    }

    @Test(
        "a WebSocket open at shutdown is closed with 1001, going away", .timeLimit(.minutes(1)),
        arguments: Kind.allCases)
    func webSocketGoesAway(kind: Kind) async throws {
        let manager = Self.manager(kind, sent: Sent())
        let key = "shutdown-\(UUID().uuidString.prefix(8))"
        let api = ServerAPI(url: try TestServers.url(base: TestServers.webSocket(), "/echo?id=\(key)"))
        guard kind == .curl, CurlTransport.supportsWebSockets else {
            // Without WebSockets (FoundationNetworking on Linux, CurlTransport off Linux): the typed refusal.
            let error = await expectError { try await manager.webSocket(api) }
            #expect(error?.kind == .unsupported)
            await manager.shutdown(gracePeriod: .zero)
            return
        }
        let socket = try await manager.webSocket(api)
        try await socket.send(.text("hello"))
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("hello"))
        await manager.shutdown(gracePeriod: TestTiming.bound(.seconds(20)))
        #expect(try await messages.next() == nil)
        #expect(socket.isClosed)
        #expect(manager.inFlight.isEmpty)
        // The peer reports the close code it received.
        let reporter = ServerAPIManager(transport: CurlTransport())
        let report = try await reporter.webSocket(
            ServerAPI(url: try TestServers.url(base: TestServers.webSocket(), "/report?of=\(key)")))
        var iterator = report.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("1001 the client is shutting down"))
        await reporter.shutdown(gracePeriod: TestTiming.bound(.seconds(10)))
    }

    /// The name of thread `id` of this process, or `nil` when it has exited.
    private static func threadName(_ id: Int) -> String? {
        guard let name = try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8) else { return nil }
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
