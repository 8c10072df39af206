import Foundation
import Testing

@testable import ServerAPIKit

/// The in-flight registry's bookkeeping: the order it lists calls in, and which calls each selection hands back,
/// over calls that no transport runs.
@Suite struct InFlightRegistryTests {
    static func call(_ n: UInt64, tag: String? = nil, in registry: InFlightRegistry) -> Call {
        var api = ServerAPI(url: URL(string: "https://api.test/\(n)")!)
        api.id = RequestID(rawValue: n)
        api.tag = tag
        let call = Call(api: api, request: TransportRequest(url: api.url!), registry: registry)
        registry.add(call)
        return call
    }

    @Test("Requests are listed oldest first; removing one that ended hands nothing back")
    func order() {
        let registry = InFlightRegistry()
        let calls = (1...3).map { Self.call($0, in: registry) }
        #expect(registry.all.map(\.id.rawValue) == [1, 2, 3])
        registry.remove(calls[1].key)
        registry.remove(calls[1].key)
        #expect(registry.all.map(\.id.rawValue) == [1, 3])
        #expect(registry.count == 2)
    }

    @Test("Cancelling by a match hands back every match once, oldest first, and forgets them")
    func removeWhere() {
        let registry = InFlightRegistry()
        for n in UInt64(1)...5 { _ = Self.call(n, tag: n % 2 == 0 ? "even" : "odd", in: registry) }
        #expect(registry.cancel(.tag) { $0.tag == "odd" }.map(\.id.rawValue) == [1, 3, 5])
        #expect(registry.cancel(.tag) { $0.tag == "odd" }.isEmpty)
        #expect(registry.all.map(\.id.rawValue) == [2, 4])
    }

    @Test("First and last pick the oldest and newest still in flight; an empty registry hands back nothing")
    func firstAndLast() {
        let registry = InFlightRegistry()
        let calls = (1...4).map { Self.call($0, in: registry) }
        registry.remove(calls[0].key)
        #expect(registry.cancelOne(first: true)?.id.rawValue == 2)
        #expect(registry.cancelOne(first: false)?.id.rawValue == 4)
        #expect(registry.cancelOne(first: true)?.id.rawValue == 3)
        #expect(registry.cancelOne(first: true) == nil && registry.cancelOne(first: false) == nil)
    }

    @Test("The call handed back is the one the request was added with, and it is cancelled")
    func members() {
        let registry = InFlightRegistry()
        let call = Self.call(1, in: registry)
        #expect(registry.cancelOne(first: true) == call.info)
        #expect(call.state == .cancelled(.first))
    }

    @Test("Thousands of adds and removes keep the order list compact and the order right")
    func compaction() {
        let registry = InFlightRegistry()
        let survivor = Self.call(0, in: registry)
        for n in 1...5000 {
            let call = Self.call(UInt64(n), in: registry)
            registry.remove(call.key)
        }
        #expect(registry.all.map(\.id.rawValue) == [0])
        let late = Self.call(9999, in: registry)
        #expect(registry.all.map(\.id.rawValue) == [0, 9999])
        registry.remove(survivor.key)
        registry.remove(late.key)
        #expect(registry.count == 0 && registry.all.isEmpty)
    }
}
