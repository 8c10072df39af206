import Foundation
public import ServerAPIKit
import Synchronization
public import Tracing

/// Traces every call a `ServerAPIManager` makes with swift-distributed-tracing: one client span per call, named
/// and attributed as OpenTelemetry's HTTP client semantic conventions say, and the span's context injected into
/// the request's headers (W3C `traceparent` with an OpenTelemetry tracer) by the tracer.
///
/// ```swift
/// InstrumentationSystem.bootstrap(otelTracer)      // once, at startup (swift-otel, or any tracer)
/// let manager = ServerAPIManager(transport: CurlTransport(), plugins: [TracingPlugin()])
/// try await manager.send(api)                      // a child span of the caller's current span
/// ```
/// The span starts when the first attempt is prepared, as a child of `ServiceContext.current` (the caller's
/// task: a call runs in it), and ends with the call. Its name is the method (`GET`); its attributes are
/// `http.request.method`, `url.full` (redacted by `LoggingPlugin`'s rules), `server.address`, `server.port`,
/// `http.response.status_code`, `http.request.resend_count` when retried, and on failure `error.type` (the status
/// code for an HTTP status error, else the error's kind) with the span's status set to error. Each retry is a span
/// event `retry` with its attempt number. With no tracer bootstrapped, the no-op tracer makes this cost nearly
/// nothing.
///
/// - Important: Put it after plugins that change the URL or headers in `prepare`, so that the span sees the
///   request as sent, and before signing plugins, so that the injected headers are signed.
public struct TracingPlugin: ServerAPIPlugin {
    private let tracer: (any Tracer)?
    private let redactor: LoggingPlugin
    private let spans = CallSpans()

    /// Creates the plugin.
    /// - Parameters:
    ///   - tracer: The tracer; `nil` (the default) uses `InstrumentationSystem.tracer` when each call starts.
    ///   - redactedQueryKeys: Query names (any case) whose values are replaced in `url.full`.
    public init(
        tracer: (any Tracer)? = nil, redactedQueryKeys: Set<String> = LoggingPlugin.defaultRedactedQueryKeys
    ) {
        self.tracer = tracer
        self.redactor = LoggingPlugin(redactedQueryKeys: redactedQueryKeys, logsHeaders: false, sink: { _ in })
    }

    public func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        let span: any Span
        if let existing = spans.span(for: api.id) {
            span = existing
            span.addEvent(
                SpanEvent(name: "retry", attributes: ["http.request.resend_count": .int64(Int64(request.attempt - 1))]))
            span.attributes["http.request.resend_count"] = request.attempt - 1
        } else {
            span = startSpan(tracer, method: request.method, url: request.url)
            spans.set(span, for: api.id)
        }
        var request = request
        var headers = request.headers
        tracer.inject(span.context, into: &headers, using: HeadersInjector())
        request.headers = headers
        return request
    }

    public func didReceive(
        _ result: Result<TransportResponse, ServerAPIError>, for request: TransportRequest, api: ServerAPI
    ) {
        guard case .success(let response) = result, let span = spans.span(for: api.id) else { return }
        span.attributes["http.response.status_code"] = response.status
    }

    public func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
        let span: any Span
        if let started = spans.take(api.id) {
            span = started
        } else {
            // Answered from the cache, or failed before an attempt: a span all the same, so the call is seen.
            guard let url = try? api.resolvedURL() else { return }
            span = startSpan(self.tracer ?? InstrumentationSystem.tracer, method: api.method, url: url)
            if error == nil, metrics.attempts == 0 { span.attributes["serverapi.cache_hit"] = true }
        }
        if let transport = metrics.transportName { span.attributes["serverapi.transport"] = transport }
        if let error {
            if let status = error.status { span.attributes["http.response.status_code"] = status }
            let type =
                error.kind == .httpStatus
                ? error.status.map(String.init) ?? Self.errorType(error.kind)
                : Self.errorType(error.kind)
            span.attributes["error.type"] = type
            span.setStatus(SpanStatus(code: .error, message: redactor.redact(error.message)))
            span.recordError(error)
        }
        span.end()
    }

    private func startSpan(_ tracer: any Tracer, method: HTTPMethod, url: URL) -> any Span {
        let span = tracer.startSpan(method.rawValue, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        span.attributes["http.request.method"] = method.rawValue
        span.attributes["url.full"] = redactor.redact(url)
        if let host = url.host { span.attributes["server.address"] = host }
        if let port = url.port ?? (url.scheme == "https" ? 443 : url.scheme == "http" ? 80 : nil) {
            span.attributes["server.port"] = port
        }
        return span
    }

    /// A kind as OpenTelemetry's `error.type`: `timed_out`, `cannot_connect`, …
    static func errorType(_ kind: ServerAPIError.Kind) -> String {
        kind.rawValue.lowercased().replacingOccurrences(of: " ", with: "_")
    }
}

/// Writes a tracer's context into request headers, replacing a header of the same name.
struct HeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.replaceOrAdd(name: key, value: value)
    }
}

/// The span of each call in flight, by request id.
final class CallSpans: Sendable {
    private let spans = Mutex<[RequestID: any Span]>([:])

    func span(for id: RequestID) -> (any Span)? { spans.withLock { $0[id] } }

    func set(_ span: any Span, for id: RequestID) { spans.withLock { $0[id] = span } }

    func take(_ id: RequestID) -> (any Span)? { spans.withLock { $0.removeValue(forKey: id) } }
}
