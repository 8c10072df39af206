import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Synchronization
import Testing

@_spi(Backend) @testable import ServerAPIKit

@Suite("Auth refresh", .timeLimit(.minutes(1)))
struct AuthRefreshPluginTests {
    struct RefreshFailed: Error, Equatable {}

    /// A mock that accepts only `Bearer <valid>` on `/me`, recording the tokens it saw.
    private static func guardedMock(valid: @escaping @Sendable () -> String) -> MockTransport {
        let mock = MockTransport()
        mock.stub(handler: { request in
            request.headers["Authorization"] == "Bearer \(valid())" ? .json(#"{"me":1}"#) : .status(401)
        })
        return mock
    }

    @Test("20 concurrent calls rejected together trigger exactly one refresh, then all retry with the new token")
    func oneRefreshForAWave() async throws {
        let arrived = EventCounter()
        let mock = MockTransport()
        mock.stub(handler: { request in
            if request.headers["Authorization"] == "Bearer fresh" { return .json(#"{"me":1}"#) }
            // Hold every first attempt until all 20 are in, so the 401s arrive as one wave.
            arrived.fire()
            await arrived.wait(for: 20)
            return .status(401)
        })
        let refreshes = Atomic<Int>(0)
        let auth = AuthRefreshPlugin(token: "stale") { expired in
            #expect(expired == "stale")
            refreshes.add(1, ordering: .relaxed)
            await Task.yield()
            return "fresh"
        }
        let manager = ServerAPIManager(transport: mock, plugins: [auth])
        let results = try await withThrowingTaskGroup(of: ServerResult.self) { group in
            for index in 0..<20 { group.addTask { try await manager.send(.test("/me/\(index)")) } }
            return try await group.reduce(into: [ServerResult]()) { $0.append($1) }
        }
        #expect(results.count == 20 && results.allSatisfy { $0.json?["me"] == .int(1) })
        #expect(refreshes.load(ordering: .relaxed) == 1)
        #expect(auth.refreshCount == 1 && auth.token == "fresh")
        let sent = mock.requests.map { $0.headers["Authorization"] }
        #expect(sent.filter { $0 == "Bearer stale" }.count == 20)
        #expect(sent.filter { $0 == "Bearer fresh" }.count == 20)
    }

    @Test("a call rejected with an older token retries with the current one, without refreshing again")
    func staleRejection() async throws {
        let slowSent = EventCounter()
        let refreshed = EventCounter()
        let mock = MockTransport()
        mock.stub(handler: { request in
            switch (request.url.path, request.headers["Authorization"]) {
            case (_, "Bearer v2"): return .json("{}")
            case ("/slow", _):
                // Sent with v1; answered 401 only once the refresh it could have triggered is over.
                slowSent.fire()
                await refreshed.wait()
                return .status(401)
            default: return .status(401)
            }
        })
        let auth = AuthRefreshPlugin(token: "v1") { _ in "v2" }
        let manager = ServerAPIManager(transport: mock, plugins: [auth])
        let slow = Task { try await manager.send(.test("/slow")) }
        await slowSent.wait()
        _ = try await manager.send(.test("/fast"))
        #expect(auth.refreshCount == 1 && auth.token == "v2")
        refreshed.fire()
        _ = try await slow.value
        #expect(auth.refreshCount == 1)
        let slowTokens = mock.requests.filter { $0.url.path == "/slow" }.map { $0.headers["Authorization"] }
        #expect(slowTokens == ["Bearer v1", "Bearer v2"])
    }

    @Test("a failing refresh fails every waiting call clearly, with the refresh's error underneath")
    func failingRefresh() async throws {
        let arrived = EventCounter()
        let mock = MockTransport()
        mock.stub(handler: { _ in
            arrived.fire()
            await arrived.wait(for: 5)
            return .status(401)
        })
        let auth = AuthRefreshPlugin(token: "old") { _ in throw RefreshFailed() }
        let manager = ServerAPIManager(transport: mock, plugins: [auth])
        let errors = await withTaskGroup(of: ServerAPIError?.self) { group in
            for index in 0..<5 { group.addTask { await expectError { try await manager.send(.test("/\(index)")) } } }
            return await group.reduce(into: [ServerAPIError?]()) { $0.append($1) }
        }
        #expect(errors.count == 5)
        for error in errors {
            #expect(error?.kind == .httpStatus && error?.status == 401)
            #expect(error?.underlying as? RefreshFailed == RefreshFailed())
            #expect(error?.message.contains("refreshing the token failed") == true)
            #expect(error?.metrics != nil)
        }
        #expect(auth.refreshCount == 1)
        #expect(mock.requestCount == 5)
    }

    @Test(
        "a rejection of the wave that arrives after its refresh failed shares that failure; a later call refreshes anew"
    )
    func lateRejectionOfAFailedWave() async throws {
        let fastDone = EventCounter()
        let fastArrived = EventCounter()
        let lateArrived = EventCounter()
        let mock = MockTransport()
        mock.stub(handler: { request in
            if request.url.path == "/late" {
                // Sent with the same token as the others, answered only once their refresh failed.
                lateArrived.fire()
                await fastDone.wait(for: 4)
            } else if request.url.path.hasPrefix("/fast") {
                fastArrived.fire()
                await fastArrived.wait(for: 4)
                await lateArrived.wait()
            }
            return .status(401)
        })
        let auth = AuthRefreshPlugin(token: "old") { _ in throw RefreshFailed() }
        let manager = ServerAPIManager(transport: mock, plugins: [auth])
        let late = Task { await expectError { try await manager.send(.test("/late")) } }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<4 {
                group.addTask {
                    let error = await expectError { try await manager.send(.test("/fast/\(index)")) }
                    #expect(error?.kind == .httpStatus)
                    #expect(error?.underlying as? RefreshFailed == RefreshFailed())
                    fastDone.fire()
                }
            }
        }
        let lateError = await late.value
        #expect(lateError?.kind == .httpStatus && lateError?.status == 401)
        #expect(lateError?.underlying as? RefreshFailed == RefreshFailed())
        #expect(auth.refreshCount == 1)
        #expect(mock.requestCount == 5)

        // A call sent after that wave ended is a new wave: it may refresh again.
        let next = await expectError { try await manager.send(.test("/next")) }
        #expect(next?.kind == .httpStatus)
        #expect(next?.underlying as? RefreshFailed == RefreshFailed())
        #expect(auth.refreshCount == 2)
    }

    @Test("a server that always answers 401 ends: at most maxRefreshes refreshes in the window")
    func refreshLoop() async throws {
        let mock = MockTransport()
        mock.stub(handler: { _ in .status(401) })
        let clock = TestClock()
        let counter = Atomic<Int>(0)
        let auth = AuthRefreshPlugin(
            token: "t0", configuration: .init(maxRefreshes: 2, window: .seconds(60), clock: clock)
        ) { _ in "t\(counter.add(1, ordering: .relaxed).newValue)" }
        let manager = ServerAPIManager(
            transport: mock, plugins: [auth], configuration: .init(maxPluginRetries: 10))

        let first = await expectError { try await manager.send(.test()) }
        #expect(first?.kind == .httpStatus)
        #expect(first?.status == 401)
        #expect(first?.message.contains("after 2 token refreshes") == true)
        #expect(auth.refreshCount == 2)
        #expect(mock.requests.map { $0.headers["Authorization"] } == ["Bearer t0", "Bearer t1", "Bearer t2"])

        // Within the window, a rejected call fails at once, without another refresh.
        let second = await expectError { try await manager.send(.test()) }
        #expect(second?.kind == .httpStatus)
        #expect(second?.message.contains("not refreshing again") == true)
        #expect(auth.refreshCount == 2 && mock.requestCount == 4)

        clock.advance(by: .seconds(61))
        let third = await expectError { try await manager.send(.test()) }
        #expect(third?.kind == .httpStatus && third?.status == 401)
        #expect(auth.refreshCount == 4)
    }

    @Test("with the default limits, an always-401 server still ends after the manager's plugin retries")
    func defaultLimits() async {
        let mock = MockTransport()
        mock.stub(handler: { _ in .status(401) })
        let auth = AuthRefreshPlugin(token: "a") { _ in UUID().uuidString }
        let manager = ServerAPIManager(transport: mock, plugins: [auth])
        let error = await expectError { try await manager.send(.test()) }
        #expect(error?.kind == .httpStatus && error?.status == 401)
        #expect(mock.requestCount == 3)  // the first attempt and maxPluginRetries (2) retries
        // The plugin cannot know the manager has no retry left for the third rejection, so it refreshes once more.
        #expect(auth.refreshCount == 3)
    }

    @Test("a configured business code triggers the refresh too")
    func businessCode() async throws {
        let mock = MockTransport()
        mock.stub(handler: { request in
            request.headers["Authorization"] == "Bearer new"
                ? .json(#"{"code":0,"data":{"me":1}}"#) : .json(#"{"code":40101,"msg":"token expired"}"#)
        })
        let auth = AuthRefreshPlugin(token: "old", configuration: .init(businessCodes: ["40101"])) { _ in "new" }
        let manager = ServerAPIManager(transport: mock, formatter: TestEnvelopeFormatter(), plugins: [auth])
        let result = try await manager.send(.test())
        #expect(result.json?["me"] == .int(1))
        #expect(auth.refreshCount == 1)
    }

    @Test("a refresh that calls the same manager neither deadlocks nor refreshes itself")
    func reentrantRefresh() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/login", .json(#"{"token":"new"}"#))
        mock.stub(.get, "/me", .status(401))
        let valid = Locked("new")
        mock.stub(handler: { request in
            request.headers["Authorization"] == "Bearer \(valid.withLock { $0 })" ? .json("{}") : .status(401)
        })
        let box = Locked<ServerAPIManager?>(nil)
        let auth = AuthRefreshPlugin(token: "old") { _ in
            guard let manager = box.withLock({ $0 }) else { throw RefreshFailed() }
            let login = try await manager.send(.test("/login").method(.post))
            return login.json?["token"]?.stringValue ?? ""
        }
        let manager = ServerAPIManager(transport: mock, plugins: [auth])
        box.withLock { $0 = manager }
        _ = try await manager.send(.test("/data"))
        #expect(auth.refreshCount == 1)
        #expect(mock.requests.first { $0.url.path == "/login" }?.headers["Authorization"] == nil)

        // A login that is itself rejected fails the refresh instead of waiting for itself.
        mock.stub(.post, "/login", .status(401))
        valid.withLock { $0 = "never" }
        let error = await expectError { try await manager.send(.test("/data")) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.message.contains("refreshing the token failed") == true)
        #expect((error?.underlying as? ServerAPIError)?.status == 401)
    }

    @Test("a call that sets its own Authorization keeps it, and its 401 is not refreshed")
    func ownCredentials() async {
        let mock = Self.guardedMock(valid: { "new" })
        let auth = AuthRefreshPlugin(token: "old") { _ in "new" }
        let manager = ServerAPIManager(transport: mock, plugins: [auth])
        let error = await expectError { try await manager.send(.test().setHeader("Authorization", "Basic dTpw")) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 401)
        #expect(auth.refreshCount == 0)
        #expect(mock.requests.map { $0.headers["Authorization"] } == ["Basic dTpw"])
    }

    @Test("a call cancelled while it waits for the refresh ends with cancelled at once; the others go on")
    func cancelledWhileWaiting() async throws {
        let clock = TestClock()
        let mock = Self.guardedMock(valid: { "new" })
        let auth = AuthRefreshPlugin(token: "old") { _ in
            try await clock.sleep(for: .seconds(10))
            return "new"
        }
        let manager = ServerAPIManager(transport: mock, plugins: [auth])
        let waiting = Task { try await manager.send(.test("/a")) }
        let staying = Task { try await manager.send(.test("/b")) }
        await auth.refreshes.waitForJoins(2)
        await clock.waitForSleepers(1)
        waiting.cancel()
        #expect(await expectError { try await waiting.value }?.kind == .cancelled)
        clock.advance(by: .seconds(10))
        _ = try await staying.value
        #expect(auth.refreshCount == 1)
        #expect(mock.requests.filter { $0.url.path == "/a" }.count == 1)
    }
}

/// A small envelope formatter for tests: `{"code":0,"msg":…,"data":…}`; a non-zero code is a
/// `business` error; the result is `data`.
struct TestEnvelopeFormatter: ResponseFormatting {
    func format(_ response: TransportResponse, for api: ServerAPI) throws -> ServerValue {
        .json(try data(response))
    }

    func decode<T: Decodable>(_ type: T.Type, from response: TransportResponse, for api: ServerAPI) throws -> T {
        let json = try data(response)
        return try JSONDecoder().decode(T.self, from: JSONEncoder().encode(json))
    }

    private func data(_ response: TransportResponse) throws -> JSONValue {
        let envelope = try JSONDecoder().decode(JSONValue.self, from: response.data ?? Data())
        let code = envelope["code"]?.intValue ?? -1
        guard code == 0 else {
            throw ServerAPIError.business(code: "\(code)", message: envelope["msg"]?.stringValue ?? "failed")
        }
        return envelope["data"] ?? .null
    }
}
