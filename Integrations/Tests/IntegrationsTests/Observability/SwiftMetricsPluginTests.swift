import Foundation
import Metrics
import MetricsTestKit
import ServerAPIKit
import ServerAPIMetrics
import ServerAPITesting
import Testing

@Suite struct SwiftMetricsPluginTests {
    private func dimensions(
        host: String, status: String, transport: String, error: String = "none"
    ) -> [(String, String)] {
        [("method", "GET"), ("host", host), ("status_class", status), ("transport", transport), ("error_kind", error)]
    }

    private func host(_ url: URL) -> String { "\(url.host ?? ""):\(url.port ?? 80)" }

    @Test(
        "every call is counted and timed by method, host, status class, transport and error kind",
        arguments: Backend.allCases)
    func countedAndTimed(backend: Backend) async throws {
        let metrics = TestMetrics()
        let manager = backend.manager(plugins: [SwiftMetricsPlugin(factory: metrics)])
        let base = try TestServers.httpbin()
        _ = try await manager.send(ServerAPI(url: try TestServers.httpbin("/get")))
        _ = try await manager.send(ServerAPI(url: try TestServers.httpbin("/get")))
        await #expect(throws: ServerAPIError.self) {
            try await manager.send(ServerAPI(url: try TestServers.httpbin("/status/503")))
        }
        let ok = dimensions(host: host(base), status: "2xx", transport: backend.rawValue)
        let failed = dimensions(host: host(base), status: "5xx", transport: backend.rawValue, error: "http_status")
        #expect(metrics.counterTotal(label: "serverapi_requests_total") == 3)
        #expect(try metrics.expectCounter("serverapi_requests_total", ok).totalValue == 2)
        #expect(try metrics.expectCounter("serverapi_requests_total", failed).totalValue == 1)
        let timer = try metrics.expectTimer("serverapi_request_duration_seconds", ok)
        #expect(timer.values.count == 2)
        #expect(timer.values.allSatisfy { $0 > 0 })
        #expect(try metrics.expectTimer("serverapi_request_duration_seconds", failed).values.count == 1)
        // Every call has ended: none in flight.
        #expect(try metrics.expectMeter("serverapi_requests_in_flight").lastValue == 0)
    }

    @Test("a call that cannot connect counts with no status class and its error kind", arguments: Backend.allCases)
    func cannotConnect(backend: Backend) async throws {
        let metrics = TestMetrics()
        let manager = backend.manager(plugins: [SwiftMetricsPlugin(factory: metrics)])
        let url = try unusedLoopbackURL()
        await #expect(throws: ServerAPIError.self) { try await manager.send(ServerAPI(url: url)) }
        let counter = try #require(metrics.counters(label: "serverapi_requests_total").first)
        let dimensions = Dictionary(uniqueKeysWithValues: counter.dimensions.map { ($0.0, $0.1) })
        #expect(dimensions["status_class"] == "none")
        #expect(dimensions["error_kind"] == "cannot_connect")
        #expect(dimensions["host"] == "127.0.0.1:\(url.port ?? 0)")
    }

    @Test("the in-flight meter counts calls between their first attempt and their end", arguments: Backend.allCases)
    func inFlight(backend: Backend) async throws {
        let metrics = TestMetrics()
        let manager = backend.manager(plugins: [SwiftMetricsPlugin(factory: metrics)])
        let meter = try metrics.expectMeter("serverapi_requests_in_flight")
        let slow = Task { try await manager.send(ServerAPI(url: try TestServers.httpbin("/delay/5")).tag("slow")) }
        #expect(await poll { meter.lastValue == 1 })
        _ = manager.cancel(tag: "slow")
        _ = try? await slow.value
        #expect(meter.lastValue == 0)
        #expect(meter.values == [1, 0])
    }

    @Test("retries and cache hits are counted")
    func retriesAndCacheHits() async throws {
        let metrics = TestMetrics()
        let mock = MockTransport()
        mock.stub(.get, "/flaky", .cannotConnect(), .cannotConnect(), .text("ok"))
        let manager = ServerAPIManager(
            transport: mock, cache: MemoryCacheForTests.make(), plugins: [SwiftMetricsPlugin(factory: metrics)])
        let api = ServerAPI(host: "https://api.example.com", path: "/flaky").format(.data).retry(2, policy: .immediate)
            .cache(.returnCacheElseLoad)
        _ = try await manager.send(api)
        _ = try await manager.send(api)
        #expect(
            try metrics.expectCounter(
                "serverapi_retries_total", [("method", "GET"), ("host", "api.example.com")]
            ).totalValue == 2)
        #expect(
            try metrics.expectCounter("serverapi_cache_hits_total", [("method", "GET"), ("host", "api.example.com")])
                .totalValue == 1)
        #expect(
            try metrics.expectCounter(
                "serverapi_requests_total", dimensions(host: "api.example.com", status: "2xx", transport: "cache")
            ).totalValue == 1)
        #expect(
            try metrics.expectCounter(
                "serverapi_requests_total", dimensions(host: "api.example.com", status: "2xx", transport: "mock")
            ).totalValue == 1)
    }
}

@Suite struct SwiftMetricsResilienceTests {
    @Test("circuit transitions, refused retries and rejected calls are counted")
    func resilience() async throws {
        let metrics = TestMetrics()
        let clock = TestClock()
        let mock = MockTransport()
        mock.stub(handler: { _ in .status(503) })
        var configuration = ServerAPIManager.Configuration(clock: clock)
        configuration.resilience = ResiliencePolicies(
            retryBudget: RetryBudget(percentCanRetry: 0, minRetriesPerSecond: 0),
            circuitBreaker: .consecutiveFailures(1, openFor: .seconds(5)))
        let manager = ServerAPIManager(
            transport: mock, plugins: [SwiftMetricsPlugin(factory: metrics)], configuration: configuration)
        let api = ServerAPI(host: "https://api.example.com", path: "/busy").retry(2, policy: .immediate)
        _ = try? await manager.send(api)
        _ = try? await manager.send(api.id(.next()))
        let host = [("method", "GET"), ("host", "api.example.com")]
        #expect(try metrics.expectCounter("serverapi_retries_refused_total", host).totalValue == 1)
        #expect(
            try metrics.expectCounter(
                "serverapi_circuit_transitions_total",
                [("host", "api.example.com"), ("from", "closed"), ("to", "open")]
            ).totalValue == 1)
        #expect(try metrics.expectGauge("serverapi_circuit_state", [("host", "api.example.com")]).lastValue == 2)
        let rejected = metrics.counters(label: "serverapi_requests_total").filter { counter in
            counter.dimensions.contains { $0.0 == "error_kind" && $0.1 == "circuit_open" }
        }
        #expect(rejected.map(\.totalValue) == [1])
    }
}
