import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Synchronization
import Testing

@testable import ServerAPIKit

@Suite("Coalescing", .timeLimit(.minutes(1)))
struct CoalescingTests {
    /// Answers with the credentials and query the call carried, so a test can tell who got whose response.
    private static func echo(_ request: TransportRequest) -> MockStub {
        .json([
            "auth": request.headers["Authorization"] ?? "", "cookie": request.headers["Cookie"] ?? "",
            "query": request.url.query ?? "",
            "digest": request.credentials.map { "\($0.user):\($0.password)" } ?? "",
        ])
    }

    @Test("identical GET calls in flight share one transport call, and each gets the result with its own id")
    func shareOneCall() async throws {
        let clock = TestClock()
        let mock = gatedMock(clock, answer: Self.echo)
        let manager = ServerAPIManager(transport: mock)
        let outcomes = Outcomes()
        let calls = (0..<10).map { _ in ServerAPI.test("/items").query("q", "tea").coalesced() }
        for (index, call) in calls.enumerated() { Task { await outcomes.run(index) { try await manager.send(call) } } }
        await manager.controls.flights.waitForJoins(10)
        await clock.waitForSleepers(1)
        #expect(mock.requestCount == 1)
        clock.advance(by: .seconds(1))
        await outcomes.done.wait(for: 10)
        for (index, call) in calls.enumerated() {
            let result = try #require(outcomes.outcome(index)?.value)
            #expect(result.requestID == call.id)
            #expect(result.json?["query"] == "q=tea")
        }
        #expect(mock.requestCount == 1)
        #expect(manager.controls.flights.flightCount == 0)
    }

    @Test(
        "each caller of a shared flight ends once for the plugins, with the flight's metrics; the flight itself does not"
    )
    func eachCallerEnds() async throws {
        let clock = TestClock()
        let mock = gatedMock(clock)
        let ends = Recorder<(RequestID, String, Int)>()
        let manager = ServerAPIManager(transport: mock, plugins: [ManagerPluginTests.EndRecorder(ends: ends)])
        let outcomes = Outcomes()
        let calls = (0..<3).map { _ in ServerAPI.test("/items").coalesced() }
        for (index, call) in calls.enumerated() { Task { await outcomes.run(index) { try await manager.send(call) } } }
        await manager.controls.flights.waitForJoins(3)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await outcomes.done.wait(for: 3)
        #expect(mock.requestCount == 1)
        #expect(Set(ends.all.map(\.0)) == Set(calls.map(\.id)))
        #expect(ends.all.count == 3)
        #expect(ends.all.allSatisfy { $0.1 == "ok" && $0.2 == 1 })
    }

    @Test("calls that differ in credentials, varying headers, query or body never share a response")
    func differentCallsDoNotShare() async throws {
        let clock = TestClock()
        let mock = gatedMock(clock, answer: Self.echo)
        let manager = ServerAPIManager(transport: mock)
        let base = ServerAPI.test("/me").coalesced()
        let calls = [
            base.setHeader("Authorization", "Bearer alice"), base.setHeader("Authorization", "Bearer bob"),
            base.setHeader("Cookie", "sid=alice"), base.setHeader("Cookie", "sid=bob"),
            base.setHeader("Accept-Language", "fr").varying("Accept-Language"),
            base.setHeader("Accept-Language", "de").varying("Accept-Language"),
            base.query("q", "1"), base.query("q", "2"), base.body(.text("one")), base.body(.text("two")),
            base.digestAuth(user: "alice", password: "a"), base.digestAuth(user: "bob", password: "b"),
            base.digestAuth(user: "alice", password: "guess"),
        ]
        let outcomes = Outcomes()
        for (index, call) in calls.enumerated() {
            for copy in 0..<3 {
                let call = call.id(.next())
                Task { await outcomes.run(index * 10 + copy) { try await manager.send(call) } }
            }
        }
        await manager.controls.flights.waitForJoins(calls.count * 3)
        await clock.waitForSleepers(calls.count)
        clock.advance(by: .seconds(1))
        await outcomes.done.wait(for: calls.count * 3)
        #expect(mock.requestCount == calls.count)
        for index in calls.indices {
            let request = try #require(calls[index].transportRequest() as TransportRequest?)
            for copy in 0..<3 {
                let json = try #require(outcomes.outcome(index * 10 + copy)?.value?.json)
                #expect(json["auth"] == .string(request.headers["Authorization"] ?? ""))
                #expect(json["cookie"] == .string(request.headers["Cookie"] ?? ""))
                #expect(json["query"] == .string(request.url.query ?? ""))
                #expect(json["digest"] == .string(request.credentials.map { "\($0.user):\($0.password)" } ?? ""))
            }
        }
    }

    @Test("cancelling one caller leaves the others; the last one to leave cancels the shared call")
    func cancellation() async throws {
        let clock = TestClock()
        let transportCancelled = EventCounter()
        let mock = gatedMock(clock, cancelled: transportCancelled)
        let manager = ServerAPIManager(transport: mock)
        let api = ServerAPI.test("/slow").coalesced()
        let tasks = (0..<3).map { _ in Task { try await manager.send(api.id(.next())) } }
        await manager.controls.flights.waitForJoins(3)
        await clock.waitForSleepers(1)

        for task in tasks.prefix(2) {
            task.cancel()
            #expect(await expectError { try await task.value }?.kind == .cancelled)
        }
        // The shared call keeps running while anyone waits for it.
        #expect(clock.sleeperCount == 1 && transportCancelled.count == 0)
        tasks[2].cancel()
        #expect(await expectError { try await tasks[2].value }?.kind == .cancelled)
        await transportCancelled.wait()
        #expect(clock.sleeperCount == 0)
        #expect(manager.controls.flights.flightCount == 0)

        // The next identical call does not join the abandoned call: it starts afresh.
        let next = Task { try await manager.send(api) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(try await next.value.json?["ok"] == .bool(true))
        #expect(mock.requestCount == 2)
    }

    @Test("the caller who started the shared call can leave: the others still get the result")
    func leaderLeaves() async throws {
        let clock = TestClock()
        let entered = EventCounter()
        let mock = gatedMock(clock, entered: entered)
        let manager = ServerAPIManager(transport: mock)
        let api = ServerAPI.test("/slow").coalesced()
        let leader = Task { try await manager.send(api) }
        await entered.wait()
        let follower = Task { try await manager.send(api.id(.next())) }
        await manager.controls.flights.waitForJoins(2)
        #expect(manager.cancel(id: api.id).count == 1)
        #expect(await expectError { try await leader.value }?.kind == .cancelled)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(try await follower.value.json?["ok"] == .bool(true))
        #expect(mock.requestCount == 1)
    }

    @Test("1,000 callers of 5 users, 500 cancelled at random: one call per user, nobody gets another's response")
    func thousandCallersGated() async throws {
        let clock = TestClock()
        let mock = gatedMock(clock, answer: Self.echo)
        let manager = ServerAPIManager(transport: mock)
        let users = 5
        let outcomes = Outcomes()
        var tasks: [Task<Void, Never>] = []
        for index in 0..<1000 {
            let api = ServerAPI.test("/me").setHeader("Authorization", "Bearer user\(index % users)").coalesced()
            tasks.append(Task { await outcomes.run(index) { try await manager.send(api) } })
        }
        await manager.controls.flights.waitForJoins(1000)
        await clock.waitForSleepers(users)
        // Keep the first caller of each user, so every shared call has someone waiting for it.
        let cancelled = Set((users..<1000).shuffled().prefix(500))
        for index in cancelled { tasks[index].cancel() }
        await outcomes.done.wait(for: 500)
        #expect(clock.sleeperCount == users)
        clock.advance(by: .seconds(1))
        await outcomes.done.wait(for: 1000)

        #expect(outcomes.all.count == 1000 && outcomes.all.values.allSatisfy { $0.count == 1 })
        for index in 0..<1000 {
            let outcome = try #require(outcomes.outcome(index))
            if cancelled.contains(index) {
                #expect(outcome.error?.kind == .cancelled)
            } else {
                #expect(outcome.value?.json?["auth"] == .string("Bearer user\(index % users)"))
            }
        }
        #expect(mock.requestCount == users)
        #expect(manager.controls.flights.flightCount == 0)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("1,000 callers, cancellations racing joins and completions: one outcome each, never a wrong one")
    func thousandCallersChaos() async throws {
        let mock = MockTransport()
        mock.stub(handler: { request in
            let stub = Self.echo(request)
            return MockStub(stub.outcome, delay: .microseconds(Int.random(in: 0...3000)))
        })
        let manager = ServerAPIManager(transport: mock, configuration: .init(coalescesIdenticalRequests: true))
        let users = 8
        let outcomes = Outcomes()
        var tasks: [Task<Void, Never>] = []
        for index in 0..<1000 {
            let api = ServerAPI.test("/me").query("page", "\(index % 3)")
                .setHeader("Authorization", "Bearer user\(index % users)")
            tasks.append(Task { await outcomes.run(index) { try await manager.send(api) } })
            if index % 2 == 1, let victim = (0...index).randomElement() { tasks[victim].cancel() }
        }
        await outcomes.done.wait(for: 1000)
        let cancelledTasks = Set(tasks.indices.filter { tasks[$0].isCancelled })
        #expect(outcomes.all.count == 1000 && outcomes.all.values.allSatisfy { $0.count == 1 })
        for index in 0..<1000 {
            let outcome = try #require(outcomes.outcome(index))
            if let json = outcome.value?.json {
                #expect(json["auth"] == .string("Bearer user\(index % users)"))
                #expect(json["query"] == .string("page=\(index % 3)"))
            } else {
                // Only a cancelled caller may fail; a caller that was not cancelled always gets its result.
                #expect(outcome.error?.kind == .cancelled && cancelledTasks.contains(index))
            }
        }
        #expect(mock.requestCount < 1000)
        #expect(manager.controls.flights.flightCount == 0)
        #expect(manager.inFlight.isEmpty)
    }

    @Test("POST is never coalesced, nor a call that opts out, nor a download")
    func notCoalesced() async throws {
        let clock = TestClock()
        let entered = EventCounter()
        let mock = gatedMock(clock, entered: entered)
        let manager = ServerAPIManager(transport: mock, configuration: .init(coalescesIdenticalRequests: true))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coalesce-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let calls = [
            ServerAPI.test("/p").method(.post).coalesced(), ServerAPI.test("/p").method(.post).coalesced(),
            ServerAPI.test("/g").coalesced(false), ServerAPI.test("/g").coalesced(false),
            ServerAPI.test("/f").download(to: directory.appendingPathComponent("a")),
            ServerAPI.test("/f").download(to: directory.appendingPathComponent("b")),
        ]
        let tasks = calls.map { call in Task { try await manager.send(call) } }
        await entered.wait(for: calls.count)
        #expect(mock.requestCount == calls.count)
        await clock.waitForSleepers(calls.count)
        clock.advance(by: .seconds(1))
        for task in tasks { _ = try await task.value }
    }

    @Test("the manager-wide default coalesces calls that say nothing")
    func managerDefault() async throws {
        let clock = TestClock()
        let mock = gatedMock(clock)
        let manager = ServerAPIManager(transport: mock, configuration: .init(coalescesIdenticalRequests: true))
        let tasks = (0..<4).map { _ in Task { try await manager.send(.test("/d")) } }
        await manager.controls.flights.waitForJoins(4)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        for task in tasks { _ = try await task.value }
        #expect(mock.requestCount == 1)
    }

    @Test("a shared call's failure reaches every caller, with each caller's id")
    func sharedFailure() async throws {
        let clock = TestClock()
        let mock = gatedMock(clock) { _ in .status(503) }
        let manager = ServerAPIManager(transport: mock)
        let calls = (0..<3).map { _ in ServerAPI.test("/down").coalesced() }
        let tasks = calls.map { call in Task { try await manager.send(call) } }
        await manager.controls.flights.waitForJoins(3)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        for (call, task) in zip(calls, tasks) {
            let error = await expectError { try await task.value }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 503 && error?.requestID == call.id)
        }
        #expect(mock.requestCount == 1)
    }

    @Test("progress of the shared call reaches every caller")
    func progressFanOut() async throws {
        let clock = TestClock()
        let mock = gatedMock(clock) { _ in .data(Data(count: 100)) }
        let manager = ServerAPIManager(transport: mock)
        let reports = Recorder<String>()
        let tasks = (0..<3).map { index in
            Task {
                try await manager.send(ServerAPI.test("/bytes").format(.data).coalesced()) { progress in
                    reports.append("\(index):\(progress.direction):\(progress.completed)")
                }
            }
        }
        await manager.controls.flights.waitForJoins(3)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        for task in tasks { _ = try await task.value }
        #expect(Set(reports.all) == ["0:download:100", "1:download:100", "2:download:100"])
    }
}
