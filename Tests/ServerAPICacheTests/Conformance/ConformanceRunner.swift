import Foundation
import ServerAPIKit
import ServerAPITesting

/// A check of a conformance case that did not hold.
struct ConformanceFailure: Sendable, CustomStringConvertible {
    /// The step, numbered from 1.
    var step: Int
    /// The check only prepared the case (the step is a setup step, or lists the check as setup-only).
    var isSetup: Bool
    /// The check that did not hold, as the script names it (`type`, `status`, `header`, `no-header`, `text`,
    /// `sent`, `not-sent`, `method`), or `echo` for a field the origin sent that the caller did not get.
    var check: String
    var message: String

    var description: String { "step \(step)\(isSetup ? " (setup)" : "") \(check): \(message)" }
}

/// Runs conformance cases against a `ServerAPIManager` configured as the Caching article says for HTTP
/// semantics: `honorsHTTPCacheHeaders`, `defaultCacheTTL` zero, calls in `.returnCacheElseLoad` with no
/// TTL of their own. Time passes only on a `TestClock`, which the manager, the cache and the origin share.
enum ConformanceRunner {
    static let host = "https://origin.test"

    /// The header every call carries with its step number, so that the origin knows the step of a request the
    /// cache makes later on the call's behalf.
    static let stepHeader = "Conformance-Step"

    /// The seconds a `pause` step lets pass, as the HTTP WG suite pauses between requests.
    static let pause: Duration = .seconds(3)

    /// Runs `testCase` on a fresh cache of `kind` and returns every check that failed.
    static func run(_ testCase: ConformanceCase, on kind: CacheKind) async throws -> [ConformanceFailure] {
        let clock = TestClock()
        return try await kind.with(clock: clock) { cache async throws in
            try await run(testCase, cache: cache, clock: clock)
        }
    }

    static func run(_ testCase: ConformanceCase, cache: any CachePolicy, clock: TestClock) async throws
        -> [ConformanceFailure]
    {
        let path = "/case/\(testCase.id)"
        let origin = ConformanceOrigin(testCase, clock: clock, baseURL: host + path)
        let transport = MockTransport(clock: clock)
        transport.stub(handler: { request in try await origin.answer(request) })
        var configuration = ServerAPIManager.Configuration(clock: clock)
        configuration.honorsHTTPCacheHeaders = true
        configuration.defaultCacheTTL = .zero
        configuration.now = clock.dateSource
        let manager = ServerAPIManager(transport: transport, cache: cache, configuration: configuration)
        return try await run(
            testCase, manager: manager, host: host, path: path,
            begin: { origin.begin(step: $0) },
            received: { origin.received },
            pause: { clock.advance(by: pause) })
    }

    /// Runs `testCase`'s calls through `manager` to the origin at `host` + `path`, and returns every check that
    /// failed.
    /// - Parameters:
    ///   - begin: Tells the origin that a step begins (numbered from 1).
    ///   - received: Every request that reached the origin so far, in order.
    ///   - pause: Lets the time of a `pause` step pass.
    static func run(
        _ testCase: ConformanceCase, manager: ServerAPIManager, host: String, path: String,
        begin: (Int) async throws -> Void,
        received: () async throws -> [ConformanceOrigin.Received],
        pause: () async throws -> Void
    ) async throws -> [ConformanceFailure] {
        var failures: [ConformanceFailure] = []
        var previous: ServerResult?
        for (index, step) in testCase.steps.enumerated() {
            let number = index + 1
            try await begin(number)
            let before = try await received().count
            let api = try call(step, number: number, host: host, path: path, previous: previous)
            let delivered: Result<ServerResult, any Error>
            do {
                delivered = .success(try await manager.send(api))
            } catch {
                delivered = .failure(error)
            }
            let reached = try await received().dropFirst(before).filter { $0.step == number }
            failures += check(step, number: number, delivered: delivered, reached: Array(reached), testCase: testCase)
            previous = try? delivered.get()
            // What the cache does in the background for this step (stale-while-revalidate) ends before time moves.
            await manager.backgroundRevalidationsFinished()
            if step.pauseAfter { try await pause() }
        }
        return failures
    }

    /// The call a step makes: a user's call with the step's method, headers and body, and its step number.
    static func call(
        _ step: ConformanceStep, number: Int, host: String = host, path: String, previous: ServerResult?
    ) throws -> ServerAPI {
        var api = ServerAPI(host: host, path: path + (step.pathSuffix.map { "/\($0)" } ?? ""))
            .method(HTTPMethod(rawValue: step.method))
            .format(.data)
            .accept(.any)
            .cache(.returnCacheElseLoad)
            .header(stepHeader, String(number))
        if let query = step.query {
            let parts = query.split(separator: "=", maxSplits: 1).map(String.init)
            api = api.query(parts[0], parts.count > 1 ? parts[1] : nil)
        }
        // The origin's clock when it produced the previous response, for `ims-from-previous`.
        let previousNow = previous?.headers["Origin-Now"].flatMap(Int.init).map {
            Date(timeIntervalSince1970: TimeInterval($0))
        }
        for field in step.requestHeaders {
            // A date in a request is relative to the origin's clock when it produced the previous response.
            let reference = step.modifiedSinceFromPrevious ? previousNow ?? TestClock.startDate : TestClock.startDate
            api = api.header(field.name, ConformanceOrigin.text(field, now: reference, rfc850: step.rfc850Dates))
        }
        if let body = step.requestBody { api = api.body(.data(Data(body.utf8))) }
        return api
    }

    // MARK: - Checks

    static func check(
        _ step: ConformanceStep, number: Int, delivered: Result<ServerResult, any Error>,
        reached: [ConformanceOrigin.Received], testCase: ConformanceCase
    ) -> [ConformanceFailure] {
        var failures: [ConformanceFailure] = []
        func fail(_ check: String, _ message: String) {
            failures.append(
                ConformanceFailure(
                    step: number, isSetup: step.isSetup || step.setupChecks.contains(check), check: check,
                    message: message))
        }
        let request = reached.first

        let result: ServerResult
        switch delivered {
        case .success(let success):
            result = success
        case .failure(let error):
            // The origin dropped the connection and nothing was served: a client sees the failure, which is
            // the right answer where the script accepts any status and does not look at the body.
            let accepted =
                step.disconnect && step.outcome == nil && step.expectedStatus == .some(nil) && !step.checksBody
            if !accepted { fail("type", "the call failed: \(error)") }
            return failures
        }

        let originStep = result.headers["Origin-Step"].flatMap(Int.init)
        switch step.outcome {
        case .cached:
            let answeredByCacheItself = result.status == 304 && originStep == nil
            if !answeredByCacheItself, !(originStep.map { $0 < number } ?? false) {
                fail(
                    "type",
                    "expected an answer from the cache, got the origin's response of step \(originStep.map(String.init) ?? "?")"
                )
            }
        case .notCached:
            if request == nil || originStep != number {
                fail(
                    "type",
                    "expected an answer from the origin, but the cache answered (response of step \(originStep.map(String.init) ?? "?"))"
                )
            }
        case .etagValidated:
            if request?.headers["If-None-Match"] == nil {
                fail(
                    "type",
                    request == nil
                        ? "expected a revalidation, but no request reached the origin"
                        : "the request to the origin had no If-None-Match")
            }
        case .lmValidated:
            if request?.headers["If-Modified-Since"] == nil {
                fail(
                    "type",
                    request == nil
                        ? "expected a revalidation, but no request reached the origin"
                        : "the request to the origin had no If-Modified-Since")
            }
        case nil: break
        }

        switch step.expectedStatus {
        case .some(.some(let status)):
            if result.status != status { fail("status", "status \(result.status), expected \(status)") }
        case .some(.none): break
        case .none:
            let expected = step.status ?? 200
            if result.status != expected {
                fail(
                    "status",
                    result.status == 999
                        ? "the origin expected a conditional request and did not get one"
                        : "status \(result.status), expected \(expected)")
            }
        }

        let originNow = result.headers["Origin-Now"].flatMap(Int.init).map {
            Date(timeIntervalSince1970: TimeInterval($0))
        }
        for expectation in step.expectedHeaders {
            switch expectation {
            case .present(let name):
                if !result.headers.contains(name) { fail("header", "no \(name) in the response") }
            case .equals(let name, let value):
                let expected = ConformanceOrigin.text(
                    ConformanceField(name: name, value: value), now: originNow ?? TestClock.startDate)
                let got = joined(result.headers, name)
                if got != expected {
                    fail("header", "\(name) is \(got.map { "\"\($0)\"" } ?? "absent"), expected \"\(expected)\"")
                }
            case .sameAs(let name, let other):
                let got = result.headers[name]
                if got == nil || got != result.headers[other] {
                    fail(
                        "header",
                        "\(name) (\(got ?? "absent")) differs from \(other) (\(result.headers[other] ?? "absent"))")
                }
            case .greaterThan(let name, let bound):
                let got = result.headers[name]
                if !(got.flatMap { Int($0) }.map { $0 > bound } ?? false) {
                    fail("header", "\(name) is \(got ?? "absent"), expected more than \(bound)")
                }
            }
        }
        for (name, value) in step.absentHeaders {
            guard let got = joined(result.headers, name) else { continue }
            if let value {
                let text = ConformanceOrigin.text(
                    ConformanceField(name: name, value: value), now: originNow ?? TestClock.startDate)
                if got.contains(text) { fail("no-header", "\(name) still has \"\(text)\"") }
            } else {
                fail("no-header", "unexpected \(name): \"\(got)\"")
            }
        }

        if step.checksBody {
            let body = result.data.map { String(decoding: $0, as: UTF8.self) } ?? ""
            switch step.expectedText {
            case .some(.some(let text)):
                if body != text { fail("text", "body \"\(body)\", expected \"\(text)\"") }
            case .some(.none): break
            case .none:
                if let expected = step.responseBody {
                    if body != expected { fail("text", "body \"\(body)\", expected \"\(expected)\"") }
                } else if result.status != 204, result.status != 304, step.method != "HEAD", body != testCase.id {
                    fail("text", "body \"\(body)\", expected the origin's default body")
                }
            }
        }

        // What the origin saw, for a step the cache did not answer alone.
        guard step.outcome != .cached else { return failures }
        if let request {
            for (name, value) in step.sentHeaders {
                let got = joined(request.headers, name)
                if let value {
                    let text = ConformanceOrigin.text(
                        ConformanceField(name: name, value: value), now: TestClock.startDate)
                    if got != text { fail("sent", "the origin got \(name): \(got ?? "(none)"), expected \(text)") }
                } else if got == nil {
                    fail("sent", "the origin got no \(name)")
                }
            }
            for (name, value) in step.unsentHeaders {
                let got = joined(request.headers, name)
                if let value, case .text(let text) = value {
                    if got == text { fail("not-sent", "the origin got \(name): \(text)") }
                } else if got != nil {
                    fail("not-sent", "the origin got \(name): \(got!)")
                }
            }
            for sent in request.sentHeaders where sent.name.lowercased() != "date" {
                let got = joined(result.headers, sent.name)
                if got != sent.value {
                    failures.append(
                        ConformanceFailure(
                            step: number, isSetup: false, check: "echo",
                            message:
                                "response \(sent.name) is \(got.map { "\"\($0)\"" } ?? "absent"), the origin sent \"\(sent.value)\""
                        ))
                }
            }
            if let method = step.expectedMethod, request.method != method {
                fail("method", "the origin got \(request.method), expected \(method)")
            }
        } else if !step.sentHeaders.isEmpty || step.expectedMethod != nil {
            fail("sent", "no request reached the origin")
        }
        return failures
    }

    /// Every value of `name`, joined with ", ", or `nil`.
    static func joined(_ headers: HTTPHeaders, _ name: String) -> String? {
        let values = headers.values(for: name)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}
