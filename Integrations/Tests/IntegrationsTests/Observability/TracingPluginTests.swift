import Foundation
import InMemoryTracing
import ServerAPIKit
import ServerAPITesting
import ServerAPITracing
import Testing
import Tracing

@Suite struct TracingPluginTests {
    @Test(
        "a call is one client span with OpenTelemetry's HTTP attributes, its context sent in the headers",
        arguments: Backend.allCases)
    func span(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let manager = backend.manager(plugins: [TracingPlugin(tracer: tracer)])
        let url = try TestServers.httpbin("/headers?token=s3cret")
        let result = try await manager.send(ServerAPI(url: url).format(.json))
        let span = try #require(tracer.finishedSpans.only)
        #expect(span.operationName == "GET")
        #expect(span.kind == .client)
        #expect(span.attributes.get("http.request.method") == "GET")
        #expect(
            span.attributes.get("url.full")
                == .string(
                    url.absoluteString.replacingOccurrences(of: "s3cret", with: "<redacted>")))
        #expect(span.attributes.get("server.address") == .string(url.host ?? ""))
        #expect(span.attributes.get("server.port") == .int64(Int64(url.port ?? 0)))
        #expect(span.attributes.get("http.response.status_code") == 200)
        #expect(span.attributes.get("error.type") == nil)
        #expect(span.status == nil)
        // The tracer's injection reached the server: httpbin echoes the request headers.
        let headers = try #require(result.json?["headers"])
        #expect(headers["In-Memory-Trace-Id"]?.stringValue == span.traceID)
        #expect(headers["In-Memory-Span-Id"]?.stringValue == span.spanID)
    }

    @Test("the span is a child of the caller's span", arguments: Backend.allCases)
    func parent(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let manager = backend.manager(plugins: [TracingPlugin(tracer: tracer)])
        let url = try TestServers.httpbin("/get")
        try await tracer.withSpan("handle request", ofKind: .server) { _ in
            _ = try await manager.send(ServerAPI(url: url))
        }
        let spans = tracer.finishedSpans
        let parent = try #require(spans.first { $0.operationName == "handle request" })
        let child = try #require(spans.first { $0.operationName == "GET" })
        #expect(child.traceID == parent.traceID)
        #expect(child.parentSpanID == parent.spanID)
    }

    @Test("a failed call sets error.type and the span's status", arguments: Backend.allCases)
    func failure(backend: Backend) async throws {
        let tracer = InMemoryTracer()
        let manager = backend.manager(plugins: [TracingPlugin(tracer: tracer)])
        await #expect(throws: ServerAPIError.self) {
            try await manager.send(ServerAPI(url: try TestServers.httpbin("/status/502")))
        }
        await #expect(throws: ServerAPIError.self) { try await manager.send(ServerAPI(url: try unusedLoopbackURL())) }
        let spans = tracer.finishedSpans
        #expect(spans.count == 2)
        #expect(spans.map { $0.attributes.get("error.type") } == ["502", "cannot_connect"])
        #expect(spans.map { $0.status?.code } == [.error, .error])
        #expect(spans.first?.attributes.get("http.response.status_code") == 502)
    }

    @Test("retries are events on the call's one span")
    func retries() async throws {
        let tracer = InMemoryTracer()
        let mock = MockTransport()
        mock.stub(.get, "/flaky", .cannotConnect(), .cannotConnect(), .text("ok"))
        let manager = ServerAPIManager(transport: mock, plugins: [TracingPlugin(tracer: tracer)])
        _ = try await manager.send(
            ServerAPI(host: "https://api.example.com", path: "/flaky").format(.data).retry(2, policy: .immediate))
        let span = try #require(tracer.finishedSpans.only)
        #expect(span.events.map(\.name) == ["retry", "retry"])
        #expect(span.events.map { $0.attributes.get("http.request.resend_count") } == [1, 2])
        #expect(span.attributes.get("http.request.resend_count") == 2)
        #expect(span.attributes.get("server.port") == 443)
        // Every attempt carried the one span's context.
        #expect(mock.requests.map { $0.headers["in-memory-span-id"] } == Array(repeating: span.spanID, count: 3))
    }

    @Test("the bootstrapped tracer is used, and with none the call runs untraced")
    func bootstrappedAndNoOp() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .text("ok"))
        let manager = ServerAPIManager(transport: mock, plugins: [TracingPlugin()])
        let api = ServerAPI(host: "https://api.example.com", path: "/x").format(.data)
        // No tracer: the no-op tracer injects nothing.
        _ = try await manager.send(api)
        #expect(mock.requests.first?.headers.contains("in-memory-trace-id") == false)
        // A tracer made current for this task (as InstrumentationSystem.bootstrap makes one for the process).
        let tracer = InMemoryTracer()
        try await withTracer(tracer) {
            _ = try await manager.send(api)
        }
        #expect(tracer.finishedSpans.count == 1)
        #expect(mock.requests.last?.headers["in-memory-trace-id"] == tracer.finishedSpans.first?.traceID)
    }
}

extension Array {
    /// The one element, or `nil` when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
