import Foundation
import ServerAPIKit
import ServerAPITestSupport
import ServerAPITesting
import Testing

/// The manager runs each call in its caller's task, with a cancellation token instead of a task of its
/// own; these check that cancellation and the registry behave as they did with a task per call.
@Suite struct ManagerTaskStartTests {
    final class CompletionCounter: ServerAPIPlugin {
        let completions = Recorder<ServerAPIError?>()
        func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
            completions.append(error)
        }
    }

    static let api = ServerAPI(host: "https://api.test", path: "/ping")

    @Test("A call answered at once completes once and leaves nothing in flight")
    func immediateAnswer() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/ping", .json(#"{"ok":true}"#))
        let counter = CompletionCounter()
        let manager = ServerAPIManager(transport: mock, plugins: [counter])
        for _ in 0..<3 {
            let result = try await manager.send(Self.api.keyPath("ok"))
            #expect(result.json == .bool(true))
        }
        #expect(manager.inFlight.isEmpty)
        #expect(counter.completions.count == 3)
    }

    @Test("A caller that is already cancelled gets cancelled without the transport being asked")
    func cancelledBeforeStart() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/ping", .json("{}"))
        let counter = CompletionCounter()
        let manager = ServerAPIManager(transport: mock, plugins: [counter])
        let outcome = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await Result { try await manager.send(Self.api) }
        }.value
        #expect((outcome.failureError as? ServerAPIError)?.kind == .cancelled)
        #expect(mock.requestCount == 0)
        #expect(counter.completions.all.map { $0?.kind } == [.cancelled])
    }

    @Test(
        "A call waiting on the transport is cancelled by tag, by id, by cancelAll and by its caller",
        .timeLimit(.minutes(1)), arguments: ["tag", "id", "all", "caller"])
    func cancelInFlight(way: String) async throws {
        let mock = MockTransport()
        mock.stub(.get, "/ping", .json("{}", delay: .seconds(60)))
        let manager = ServerAPIManager(transport: mock)
        let api = Self.api.tag("slow")
        let call = Task { await Result { try await manager.send(api) } }
        try await poll("the call to reach the mock", within: .seconds(30), every: .milliseconds(2)) {
            !manager.inFlight.isEmpty && mock.requestCount > 0
        }
        switch way {
        case "tag": #expect(manager.cancel(tag: "slow").map(\.id) == [api.id])
        case "id": #expect(manager.cancel(id: api.id).count == 1)
        case "all": #expect(manager.cancelAll().count == 1)
        default: call.cancel()
        }
        let outcome = await call.value
        #expect((outcome.failureError as? ServerAPIError)?.kind == .cancelled)
        #expect(manager.inFlight.isEmpty)
    }
}

extension Result where Failure == any Error {
    fileprivate init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }

    fileprivate var failureError: (any Error)? {
        if case .failure(let error) = self { error } else { nil }
    }
}
