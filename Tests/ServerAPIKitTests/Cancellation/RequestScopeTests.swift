import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Request scopes", .timeLimit(.minutes(1)))
struct RequestScopeTests {
    @Test("cancelling a scope cancels its calls with cancelled; calls outside it go on")
    func cancelScope() async throws {
        let clock = TestClock()
        let entered = EventCounter()
        let manager = ServerAPIManager(transport: gatedMock(clock, entered: entered))
        let scope = RequestScope(manager: manager)
        let inScope = [
            Task { try await scope.send(.test("/a")) },
            Task { try await scope.perform { try await manager.send(.test("/b"), progress: { _ in }) } },
            Task { try await scope.perform { try await manager.send(.test("/c")) } },
        ]
        let outside = Task { try await manager.send(.test("/d")) }
        await entered.wait(for: 4)
        #expect(scope.activeCount == 3)
        scope.cancel()
        for task in inScope { #expect(await expectError { try await task.value }?.kind == .cancelled) }
        #expect(scope.activeCount == 0)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        _ = try await outside.value

        // A cancelled scope still runs calls started afterwards.
        let later = Task { try await scope.send(.test("/e")) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        _ = try await later.value
    }

    @Test("deallocating the scope while its calls wait to retry cancels them, with no further attempt")
    func deallocationMidRetry() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/flaky", .status(503))
        let clock = TestClock()
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let outcomes = Outcomes()
        var scope: RequestScope? = RequestScope(manager: manager)
        weak let weakScope = scope
        for index in 0..<3 {
            scope?.send(.test("/flaky").retry(5)) { outcomes.record(index, $0) }
        }
        scope?.send(.test("/flaky").retry(5), progress: { _ in }, completion: { outcomes.record(3, $0) })
        await clock.waitForSleepers(4)
        #expect(mock.requestCount == 4)

        scope = nil
        #expect(weakScope == nil)
        await outcomes.done.wait(for: 4)
        for index in 0..<4 { #expect(outcomes.outcome(index)?.error?.kind == .cancelled) }
        clock.advance(by: .seconds(60))
        #expect(mock.requestCount == 4)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("an owner that goes away takes its calls with it")
    func ownerDeallocation() async throws {
        final class ViewModel: Sendable {
            let scope: RequestScope
            let outcomes: Outcomes
            init(manager: ServerAPIManager, outcomes: Outcomes) {
                scope = RequestScope(manager: manager)
                self.outcomes = outcomes
            }
            func load(_ index: Int) {
                scope.send(.test("/feed")) { [outcomes] result in outcomes.record(index, result) }
            }
        }
        let clock = TestClock()
        let entered = EventCounter()
        let manager = ServerAPIManager(transport: gatedMock(clock, entered: entered))
        let outcomes = Outcomes()
        var model: ViewModel? = ViewModel(manager: manager, outcomes: outcomes)
        model?.load(0)
        model?.load(1)
        await entered.wait(for: 2)
        model = nil
        await outcomes.done.wait(for: 2)
        #expect(outcomes.outcome(0)?.error?.kind == .cancelled && outcomes.outcome(1)?.error?.kind == .cancelled)
    }

    @Test("finished calls leave the scope; a scope without a manager fails clearly")
    func bookkeeping() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .json(#"{"id":7}"#))
        let manager = ServerAPIManager(transport: mock)
        let scope = RequestScope(manager: manager)
        struct Item: Decodable, Sendable { var id: Int }
        #expect(try await scope.send(.test(), decoding: Item.self).id == 7)
        _ = try await scope.send(.test())
        #expect(scope.activeCount == 0)

        let orphan = RequestScope()
        #expect(await expectError { try await orphan.send(.test()) }?.kind == .invalidRequest)
        let outcomes = Outcomes()
        orphan.send(.test()) { outcomes.record(0, $0) }
        await outcomes.done.wait()
        #expect(outcomes.outcome(0)?.error?.kind == .invalidRequest)
    }

    @Test("cancelling a scope while 200 calls start: every call ends exactly once, none is left behind")
    func cancelWhileStarting() async throws {
        let mock = MockTransport()
        mock.stub(handler: { _ in .json("{}", delay: .milliseconds(Int.random(in: 0...5))) })
        let manager = ServerAPIManager(transport: mock)
        let scope = RequestScope(manager: manager)
        let outcomes = Outcomes()
        let canceller = Task {
            for _ in 0..<20 {
                scope.cancel()
                await Task.yield()
            }
        }
        for index in 0..<200 { scope.send(.test("/\(index)")) { outcomes.record(index, $0) } }
        await canceller.value
        scope.cancel()
        await outcomes.done.wait(for: 200)
        #expect(outcomes.all.values.allSatisfy { $0.count == 1 })
        #expect(outcomes.all.values.allSatisfy { $0[0].value != nil || $0[0].error?.kind == .cancelled })
        #expect(scope.activeCount == 0)
    }
}
