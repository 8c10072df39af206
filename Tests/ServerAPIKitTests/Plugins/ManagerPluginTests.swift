import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@_spi(Backend) @testable import ServerAPIKit

/// Records every hook it sees under a name, and adds a header in `prepare`.
struct RecordingPlugin: ServerAPIPlugin {
    let name: String
    let log: Recorder<String>

    func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
        log.append("\(name).prepare")
        var request = request
        request.headers.add(name: "X-Plugin", value: name)
        return request
    }
    func willSend(_ request: TransportRequest, for api: ServerAPI) { log.append("\(name).willSend") }
    func didReceive(_ result: Result<TransportResponse, ServerAPIError>, for request: TransportRequest, api: ServerAPI)
    {
        log.append("\(name).didReceive")
    }
    func process(_ response: TransportResponse, for api: ServerAPI) async throws -> TransportResponse {
        log.append("\(name).process")
        return response
    }
    func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
        log.append("\(name).didComplete(\(error?.kind.rawValue ?? "ok"))")
    }
}

@Suite("Plugins")
struct ManagerPluginTests {
    @Test("hooks run in registration order, once per attempt, and prepare changes what is sent")
    func order() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .json("{}"))
        let log = Recorder<String>()
        let manager = ServerAPIManager(
            transport: mock, plugins: [RecordingPlugin(name: "A", log: log), RecordingPlugin(name: "B", log: log)])
        _ = try await manager.send(.test())
        #expect(
            log.all == [
                "A.prepare", "B.prepare", "A.willSend", "B.willSend", "A.didReceive", "B.didReceive", "A.process",
                "B.process", "A.didComplete(ok)", "B.didComplete(ok)",
            ])
        #expect(mock.requests.first?.headers.values(for: "X-Plugin") == ["A", "B"])
    }

    /// Records each call's end: its id, the error kind (or "ok") and the attempts its metrics count.
    struct EndRecorder: ServerAPIPlugin {
        let ends: Recorder<(RequestID, String, Int)>
        func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
            ends.append((api.id, error?.kind.rawValue ?? "ok", metrics.attempts))
        }
    }

    @Test(
        "a call refused before it is sent (throttled, a cache-only miss, the manager shut down) ends once for the plugins"
    )
    func refusedCallsEnd() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/feed", .json(#"{"n":1}"#))
        let ends = Recorder<(RequestID, String, Int)>()
        let clock = TestClock()
        let manager = ServerAPIManager(
            transport: mock, plugins: [EndRecorder(ends: ends)], configuration: .init(clock: clock))
        let feed = ServerAPI.test("/feed").minimumInterval(.seconds(2))
        _ = try await manager.send(feed)
        let throttled = await expectError { try await manager.send(feed) }
        #expect(throttled?.kind == .throttled)
        let cacheOnly = ServerAPI.test("/feed").cache(.cacheOnly)
        let miss = await expectError { try await manager.send(cacheOnly) }
        #expect(miss?.kind == .cacheMiss)
        await manager.shutdown(gracePeriod: .zero)
        let late = ServerAPI.test("/feed")
        let refused = await expectError { try await manager.send(late) }
        #expect(refused?.kind == .shuttingDown)
        #expect(ends.all.map(\.0) == [feed.id, feed.id, cacheOnly.id, late.id])
        #expect(ends.all.map(\.1) == ["ok", "throttled", "cache miss", "shutting down"])
        #expect(ends.all.map(\.2) == [1, 0, 0, 0])
    }

    @Test("an interceptor in process turns a success into a failure")
    func interceptor() async {
        struct Reject: ServerAPIPlugin {
            func process(_ response: TransportResponse, for api: ServerAPI) async throws -> TransportResponse {
                if response.headers["X-Maintenance"] == "1" {
                    throw ServerAPIError.business(code: "maintenance", message: "down for maintenance")
                }
                return response
            }
        }
        let mock = MockTransport()
        mock.stub(.get, "/x", .json("{}", headers: ["X-Maintenance": "1"]))
        let manager = ServerAPIManager(transport: mock, plugins: [Reject()])
        let error = await expectError { try await manager.send(.test()) }
        #expect(error?.kind == .business && error?.code == "maintenance")
    }

    @Test("shouldRetry refreshes a token: the retry carries the new token even with no retry count")
    func tokenRefresh() async throws {
        final class TokenPlugin: ServerAPIPlugin {
            let token = Locked("old")
            func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
                var request = request
                request.headers.replaceOrAdd(name: "Authorization", value: "Bearer \(token.withLock { $0 })")
                return request
            }
            func shouldRetry(after error: ServerAPIError, request: TransportRequest, api: ServerAPI, attempt: Int)
                async -> RetryDecision
            {
                guard error.status == 401 else { return .useDefault }
                token.withLock { $0 = "new" }
                return .retryAfter(.zero)
            }
        }
        let mock = MockTransport()
        mock.stub(handler: { request in
            request.headers["Authorization"] == "Bearer new" ? .json(#"{"me":1}"#) : .status(401)
        })
        let manager = ServerAPIManager(transport: mock, plugins: [TokenPlugin()])
        let result = try await manager.send(.test().method(.post))
        #expect(result.json?["me"] == .int(1))
        #expect(mock.requests.map { $0.headers["Authorization"] } == ["Bearer old", "Bearer new"])
    }

    @Test("plugin-requested retries are bounded, so a server that always answers 401 ends")
    func boundedPluginRetries() async {
        struct AlwaysRetry: ServerAPIPlugin {
            func shouldRetry(after error: ServerAPIError, request: TransportRequest, api: ServerAPI, attempt: Int)
                async -> RetryDecision
            { .retryAfter(.zero) }
        }
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(401))
        let manager = ServerAPIManager(
            transport: mock, plugins: [AlwaysRetry()], configuration: .init(maxPluginRetries: 2))
        let error = await expectError { try await manager.send(.test()) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 401)
        #expect(mock.requestCount == 3)
    }

    @Test("doNotRetry from a plugin overrides the retry policy")
    func veto() async {
        struct Veto: ServerAPIPlugin {
            func shouldRetry(after error: ServerAPIError, request: TransportRequest, api: ServerAPI, attempt: Int)
                async -> RetryDecision
            { .doNotRetry }
        }
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        let manager = ServerAPIManager(transport: mock, plugins: [Veto()])
        let error = await expectError { try await manager.send(.test().retry(3, policy: .immediate)) }
        #expect(error?.kind == .httpStatus && error?.status == 503)
        #expect(mock.requestCount == 1)
    }

    @Test("a failing prepare fails the call with its error and sends nothing")
    func failingPrepare() async {
        struct NoToken: ServerAPIPlugin {
            func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
                throw ServerAPIError(.invalidRequest, "no token available")
            }
        }
        let mock = MockTransport()
        let manager = ServerAPIManager(transport: mock, plugins: [NoToken()])
        let error = await expectError { try await manager.send(.test()) }
        #expect(error?.kind == .invalidRequest && error?.message == "no token available")
        #expect(mock.requestCount == 0)
    }
}

@Suite("Manager")
struct ManagerTests {
    @Test("an invalid call fails with invalidRequest before it reaches the transport")
    func invalid() async {
        let mock = MockTransport()
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.send(ServerAPI(host: "")) }
        #expect(error?.kind == .invalidRequest)
        #expect(mock.requestCount == 0)
    }

    @Test("an HTTP error status carries the status, URL, id and a body excerpt")
    func statusError() async {
        let mock = MockTransport()
        mock.stub(.get, "/x", .text(String(repeating: "e", count: 2000), status: 404))
        let manager = ServerAPIManager(transport: mock)
        let api = ServerAPI.test()
        let error = await expectError { try await manager.send(api) }
        #expect(error?.kind == .httpStatus && error?.status == 404)
        #expect(error?.requestID == api.id && error?.url?.path == "/x")
        #expect(error?.bodyExcerpt?.count == 513)
        #expect(error?.errorDescription?.contains("404 Not Found") == true)
    }

    @Test("accept(.any) hands every status to the caller")
    func acceptAny() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .text("gone", status: 410))
        let manager = ServerAPIManager(transport: mock)
        let result = try await manager.send(.test().format(.string).accept(.any))
        #expect(result.status == 410 && result.string == "gone")
    }

    @Test("the mock records exact method, headers, query and body bytes")
    func recorder() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/items", .json("{}", status: 201))
        let manager = ServerAPIManager(transport: mock, configuration: .init(defaultHeaders: ["User-Agent": "t/1"]))
        _ = try await manager.send(
            .test("/items").method(.post).query("q", "a b").header("X-A", "1").body(.text("hi")))
        let request = try #require(mock.requests.first)
        #expect(request.method == .post)
        #expect(request.url.query == "q=a%20b")
        #expect(request.headers["x-a"] == "1" && request.headers["User-Agent"] == "t/1")
        #expect(request.bodyText == "hi")
    }

    @Test("a timeout longer than the mock's delay ends in timedOut")
    func timeout() async {
        let mock = MockTransport()
        mock.stub(.get, "/x", .json("{}", delay: .seconds(30)))
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.send(.test().timeout(.milliseconds(20))) }
        #expect(error?.kind == .timedOut)
    }

    @Test("a decodable model is decoded from the response")
    func decodable() async throws {
        struct User: Decodable, Sendable {
            var id: Int
            var name: String
        }
        let mock = MockTransport()
        mock.stub(.get, "/u", .json(#"{"id":1,"name":"Ada"}"#))
        let manager = ServerAPIManager(transport: mock)
        let user = try await manager.send(.test("/u"), decoding: User.self)
        #expect(user.id == 1 && user.name == "Ada")
    }

    @Test("a download stub writes the file and the result points at it")
    func mockDownload() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/f", .data(Data("payload".utf8)))
        let manager = ServerAPIManager(transport: mock)
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("dl-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        let result = try await manager.send(.test("/f").download(to: destination))
        #expect(result.fileURL == destination)
        #expect(try Data(contentsOf: destination) == Data("payload".utf8))
    }
}
