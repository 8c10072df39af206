import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@_spi(Backend) @testable import ServerAPIKit

/// The ways a caller can cancel a call through the manager's registry.
enum RegistryCancel: String, CaseIterable, Sendable {
    case id, tag, first, last, all

    func cancel(_ api: ServerAPI, in manager: ServerAPIManager) -> [InFlightRequest] {
        switch self {
        case .id: manager.cancel(id: api.id)
        case .tag: manager.cancel(tag: api.tag ?? "")
        case .first: manager.cancelFirst().map { [$0] } ?? []
        case .last: manager.cancelLast().map { [$0] } ?? []
        case .all: manager.cancelAll()
        }
    }
}

@Suite("Cancellation")
struct ManagerCancellationTests {
    /// A mock whose calls report when they reach the transport, then hang for a minute.
    private func hangingMock(_ entered: EventCounter) -> MockTransport {
        let mock = MockTransport()
        mock.stub(handler: { _ in
            entered.fire()
            return .json("{}", delay: .seconds(60))
        })
        return mock
    }

    @Test("cancelling a call in the transport ends it with cancelled", arguments: RegistryCancel.allCases)
    func whileRunning(kind: RegistryCancel) async throws {
        let entered = EventCounter()
        let manager = ServerAPIManager(transport: hangingMock(entered))
        let api = ServerAPI.test().tag("search")
        let call = Task { try await manager.send(api) }
        await entered.wait()
        let cancelled = kind.cancel(api, in: manager)
        #expect(cancelled.map(\.id) == [api.id])
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
        #expect(error?.requestID == api.id)
        #expect(manager.inFlight.isEmpty)
    }

    @Test(
        "cancelling a call that waits to retry ends it with cancelled, without another attempt",
        arguments: RegistryCancel.allCases)
    func whileWaitingToRetry(kind: RegistryCancel) async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503), .json("{}"))
        let clock = TestClock()
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let api = ServerAPI.test().tag("t").retry(3)
        let call = Task { try await manager.send(api) }
        await clock.waitForSleepers(1)
        #expect(kind.cancel(api, in: manager).count == 1)
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
        #expect(mock.requestCount == 1)
    }

    @Test("cancelling after completion cancels nothing and leaves the result", arguments: RegistryCancel.allCases)
    func afterCompletion(kind: RegistryCancel) async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .json(#"{"a":1}"#))
        let manager = ServerAPIManager(transport: mock)
        let api = ServerAPI.test().tag("t")
        let result = try await manager.send(api)
        #expect(kind.cancel(api, in: manager).isEmpty)
        #expect(result.json?["a"] == .int(1))
    }

    @Test("cancelling the caller's task cancels the call")
    func taskCancel() async {
        let entered = EventCounter()
        let manager = ServerAPIManager(transport: hangingMock(entered))
        let call = Task { try await manager.send(.test()) }
        await entered.wait()
        call.cancel()
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
    }

    @Test("a task cancelled before it sends never reaches the transport")
    func beforeStart() async {
        let mock = MockTransport()
        mock.stub(.get, "/x", .json("{}"))
        let manager = ServerAPIManager(transport: mock)
        let gate = EventCounter()
        let call = Task {
            await gate.wait()
            return try await manager.send(.test())
        }
        call.cancel()
        gate.fire()
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
        #expect(mock.requestCount == 0)
    }

    @Test("first and last pick the oldest and newest call; tag cancels every call with it")
    func firstLastTag() async throws {
        let entered = EventCounter()
        let manager = ServerAPIManager(transport: hangingMock(entered))
        let a = ServerAPI.test("/a").tag("t")
        let b = ServerAPI.test("/b").tag("u")
        let c = ServerAPI.test("/c").tag("t")
        var calls: [Task<ServerResult, any Error>] = []
        for (index, api) in [a, b, c].enumerated() {
            calls.append(Task { try await manager.send(api) })
            await entered.wait(for: index + 1)
        }
        #expect(manager.inFlight.map(\.id) == [a.id, b.id, c.id])
        #expect(manager.inFlight.map(\.url?.path) == ["/a", "/b", "/c"])
        #expect(manager.cancelFirst()?.id == a.id)
        #expect(manager.cancelLast()?.id == c.id)
        #expect(manager.inFlight.map(\.id) == [b.id])
        #expect(manager.cancel(tag: "t").isEmpty)
        #expect(manager.cancel(tag: "u").map(\.id) == [b.id])
        for call in calls { #expect(await expectError { try await call.value }?.kind == .cancelled) }
        #expect(manager.cancelFirst() == nil && manager.cancelLast() == nil)
    }

    @Test("a completion handler runs exactly once, also when cancelled through its handle")
    func handleCancel() async {
        let entered = EventCounter()
        let manager = ServerAPIManager(transport: hangingMock(entered))
        let done = EventCounter()
        let outcome = Recorder<Result<ServerResult, ServerAPIError>>()
        let handle = manager.send(.test()) { result in
            outcome.append(result)
            done.fire()
        }
        await entered.wait()
        handle.cancel()
        handle.cancel()
        await done.wait()
        let results = outcome.all
        #expect(results.count == 1)
        if case .failure(let error) = results.first {
            #expect(error.kind == .cancelled)
        } else {
            Issue.record("expected a cancellation")
        }
    }

    @Test("1,000 concurrent calls, half cancelled at random: every completion runs exactly once")
    func exactlyOnceUnderLoad() async throws {
        let mock = MockTransport()
        mock.setRecording(false)
        mock.stub(handler: { request in
            let n = Int(request.url.lastPathComponent) ?? 0
            return .json(#"{"n":\#(n)}"#, delay: .milliseconds(n % 7 == 0 ? 0 : n % 50))
        })
        let manager = ServerAPIManager(transport: mock)
        let done = EventCounter()
        let counts = Locked<[Int: Int]>([:])
        let outcomes = Locked<(ok: Int, cancelled: Int, wrong: Int)>((0, 0, 0))
        var handles: [RequestHandle] = []
        for n in 0..<1000 {
            handles.append(
                manager.send(.test("/\(n)")) { result in
                    counts.withLock { $0[n, default: 0] += 1 }
                    outcomes.withLock { outcome in
                        switch result {
                        case .success(let value) where value.json?["n"] == .int(Int64(n)): outcome.ok += 1
                        case .failure(let error) where error.kind == .cancelled: outcome.cancelled += 1
                        default: outcome.wrong += 1
                        }
                    }
                    done.fire()
                })
        }
        for handle in handles.shuffled().prefix(500) { handle.cancel() }
        await done.wait(for: 1000)
        let final = counts.withLock { $0 }
        #expect(final.count == 1000)
        #expect(final.values.allSatisfy { $0 == 1 })
        let (ok, cancelled, wrong) = outcomes.withLock { $0 }
        #expect(wrong == 0)
        #expect(ok + cancelled == 1000)
        #expect(ok >= 500)  // the 500 never cancelled all succeed; some cancelled ones may have finished first
        #expect(manager.inFlight.isEmpty)
    }
}
