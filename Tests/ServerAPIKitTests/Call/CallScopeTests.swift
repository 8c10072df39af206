import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

/// A scope's operation runs in its caller's task, and the scope cancels the calls it makes.
@Suite struct CallScopeTests {
    @Test("perform runs its operation in the caller's task: no task per call")
    func noTaskPerCall() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/a", .json("{}"))
        let manager = ServerAPIManager(transport: mock)
        let scope = RequestScope(manager: manager)
        let outside = withUnsafeCurrentTask { $0?.hashValue }
        let inside = try await scope.perform {
            _ = try await manager.send(.test("/a"))
            return withUnsafeCurrentTask { $0?.hashValue }
        }
        #expect(outside != nil)
        #expect(inside == outside)
        #expect(scope.activeCount == 0)
    }

    @Test(
        "a call the operation starts after its scope was cancelled ends with cancelled, without reaching the transport")
    func cancelledBeforeStart() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/a", .json("{}"))
        let manager = ServerAPIManager(transport: mock)
        let scope = RequestScope(manager: manager)
        let error = await expectError {
            try await scope.perform {
                scope.cancel()
                return try await manager.send(.test("/a"))
            }
        }
        #expect(error?.kind == .cancelled)
        #expect(mock.requestCount == 0)
        #expect(manager.inFlight.isEmpty)
        // The scope stays usable.
        _ = try await scope.send(.test("/a"))
        #expect(mock.requestCount == 1)
    }

    @Test("calls in the tasks an operation starts belong to its scope")
    func childTasks() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/a", .json("{}"))
        let manager = ServerAPIManager(transport: mock)
        let scope = RequestScope(manager: manager)
        let kinds = try await scope.perform {
            try await withThrowingTaskGroup(of: ServerAPIError.Kind?.self) { group in
                scope.cancel()
                for _ in 0..<3 {
                    group.addTask { await expectError { try await manager.send(.test("/a")) }?.kind }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(kinds == [.cancelled, .cancelled, .cancelled])
        #expect(mock.requestCount == 0)
    }
}
