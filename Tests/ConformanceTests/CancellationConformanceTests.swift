import Foundation
@_spi(Backend) import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Cancellation at every point of a transfer, for every transport: prompt, `cancelled`, one
/// completion, and no callbacks afterwards.
@Suite("Conformance: cancellation")
struct CancellationConformanceTests {
    /// Where in the transfer the cancellation lands.
    enum Point: String, CaseIterable, Sendable {
        /// The Swift task was already cancelled when the transport was called.
        case beforeStart
        /// The request was sent; the server has not answered (httpbin `/delay/10`).
        case waitingForResponse
        /// The response is arriving, slowly (the fixture's `/drip`).
        case midBody
        /// The transfer has returned.
        case afterCompletion
    }

    /// The generous bound; DESIGN.md asks for 100 ms, measured values are printed.
    static let bound: Duration = TestTiming.bound(.seconds(1))

    @Test("cancelling ends the transfer promptly with cancelled", arguments: TransportKind.allCases, Point.allCases)
    func cancel(kind: TransportKind, point: Point) async throws {
        let transport = kind.make()
        let recorder = ProgressRecorder()
        let signal = EventCounter()
        let request: TransportRequest
        switch point {
        case .beforeStart, .afterCompletion:
            request = TransportRequest(url: try kind.httpbin("/get"), timeout: .seconds(30))
        case .waitingForResponse:
            request = TransportRequest(
                url: try kind.httpbin("/delay/10"), method: .post, body: .data(Data("x".utf8)),
                timeout: .seconds(30),
                progress: { report in
                    recorder.record(report)
                    if report.direction == .upload { signal.fire() }
                })
        case .midBody:
            request = TransportRequest(
                url: try kind.fixture("/drip?size=1000&interval_ms=50"), timeout: .seconds(30),
                progress: { report in
                    recorder.record(report)
                    if report.direction == .download, report.completed > 0 { signal.fire() }
                })
        }

        let startedAt = Locked<ContinuousClock.Instant?>(nil)
        let task = Task {
            if point == .beforeStart {
                withUnsafeCurrentTask { $0?.cancel() }
                startedAt.withLock { $0 = ContinuousClock.now }
            }
            defer { recorder.markReturned() }
            let response = try await transport.perform(request)
            return (response, ContinuousClock.now)
        }
        var cancelledAt = ContinuousClock.now
        switch point {
        case .beforeStart:
            _ = await task.result
            cancelledAt = startedAt.withLock { $0 } ?? cancelledAt
        case .waitingForResponse, .midBody:
            await signal.wait()
            cancelledAt = ContinuousClock.now
            task.cancel()
        case .afterCompletion:
            _ = try await task.value
            task.cancel()
        }
        let outcome = await task.result
        if point == .afterCompletion {
            #expect(try outcome.get().0.status == 200)
        } else {
            let error = #expect(throws: ServerAPIError.self) { try outcome.get() }
            #expect(error?.kind == .cancelled)
            #expect(error?.requestID == request.id)
            let latency = ContinuousClock.now - cancelledAt
            #expect(latency < Self.bound)
            if point != .beforeStart { print("cancellation latency [\(kind), \(point)]: \(latency)") }
        }
        // Any callback still queued for the cancelled transfer runs before this one completes.
        _ = try await transport.send(try kind.httpbin("/get"))
        #expect(recorder.lateReports == 0)
    }

    @Test(
        "hundreds of requests cancelled at every moment of their lives each end cleanly",
        arguments: TransportKind.allCases)
    func cancellationStorm(kind: TransportKind) async throws {
        let transport = kind.make()
        let base = try kind.fixture()
        // Redirects, slow bodies, downloads, loops, echoes and hangs: cancelled anywhere from before
        // the connection to after the completion, which is where races between the two live.
        let paths = [
            "/redirect-chain/5", "/drip?size=200&interval_ms=5", "/resource?size=300000", "/redirect-loop", "/echo",
            "/hang",
        ]
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in 0..<400 {
                group.addTask {
                    let url = URL(string: base + paths[index % paths.count])!
                    let call = Task { try await transport.send(url, timeout: .seconds(10)) }
                    // Not a synchronisation: it spreads the cancellations over the requests' lifetimes.
                    try? await Task.sleep(for: .milliseconds(index % 41))
                    call.cancel()
                    switch await call.result {
                    case .success(let response): return "response \(response.status)"
                    case .failure(let error): return "\((error as? ServerAPIError)?.kind.rawValue ?? "\(error)")"
                    }
                }
            }
            var outcomes: [String: Int] = [:]
            for await outcome in group { outcomes[outcome, default: 0] += 1 }
            return outcomes
        }
        let allowed: Set = ["response 200", "cancelled", "too many redirects"]
        #expect(Set(outcomes.keys).isSubset(of: allowed), "\(outcomes)")
        #expect(outcomes.values.reduce(0, +) == 400)
        #expect((outcomes["cancelled"] ?? 0) > 0)
    }

    @Test(
        "a call cancelled through its handle completes exactly once, with cancelled",
        arguments: ContractTransport.allCases)
    func cancelThroughManager(transport: ContractTransport) async throws {
        let arrived = EventCounter()
        let manager = ServerAPIManager(transport: transport.make(arrived: arrived))
        let api = ServerAPI(host: try transport.base(), path: "/delay/10", method: .post)
            .body(.text("x")).format(.data)
        let completions = Recorder<Result<ServerResult, ServerAPIError>>()
        let done = EventCounter()
        let finishedAt = Locked<ContinuousClock.Instant?>(nil)
        let handle = manager.send(
            api,
            progress: { report in if report.direction == .upload { arrived.fire() } },
            completion: { result in
                finishedAt.withLock { $0 = $0 ?? ContinuousClock.now }
                completions.append(result)
                done.fire()
            })
        await arrived.wait()
        let cancelledAt = ContinuousClock.now
        handle.cancel()
        await done.wait()
        let latency = (finishedAt.withLock { $0 } ?? cancelledAt) - cancelledAt
        #expect(latency < Self.bound)
        print("cancellation latency through the manager [\(transport)]: \(latency)")
        // Another call through the same manager and transport: anything still queued for the first runs before it ends.
        _ = try? await manager.send(ServerAPI(host: try transport.base(), path: "/status/200").format(.data))
        let results = completions.all
        #expect(results.count == 1)
        if case .failure(let error) = results.first {
            #expect(error.kind == .cancelled)
            #expect(error.requestID == api.id)
        } else {
            Issue.record("expected a cancelled failure, got \(String(describing: results.first))")
        }
        #expect(manager.inFlight.isEmpty)
    }

    @Test("cancelling by tag through the manager ends every call with that tag", arguments: ContractTransport.allCases)
    func cancelByTag(transport: ContractTransport) async throws {
        let arrived = EventCounter()
        let manager = ServerAPIManager(transport: transport.make(arrived: arrived))
        let base = try transport.base()
        let calls = (0..<3).map { _ in ServerAPI(host: base, path: "/delay/10").tag("batch").format(.data) }
        let tasks = calls.map { api in Task { try await manager.send(api) } }
        // The registry is filled as each task starts; wait (bounded) until all three are in it.
        try await poll("the three calls to be in flight", within: .seconds(30), every: .milliseconds(5)) {
            manager.inFlight.count >= calls.count
        }
        let cancelled = manager.cancel(tag: "batch")
        #expect(cancelled.count == calls.count)
        for task in tasks {
            let error = await #expect(throws: ServerAPIError.self) { _ = try await task.value }
            #expect(error?.kind == .cancelled)
        }
    }
}

extension Result {
    /// The error, for a failure.
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
