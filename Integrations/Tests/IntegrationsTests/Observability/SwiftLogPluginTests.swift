import Foundation
import Logging
import ServerAPIKit
import ServerAPILogging
import ServerAPITesting
import Synchronization
import Testing

/// A swift-log handler that keeps every entry, for assertions.
final class RecordingLogHandler: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let entries = Mutex<[Entry]>([])

    var all: [Entry] { entries.withLock { $0 } }

    /// A logger at `trace` that writes here.
    func logger() -> Logger {
        var logger = Logger(label: "serverapi.test") { _ in Handler(sink: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    struct Handler: LogHandler {
        let sink: RecordingLogHandler
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var flattened: [String: String] = [:]
            for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
                flattened[key] = "\(value)"
            }
            sink.append(Entry(level: event.level, message: "\(event.message)", metadata: flattened))
        }
    }
}

@Suite struct SwiftLogPluginTests {
    @Test(
        "a successful call logs its attempt and its end, with metadata and the URL redacted",
        arguments: Backend.allCases)
    func success(backend: Backend) async throws {
        let log = RecordingLogHandler()
        let manager = backend.manager(plugins: [SwiftLogPlugin(logger: log.logger())])
        let api = ServerAPI(url: try TestServers.httpbin("/get?token=s3cret&page=2"))
        _ = try await manager.send(api)
        let entries = log.all
        #expect(entries.map(\.message) == ["attempt started", "attempt ended", "call succeeded"])
        #expect(entries.map(\.level) == [.trace, .debug, .info])
        let end = try #require(entries.last)
        #expect(end.metadata["http.method"] == "GET")
        #expect(end.metadata["http.status"] == "200")
        #expect(end.metadata["serverapi.request_id"] == "\(api.id.rawValue)")
        #expect(end.metadata["serverapi.transport"] == backend.rawValue)
        #expect(end.metadata["serverapi.attempts"] == "1")
        #expect(end.metadata["serverapi.duration_ms"].flatMap(Int.init) != nil)
        #expect(end.metadata["serverapi.error_kind"] == nil)
        for entry in entries {
            #expect(entry.metadata["url"]?.hasSuffix("/get?token=<redacted>&page=2") == true)
            #expect(entry.metadata["url"]?.contains("s3cret") == false)
        }
    }

    @Test("a failed call logs at the level its outcome deserves", arguments: Backend.allCases)
    func failures(backend: Backend) async throws {
        let log = RecordingLogHandler()
        let manager = backend.manager(plugins: [SwiftLogPlugin(logger: log.logger())])
        await #expect(throws: ServerAPIError.self) {
            try await manager.send(ServerAPI(url: try TestServers.httpbin("/status/404")))
        }
        await #expect(throws: ServerAPIError.self) {
            try await manager.send(ServerAPI(url: try TestServers.httpbin("/status/500")))
        }
        let ends = log.all.filter { $0.message == "call failed" }
        #expect(ends.map(\.level) == [.warning, .error])
        #expect(ends.map { $0.metadata["http.status"] } == ["404", "500"])
        #expect(ends.map { $0.metadata["serverapi.error_kind"] } == ["HTTP status", "HTTP status"])
    }

    @Test("a cancelled call logs a notice", arguments: Backend.allCases)
    func cancelled(backend: Backend) async throws {
        let log = RecordingLogHandler()
        let manager = backend.manager(plugins: [SwiftLogPlugin(logger: log.logger())])
        let call = Task { try await manager.send(ServerAPI(url: try TestServers.httpbin("/delay/5")).tag("slow")) }
        #expect(await poll { !manager.inFlight.isEmpty })
        _ = manager.cancel(tag: "slow")
        await #expect(throws: ServerAPIError.self) { try await call.value }
        let end = try #require(log.all.last)
        #expect(end.message == "call failed")
        #expect(end.level == .notice)
        #expect(end.metadata["serverapi.error_kind"] == "cancelled")
    }

    @Test("a retried call logs each attempt, and a cached answer logs at debug")
    func retriesAndCache() async throws {
        let log = RecordingLogHandler()
        let mock = MockTransport()
        mock.stub(.get, "/flaky", .cannotConnect(), .text("ok"))
        let manager = ServerAPIManager(
            transport: mock, cache: MemoryCacheForTests.make(), plugins: [SwiftLogPlugin(logger: log.logger())])
        let api = ServerAPI(host: "https://api.example.com", path: "/flaky").format(.data).retry(1, policy: .immediate)
            .cache(.returnCacheElseLoad)
        _ = try await manager.send(api)
        _ = try await manager.send(api)
        #expect(
            log.all.map(\.message) == [
                "attempt started", "attempt failed", "attempt started", "attempt ended", "call succeeded",
                "call answered from cache",
            ])
        #expect(log.all.map { $0.metadata["serverapi.attempt"] }.prefix(4) == ["1", "1", "2", "2"])
        #expect(log.all.last?.level == .debug)
        #expect(log.all.last?.metadata["serverapi.attempts"] == "0")
    }
}
