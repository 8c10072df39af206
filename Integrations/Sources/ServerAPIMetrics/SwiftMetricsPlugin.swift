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
/// - `serverapi_cache_hits_total` (counter, `method`, `host`): calls answered from the cache;
/// - the resilience policies (see `ResiliencePolicies`): `serverapi_hedges_total` and `serverapi_hedge_wins_total`
///   (counters, `method`, `host`): calls that sent a hedge, and those the hedge answered;
///   `serverapi_retries_refused_total` (counter, `method`, `host`): retries the retry budget refused;
///   `serverapi_slot_wait_seconds` (timer, `host`): how long calls that queued for a concurrency slot waited;
///   `serverapi_concurrency_limit` (gauge, `host`): the origin's concurrency limit as the last call saw it;
///   `serverapi_circuit_transitions_total` (counter, `host`, `from`, `to`) and `serverapi_circuit_state`
///   (gauge, `host`: 0 closed, 1 half-open, 2 open): the circuit breakers' changes. Calls a policy turned
///   away count in `serverapi_requests_total` with `error_kind` `circuit_open` or `concurrency_limited`.
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
        recordResilience(metrics.resilience, method: api.method.rawValue, host: host)
        if fromCache {
            Counter(
                label: "\(prefix)_cache_hits_total", dimensions: [("method", api.method.rawValue), ("host", host)],
                factory: factory
            ).increment()
        }
    }

    public func circuitStateDidChange(_ change: CircuitStateChange) {
        let host = Self.host(change.origin)
        Counter(
            label: "\(prefix)_circuit_transitions_total",
            dimensions: [("host", host), ("from", change.from.rawValue), ("to", change.to.rawValue)], factory: factory
        ).increment()
        let value: Int =
            switch change.to {
            case .closed: 0
            case .halfOpen: 1
            case .open: 2
            }
        Gauge(label: "\(prefix)_circuit_state", dimensions: [("host", host)], factory: factory).record(value)
    }

    /// What the resilience policies did to a call.
    private func recordResilience(_ resilience: ResilienceMetrics, method: String, host: String) {
        let dimensions = [("method", method), ("host", host)]
        if resilience.hedged {
            Counter(label: "\(prefix)_hedges_total", dimensions: dimensions, factory: factory).increment()
        }
        if resilience.hedgeWon {
            Counter(label: "\(prefix)_hedge_wins_total", dimensions: dimensions, factory: factory).increment()
        }
        if resilience.retryRefusedByBudget {
            Counter(label: "\(prefix)_retries_refused_total", dimensions: dimensions, factory: factory).increment()
        }
        if resilience.waitedForSlot {
            Timer(label: "\(prefix)_slot_wait_seconds", dimensions: [("host", host)], factory: factory)
                .recordNanoseconds(Self.nanoseconds(resilience.slotWait))
        }
        if let limit = resilience.concurrencyLimit {
            Gauge(label: "\(prefix)_concurrency_limit", dimensions: [("host", host)], factory: factory).record(limit)
        }
    }

    /// An origin as the dimension `host`: its host, and its port unless it is the scheme's default.
    static func host(_ origin: ServerOrigin) -> String {
        let defaultPort = origin.scheme == "https" ? 443 : origin.scheme == "http" ? 80 : 0
        return origin.port == defaultPort ? origin.host : "\(origin.host):\(origin.port)"
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
