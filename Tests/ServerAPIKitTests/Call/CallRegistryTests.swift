import Foundation
import Testing

@_spi(Backend) @testable import ServerAPIKit

/// Which calls the registry and a scope cancel (id, tag, first, last, all, replaced, scope), against
/// calls that no transport runs: each selected call is cancelled with its reason, and runs its handlers.
@Suite struct CallRegistryTests {
    static func call(_ n: UInt64, tag: String? = nil, in registry: InFlightRegistry) -> Call {
        InFlightRegistryTests.call(n, tag: tag, in: registry)
    }

    /// Five calls in flight: 1 to 5, tagged odd and even.
    static func five() -> (InFlightRegistry, [Call]) {
        let registry = InFlightRegistry()
        let calls = (UInt64(1)...5).map { call($0, tag: $0 % 2 == 0 ? "even" : "odd", in: registry) }
        return (registry, calls)
    }

    /// The reason each call was cancelled with, `nil` for one still running (which does not read as cancelled).
    static func reasons(_ calls: [Call]) -> [CallStateMachine.CancelReason?] {
        calls.map { call in
            guard case .cancelled(let reason) = call.state else {
                #expect(!call.isCancelled)
                return nil
            }
            #expect(call.isCancelled)
            return reason
        }
    }

    @Test("By id and by tag, exactly the matching calls are cancelled, oldest first")
    func idAndTag() {
        let (registry, calls) = Self.five()
        #expect(registry.cancel(.id) { $0.id == RequestID(rawValue: 2) }.map(\.id.rawValue) == [2])
        #expect(registry.cancel(.tag) { $0.tag == "odd" }.map(\.id.rawValue) == [1, 3, 5])
        #expect(Self.reasons(calls) == [.tag, .id, .tag, nil, .tag])
        #expect(registry.all.map(\.id.rawValue) == [4])
    }

    @Test("First and last pick the oldest and newest still running; all takes the rest")
    func firstLastAll() {
        let (registry, calls) = Self.five()
        #expect(calls[0].end(failed: false))
        #expect(registry.cancelOne(first: true)?.id.rawValue == 2)
        #expect(registry.cancelOne(first: false)?.id.rawValue == 5)
        #expect(registry.cancel(.all) { _ in true }.map(\.id.rawValue) == [3, 4])
        #expect(Self.reasons(calls) == [nil, .first, .all, .all, .last])
        #expect(calls[0].state == .finished)
        #expect(registry.all.isEmpty && registry.cancelOne(first: true) == nil)
    }

    @Test("A replacing call cancels the ones it replaces as it registers")
    func replaced() {
        let (registry, calls) = Self.five()
        var api = ServerAPI(url: URL(string: "https://api.test/6")!)
        api.id = RequestID(rawValue: 6)
        api.tag = "odd"
        let newest = Call(api: api, request: TransportRequest(url: api.url!), registry: registry)
        registry.add(newest, replacing: { $0.tag == "odd" })
        #expect(Self.reasons(calls + [newest]) == [.replaced, nil, .replaced, nil, .replaced, nil])
        #expect(registry.all.map(\.id.rawValue) == [2, 4, 6])
    }

    @Test("A call that ends leaves the registry once, and the end is handed out once")
    func endLeaves() {
        let (registry, calls) = Self.five()
        #expect(calls[1].end(failed: true))
        #expect(!calls[1].end(failed: false))
        #expect(calls[1].state == .failed)
        #expect(registry.all.map(\.id.rawValue) == [1, 3, 4, 5])
        // A call cancelled by the registry ends later, when its transport reports it: once.
        _ = registry.cancel(.id) { $0.id == RequestID(rawValue: 3) }
        #expect(calls[2].end(failed: true))
        #expect(!calls[2].end(failed: true))
        #expect(registry.all.map(\.id.rawValue) == [1, 4, 5])
    }

    @Test("A scope cancels its calls, and an operation's later calls at once; other calls go on")
    func scope() {
        let registry = InFlightRegistry()
        let scope = RequestScope()
        let first = scope.open()
        let second = scope.open()
        let calls = (UInt64(1)...3).map { Self.call($0, in: registry) }
        for (call, run) in [(calls[0], first.run), (calls[1], second.run)] where call.listed(by: run) { run.add(call) }
        #expect(scope.activeCount == 2)
        scope.cancel()
        #expect(Self.reasons(calls) == [.scope, .scope, nil])
        // A cancelled operation's next call is cancelled as it joins, as its task would have been.
        let later = Self.call(4, in: registry)
        if later.listed(by: first.run) { first.run.add(later) }
        #expect(later.state == .cancelled(.scope))
        // The scope no longer counts them; the registry lists the calls until they end.
        #expect(scope.activeCount == 0)
        #expect(registry.all.count == 4)
        for call in calls + [later] { _ = call.end(failed: true) }
        #expect(registry.all.isEmpty)
    }

    @Test("A call's first attempt shows as attempting; a cancel before it refuses it, one after it cancels the call")
    func firstAttempt() {
        let registry = InFlightRegistry()
        let running = Self.call(1, in: registry)
        #expect(running.state == .running(.registered))
        #expect(running.attemptStarted(1))
        #expect(running.state == .running(.attempting(1)))
        let refused = Self.call(2, in: registry)
        #expect(registry.cancel(.id) { $0.id == RequestID(rawValue: 2) }.count == 1)
        #expect(!refused.attemptStarted(1))
        #expect(refused.state == .cancelled(.id))
        #expect(running.cancel(.tag))
        #expect(running.isCancelled)
        #expect(running.state == .cancelled(.tag))
        #expect(!running.attemptStarted(2))
    }

    @Test("A stage's cancel handler runs once, also when the cancel came before it was installed")
    func cancelHandler() {
        let registry = InFlightRegistry()
        let early = Self.call(1, in: registry)
        let late = Self.call(2, in: registry)
        let fired = Locked([UInt64]())
        _ = late.attemptStarted(1)
        late.onCancel { fired.withLock { $0.append(2) } }
        _ = early.attemptStarted(1)
        _ = registry.cancel(.all) { _ in true }
        #expect(fired.withLock { $0 } == [2])
        early.onCancel { fired.withLock { $0.append(1) } }
        #expect(fired.withLock { $0 } == [2, 1])
        #expect(!late.cancel(.id))
        #expect(fired.withLock { $0 } == [2, 1])
    }
}
