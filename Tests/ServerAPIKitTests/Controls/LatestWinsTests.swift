import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Latest wins", .timeLimit(.minutes(1)))
struct LatestWinsTests {
    @Test("a replacing call cancels the earlier unfinished call with the same tag, which ends with cancelled")
    func sameTag() async throws {
        let clock = TestClock()
        let entered = EventCounter()
        let mock = gatedMock(clock, entered: entered) { request in .json(["q": request.url.query ?? ""]) }
        let manager = ServerAPIManager(transport: mock)
        let search = ServerAPI.test("/search").tag("search").replacesInFlight()
        let first = Task { try await manager.send(search.query("q", "s")) }
        await entered.wait()
        let second = Task { try await manager.send(search.id(.next()).query("q", "sw")) }
        #expect(await expectError { try await first.value }?.kind == .cancelled)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(try await second.value.json?["q"] == "q=sw")
    }

    @Test("without a tag, the same method and endpoint are replaced whatever the query; others are not")
    func sameEndpoint() async throws {
        let clock = TestClock()
        let entered = EventCounter()
        let mock = gatedMock(clock, entered: entered)
        let manager = ServerAPIManager(transport: mock)
        let old = Task { try await manager.send(.test("/search").query("q", "a")) }
        let otherPath = Task { try await manager.send(.test("/suggest").query("q", "a")) }
        let otherMethod = Task { try await manager.send(.test("/search").method(.post)) }
        let tagged = Task { try await manager.send(.test("/search").tag("t")) }
        await entered.wait(for: 4)
        let latest = Task { try await manager.send(.test("/search").query("q", "ab").replacesInFlight()) }
        #expect(await expectError { try await old.value }?.kind == .cancelled)
        await clock.waitForSleepers(3)
        clock.advance(by: .seconds(1))
        for task in [otherPath, otherMethod, latest] { _ = try await task.value }
        // A tagged call is replaced only by calls with its tag; an untagged replacement matches by endpoint.
        #expect(await expectError { try await tagged.value }?.kind == .cancelled)
    }

    @Test("a call that does not ask to replace cancels nothing")
    func optIn() async throws {
        let clock = TestClock()
        let entered = EventCounter()
        let manager = ServerAPIManager(transport: gatedMock(clock, entered: entered))
        let first = Task { try await manager.send(.test("/search").tag("s")) }
        await entered.wait()
        let second = Task { try await manager.send(.test("/search").tag("s")) }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        _ = try await first.value
        _ = try await second.value
    }

    @Test("typing: of 30 keystrokes, each sent while the previous one is in flight, only the last one completes")
    func typing() async throws {
        let clock = TestClock()
        let entered = EventCounter()
        let mock = gatedMock(clock, entered: entered) { request in .json(["q": request.url.query ?? ""]) }
        let manager = ServerAPIManager(transport: mock)
        let outcomes = Outcomes()
        let text = "search as you type, quickly!!!"
        for length in 1...30 {
            let query = String(text.prefix(length))
            manager.send(ServerAPI.test("/search").query("q", query).replacesInFlight()) { result in
                outcomes.record(length, result)
            }
            await entered.wait(for: length)
        }
        await outcomes.done.wait(for: 29)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await outcomes.done.wait(for: 30)
        let expected = ServerAPI.test("/search").query("q", String(text.prefix(30)))
        #expect(try outcomes.outcome(30)?.value?.json?["q"] == .string(expected.resolvedURL().query ?? ""))
        for length in 1..<30 { #expect(outcomes.outcome(length)?.error?.kind == .cancelled) }
    }

    @Test("rapid fire: of 200 replacing calls started at once, exactly the last one registered survives")
    func rapidFire() async throws {
        let clock = TestClock()
        let manager = ServerAPIManager(transport: gatedMock(clock))
        let outcomes = Outcomes()
        let calls = (0..<200).map { ServerAPI.test("/search").query("q", "\($0)").tag("s").replacesInFlight() }
        await withTaskGroup(of: Void.self) { group in
            for (index, call) in calls.enumerated() {
                group.addTask { await outcomes.run(index) { try await manager.send(call) } }
            }
            await outcomes.done.wait(for: 199)
            let survivors = manager.inFlight
            #expect(survivors.count == 1)
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(1))
            await group.waitForAll()
            let winners = outcomes.all.filter { $0.value.first?.value != nil }.map(\.key)
            #expect(winners.map { calls[$0].id } == survivors.map(\.id))
        }
        #expect(outcomes.all.values.allSatisfy { $0.count == 1 })
        #expect(outcomes.all.values.filter { $0.first?.error?.kind == .cancelled }.count == 199)
        #expect(manager.inFlight.isEmpty)
    }
}
