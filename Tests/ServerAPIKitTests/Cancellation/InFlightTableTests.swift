import Foundation
import Testing

@testable import ServerAPIKit

/// The in-flight table's events and the entries they hand back to be cancelled, without locks or tasks.
@Suite struct InFlightTableTests {
    static func info(_ n: UInt64, tag: String? = nil) -> InFlightRequest {
        InFlightRequest(
            id: RequestID(rawValue: n), tag: tag, method: .get, url: URL(string: "https://api.test/\(n)"),
            startedAt: Date(timeIntervalSince1970: 0))
    }

    @Test("Requests are listed oldest first; removing one that ended hands nothing back")
    func order() {
        var table = InFlightTable<CancellationToken>()
        let keys = (1...3).map { table.add(Self.info($0), member: CancellationToken()) }
        #expect(table.all.map(\.id.rawValue) == [1, 2, 3])
        table.remove(keys[1])
        table.remove(keys[1])
        #expect(table.all.map(\.id.rawValue) == [1, 3])
        #expect(table.count == 2)
    }

    @Test("Cancelling by a match hands back every match once, oldest first, and forgets them")
    func removeWhere() {
        var table = InFlightTable<CancellationToken>()
        for n in UInt64(1)...5 {
            _ = table.add(Self.info(n, tag: n % 2 == 0 ? "even" : "odd"), member: CancellationToken())
        }
        let victims = table.remove { $0.tag == "odd" }
        #expect(victims.map(\.info.id.rawValue) == [1, 3, 5])
        #expect(table.remove { $0.tag == "odd" }.isEmpty)
        #expect(table.all.map(\.id.rawValue) == [2, 4])
    }

    @Test("First and last pick the oldest and newest still in flight; an empty table hands back nothing")
    func firstAndLast() {
        var table = InFlightTable<CancellationToken>()
        let keys = (1...4).map { table.add(Self.info($0), member: CancellationToken()) }
        table.remove(keys[0])
        #expect(table.removeOne(first: true)?.info.id.rawValue == 2)
        #expect(table.removeOne(first: false)?.info.id.rawValue == 4)
        #expect(table.removeOne(first: true)?.info.id.rawValue == 3)
        #expect(table.removeOne(first: true) == nil && table.removeOne(first: false) == nil)
    }

    @Test("The entry handed back carries the token the request was added with")
    func tokens() {
        var table = InFlightTable<CancellationToken>()
        let token = CancellationToken()
        _ = table.add(Self.info(1), member: token)
        #expect(table.removeOne(first: true)?.member === token)
    }

    @Test("Thousands of adds and removes keep the order list compact and the order right")
    func compaction() {
        var table = InFlightTable<CancellationToken>()
        let survivor = table.add(Self.info(0), member: CancellationToken())
        for n in 1...5000 {
            let key = table.add(Self.info(UInt64(n)), member: CancellationToken())
            table.remove(key)
        }
        #expect(table.all.map(\.id.rawValue) == [0])
        let late = table.add(Self.info(9999), member: CancellationToken())
        #expect(table.all.map(\.id.rawValue) == [0, 9999])
        table.remove(survivor)
        table.remove(late)
        #expect(table.count == 0 && table.all.isEmpty)
    }
}
