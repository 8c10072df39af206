import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Retries")
struct ManagerRetryTests {
    @Test(
        "a retryable status is retried up to the retry count, and attempts are recorded",
        arguments: [408, 429, 500, 502, 503, 504])
    func retriesStatus(status: Int) async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(status), .status(status), .json(#"{"ok":true}"#))
        let manager = ServerAPIManager(transport: mock)
        let result = try await manager.send(.test().retry(2, policy: .immediate))
        #expect(result.json?["ok"] == .bool(true))
        #expect(result.metrics.attempts == 3)
        #expect(mock.requests.map(\.attempt) == [1, 2, 3])
    }

    @Test("retries stop at the retry count with the last error")
    func exhausted() async {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503))
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.send(.test().retry(2, policy: .immediate)) }
        #expect(error?.kind == .httpStatus && error?.status == 503)
        #expect(mock.requestCount == 3)
    }

    @Test("a non-retryable status is not retried", arguments: [400, 401, 403, 404, 409, 422, 501])
    func notRetried(status: Int) async {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(status))
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.send(.test().retry(3, policy: .immediate)) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == status)
        #expect(mock.requestCount == 1)
    }

    @Test("transport failures are retried: timeout, cannot connect, network")
    func transportFailures() async throws {
        let mock = MockTransport()
        mock.stub(
            .get, "/x", .timeout(), .cannotConnect(), .failure(ServerAPIError(.network, "connection reset")),
            .json("{}"))
        let manager = ServerAPIManager(transport: mock)
        let result = try await manager.send(.test().retry(3, policy: .immediate))
        #expect(result.metrics.attempts == 4)
    }

    @Test("business, decoding and invalid-request failures are not retried")
    func notTransport() async {
        let mock = MockTransport()
        mock.stub(.get, "/x", .text("not json"))
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.send(.test().retry(3, policy: .immediate)) }
        #expect(error?.kind == .decoding)
        #expect(mock.requestCount == 1)
    }

    @Test("POST is not retried unless the call opts in")
    func nonIdempotent() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/x", .status(503), .json("{}"))
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.send(.test().method(.post).retry(2, policy: .immediate)) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 503 && mock.requestCount == 1)

        mock.reset()
        mock.stub(.post, "/x", .status(503), .json("{}"))
        let optedIn = try await manager.send(
            .test().method(.post).retry(2, policy: RetryPolicy.immediate.allowingNonIdempotent()))
        #expect(optedIn.metrics.attempts == 2)
    }

    @Test("the backoff grows exponentially, is capped, and jitter stays within its fraction")
    func backoff() {
        let policy = RetryPolicy(baseDelay: .milliseconds(100), multiplier: 2, maxDelay: .seconds(1), jitter: 0.5)
        #expect(policy.baseDelay(forRetry: 1) == .milliseconds(100))
        #expect(policy.baseDelay(forRetry: 2) == .milliseconds(200))
        #expect(policy.baseDelay(forRetry: 4) == .milliseconds(800))
        #expect(policy.baseDelay(forRetry: 5) == .seconds(1))
        #expect(policy.baseDelay(forRetry: 30) == .seconds(1))
        #expect(policy.delay(forRetry: 2, random: 0) == .milliseconds(100))
        #expect(policy.delay(forRetry: 2, random: 0.5) == .milliseconds(200))
        for _ in 0..<100 {
            let delay = policy.delay(forRetry: 3)
            #expect(delay >= .milliseconds(200) && delay <= .milliseconds(600))
        }
    }

    @Test("the manager waits the backoff on its clock before retrying")
    func waitsOnClock() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(500), .status(500), .json("{}"))
        let clock = TestClock()
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        let policy = RetryPolicy(baseDelay: .seconds(1), multiplier: 3, jitter: 0)
        async let result = manager.send(.test().retry(2, policy: policy))
        await clock.waitForSleepers(1)
        #expect(mock.requestCount == 1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(mock.requestCount == 2)
        clock.advance(by: .seconds(3))
        #expect(try await result.metrics.attempts == 3)
        #expect(clock.requestedSleeps == [.seconds(1), .seconds(3)])
    }

    @Test("Retry-After in seconds or as an HTTP date sets the wait")
    func retryAfter() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(429, headers: ["Retry-After": "7"]), .json("{}"))
        let clock = TestClock()
        let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
        async let result = manager.send(.test().retry(1))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(7))
        _ = try await result
        #expect(clock.requestedSleeps == [.seconds(7)])

        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryPolicy.retryAfter("Tue, 14 Nov 2023 22:13:40 GMT", now: now) == .seconds(20))
        #expect(RetryPolicy.retryAfter("soon") == nil)
    }

    @Test("a Retry-After longer than the policy allows ends the retries")
    func retryAfterTooLong() async {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503, headers: ["Retry-After": "3600"]), .json("{}"))
        let manager = ServerAPIManager(transport: mock)
        let error = await expectError { try await manager.send(.test().retry(3)) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.status == 503 && mock.requestCount == 1)
    }
}
