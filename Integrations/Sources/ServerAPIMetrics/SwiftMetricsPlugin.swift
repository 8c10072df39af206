public import CoreMetrics
import Foundation
public import ServerAPIKit
import Synchronization

/// Counts and times every call a `ServerAPIManager` makes with swift-metrics.
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())      // once, at startup
/// let manager = ServerAPIManager(transport: CurlTransport(), plugins: [SwiftMetricsPlugin()])
/// ```
/// Metrics (with the default `prefix`):
/// - `serverapi_requests_total` (counter) and `serverapi_request_duration_seconds` (timer) per call, with the
///   dimensions `method`, `host`, `status_class` (`2xx` … `5xx`, `none` without a response), `transport`
///   (`curl`, `urlsession`, `cache`, `none`) and `error_kind` (`none` on success, else the error's kind);
/// - `serverapi_requests_in_flight` (a meter): calls between their first attempt and their end;
/// - `serverapi_retries_total` (counter, `method`, `host`): attempts after the first;
/// - `serverapi_cache_hits_total` (counter, `method`, `host`): calls answered from the cache.
public struct SwiftMetricsPlugin: ServerAPIPlugin {
    private let prefix: String
    private let factory: any MetricsFactory
    private let inFlight: Meter
    private let calls = InFlightCalls()

    /// Creates the plugin.
    /// - Parameters:
    ///   - prefix: What every metric's label starts with.
    ///   - factory: The metrics backend; the bootstrapped `MetricsSystem.factory` by default.
    public init(prefix: String = "serverapi", factory: any MetricsFactory = MetricsSystem.factory) {
        self.prefix = prefix
        self.factory = factory
        self.inFlight = Meter(label: "\(prefix)_requests_in_flight", dimensions: [], factory: factory)
    }

    public func willSend(_ request: TransportRequest, for api: ServerAPI) {
        if calls.start(api.id) { inFlight.increment() }
        guard request.attempt > 1 else { return }
        Counter(
            label: "\(prefix)_retries_total",
            dimensions: [("method", request.method.rawValue), ("host", Self.host(request.url))],
            factory: factory
        ).increment()
    }

    public func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
        if calls.end(api.id) { inFlight.decrement() }
        let host = (try? api.resolvedURL()).map(Self.host) ?? "none"
        let fromCache = error == nil && metrics.attempts == 0
        let transport = fromCache ? "cache" : metrics.transportName ?? "none"
        let status = error?.status ?? metrics.status
        let dimensions = [
            ("method", api.method.rawValue), ("host", host),
            ("status_class", status.map { "\($0 / 100)xx" } ?? (fromCache ? "2xx" : "none")),
            ("transport", transport), ("error_kind", error.map { Self.label($0.kind) } ?? "none"),
        ]
        Counter(label: "\(prefix)_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(label: "\(prefix)_request_duration_seconds", dimensions: dimensions, factory: factory)
            .recordNanoseconds(Self.nanoseconds(metrics.duration))
        if fromCache {
            Counter(
                label: "\(prefix)_cache_hits_total", dimensions: [("method", api.method.rawValue), ("host", host)],
                factory: factory
            ).increment()
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// A kind as a metric value: `http_status`, `timed_out`, `cannot_connect`, …
    static func label(_ kind: ServerAPIError.Kind) -> String {
        kind.rawValue.lowercased().replacingOccurrences(of: " ", with: "_")
    }

    /// A URL's host and port, as the dimension `host`.
    static func host(_ url: URL) -> String {
        guard let host = url.host else { return "none" }
        return url.port.map { "\(host):\($0)" } ?? host
    }
}

/// The calls in flight a metrics plugin has counted, by request id.
final class InFlightCalls: Sendable {
    private let calls = Mutex<Set<RequestID>>([])

    /// Marks a call as started. - Returns: Whether this is its first attempt.
    func start(_ id: RequestID) -> Bool {
        calls.withLock { $0.insert(id).inserted }
    }

    /// Forgets a call that ended. - Returns: Whether it was counted as in flight.
    func end(_ id: RequestID) -> Bool { calls.withLock { $0.remove(id) != nil } }
}
