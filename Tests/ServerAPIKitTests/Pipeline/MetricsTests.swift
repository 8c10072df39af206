import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Metrics", .timeLimit(.minutes(1)))
struct MetricsTests {
    /// A transport that reports fixed measurements, as a real backend would.
    struct MeasuredTransport: RequestPerforming {
        var name: String { "measured" }
        func perform(_ request: TransportRequest) async throws -> TransportResponse {
            TransportResponse(
                status: 200, body: .data(Data("{\"ok\":1}".utf8)), url: request.url,
                metrics: TransportMetrics(
                    transport: name, connected: .milliseconds(5), firstByte: .milliseconds(12),
                    total: .milliseconds(20), bytesSent: (try? request.body.contentLength()) ?? 0, bytesReceived: 8,
                    reusedConnection: true, httpVersion: "1.1"))
        }
    }

    @Test("a result carries queued, started, connected, first-byte and finished instants, bytes, reuse, transport")
    func resultMetrics() async throws {
        let manager = ServerAPIManager(transport: MeasuredTransport())
        let before = Date()
        let result = try await manager.send(.test().method(.post).body(.text("hello")))
        let after = Date()
        let metrics = result.metrics
        let attemptStart = try #require(metrics.attemptStartedAt)
        #expect(before <= metrics.queuedAt && metrics.queuedAt <= metrics.startedAt)
        #expect(metrics.startedAt == attemptStart)
        #expect(metrics.connectedAt == attemptStart.addingTimeInterval(0.005))
        #expect(metrics.firstByteAt == attemptStart.addingTimeInterval(0.012))
        #expect(metrics.finishedAt >= attemptStart && metrics.finishedAt <= after.addingTimeInterval(0.001))
        #expect(metrics.queueTime >= .zero)
        #expect(metrics.attempts == 1)
        #expect(metrics.bytesSent == 5 && metrics.bytesReceived == 8)
        #expect(metrics.reusedConnection == true)
        #expect(metrics.transportName == "measured")
    }

    @Test("with retries: attempts counted, started is the first attempt, the transport figures are the last attempt's")
    func retries() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .text("busy", status: 503), .json(#"{"a":12345}"#))
        let manager = ServerAPIManager(transport: mock)
        let metrics = try await manager.send(.test().retry(2, policy: .immediate)).metrics
        #expect(metrics.attempts == 2)
        #expect(metrics.startedAt <= (metrics.attemptStartedAt ?? .distantPast))
        #expect(metrics.bytesReceived == 11 && metrics.transportName == "mock" && metrics.reusedConnection == false)
    }

    @Test("every failure carries metrics: status errors, transport errors, cancellations, throttling")
    func errorMetrics() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/status", .text("nope", status: 503))
        mock.stub(.get, "/down", .cannotConnect())
        let entered = EventCounter()
        mock.stub(handler: { _ in
            entered.fire()
            return .json("{}", delay: .seconds(60))
        })
        mock.stub(.get, "/t", .json("{}"))
        let manager = ServerAPIManager(transport: mock)

        let retried = ServerAPI.test("/status").retry(2, policy: .immediate)
        let status = try #require(await expectError { try await manager.send(retried) })
        #expect(status.kind == .httpStatus)
        #expect(status.metrics?.attempts == 3)
        #expect(status.metrics?.transportName == "mock" && status.metrics?.bytesReceived == 4)

        let down = try #require(await expectError { try await manager.send(.test("/down")) })
        #expect(down.kind == .cannotConnect)
        #expect(down.metrics?.attempts == 1 && down.metrics?.transportName == "mock")
        #expect(down.metrics?.attemptStartedAt != nil && down.metrics?.bytesReceived == 0)

        let slow = Task { try await manager.send(.test("/slow")) }
        await entered.wait()
        slow.cancel()
        let cancelled = try #require(await expectError { try await slow.value })
        #expect(cancelled.kind == .cancelled && cancelled.metrics != nil)
        #expect((cancelled.metrics?.duration ?? .zero) > .zero)

        let throttled = ServerAPI.test("/t").minimumInterval(.seconds(60))
        _ = try await manager.send(throttled)
        let error = try #require(await expectError { try await manager.send(throttled) })
        #expect(error.kind == .throttled && error.metrics?.attempts == 0)

        // Only a call rejected before it starts has none.
        let invalid = await expectError { try await manager.send(ServerAPI(host: "")) }
        #expect(invalid?.kind == .invalidRequest && invalid?.metrics == nil)
    }

    @Test("a cached result names the cache as its transport, with no attempt")
    func cachedMetrics() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .json(#"{"a":1}"#))
        let manager = ServerAPIManager(transport: mock, cache: LoggingPluginTests.TinyCache())
        let api = ServerAPI.test().cache(.returnCacheElseLoad)
        #expect(try await manager.send(api).metrics.transportName == "mock")
        let cached = try await manager.send(api)
        #expect(cached.isFromCache)
        #expect(cached.metrics.attempts == 0 && cached.metrics.transportName == "cache")
        #expect(cached.metrics.bytesReceived == 7 && cached.metrics.attemptStartedAt == nil)
    }

    @Test("the status a call ended with is in its metrics, for the caller and for didComplete")
    func endingStatus() async throws {
        final class Capture: ServerAPIPlugin {
            let log = Recorder<String>()
            func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
                log.append("\(api.path) \(metrics.status.map(String.init) ?? "nil")")
            }
        }
        let mock = MockTransport()
        mock.stub(.get, "/created", .text("made", status: 201))
        mock.stub(.get, "/retried", .text("busy", status: 503), .json(#"{"a":1}"#))
        mock.stub(.get, "/missing", .text("no", status: 404))
        mock.stub(.get, "/dropped", .text("busy", status: 503), .cannotConnect())
        mock.stub(.get, "/down", .cannotConnect())
        mock.stub(.get, "/cached", .json(#"{"a":1}"#))
        mock.stub(.get, "/feed", .stream([.text("one\n")], status: 206))
        let capture = Capture()
        let manager = ServerAPIManager(transport: mock, cache: LoggingPluginTests.TinyCache(), plugins: [capture])

        #expect(try await manager.send(.test("/created").format(.data)).metrics.status == 201)
        #expect(try await manager.send(.test("/retried").retry(1, policy: .immediate)).metrics.status == 200)
        let missing = await expectError { try await manager.send(.test("/missing")) }
        #expect(missing?.kind == .httpStatus && missing?.metrics?.status == 404)
        // The last attempt got no response: the first one's 503 does not describe how the call ended.
        let dropped = await expectError { try await manager.send(.test("/dropped").retry(1, policy: .immediate)) }
        #expect(dropped?.kind == .cannotConnect && dropped?.metrics?.status == nil)
        let down = await expectError { try await manager.send(.test("/down")) }
        #expect(down?.kind == .cannotConnect && down?.metrics?.status == nil)
        let cachedCall = ServerAPI.test("/cached").cache(.returnCacheElseLoad)
        _ = try await manager.send(cachedCall)
        let cached = try await manager.send(cachedCall)
        #expect(cached.isFromCache && cached.metrics.status == 200)
        let feed = try await manager.stream(.test("/feed"))
        for try await _ in feed.lines {}
        #expect(await feed.finalMetrics.status == 206)
        #expect(
            capture.log.all == [
                "/created 201", "/retried 200", "/missing 404", "/dropped nil", "/down nil", "/cached 200",
                "/cached 200", "/feed 206",
            ])
    }

    @Test("plugins see the same metrics in didComplete as the caller gets")
    func pluginMetrics() async throws {
        final class Capture: ServerAPIPlugin {
            let log = Recorder<String>()
            func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
                log.append("\(metrics.attempts) \(metrics.transportName ?? "-") \(error?.metrics?.attempts ?? -1)")
            }
        }
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(500))
        let capture = Capture()
        let manager = ServerAPIManager(transport: mock, plugins: [capture])
        let error = await expectError { try await manager.send(.test()) }
        #expect(error?.kind == .httpStatus && error?.status == 500)
        #expect(capture.log.all == ["1 mock 1"])
    }
}
