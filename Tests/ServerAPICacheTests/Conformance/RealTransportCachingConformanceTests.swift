import Foundation
import ServerAPIKit
import Testing

/// The HTTP WG cache suite's cases (HTTPCachingConformanceCases.swift) through the real transports, against the
/// fault fixture's scripted origin on loopback (Tests/Fixtures/cache_origin.py), in real time: real `Date`s, real
/// connections that the origin drops, lower-case field names over HTTP/2 through the servers' nginx front.
///
/// It needs the test servers (a missing server is a failure, never a skip):
///
/// ```
/// scripts/test-server.sh start; eval "$(scripts/test-server.sh env)"
/// swift test --filter RealTransportCachingConformanceTests
/// SAPI_CACHE_COUNTS=1 swift test --filter "RealTransportCachingConformanceTests/summary" 2>&1 | grep conformance:
/// ```
///
/// Every case runs but those `RealTransportConformance.excluded` lists with why, each through every
/// `RealTransportKind` on each cache. A case fails as it does over `MockTransport` (`KnownConformanceFailures`)
/// unless `RealTransportConformance.differences` names how it fails otherwise through one transport.
/// One test per transport runs its cases on both caches side by side, `RealTransportConformance.width` at a time (a
/// `pause` is three real seconds): the suite takes seconds, not minutes. A case that fails otherwise than known
/// there runs again alone, and that run is its result (`RealTransportConformance.judgedAlone`). Its name ends in `ConformanceTests` so
/// that scripts/test.sh runs it in the conformance passes, one test at a time (`--no-parallel`), where the load
/// on the machine is the suite's own: a case that expects a response still fresh a second later must not wait
/// behind the library's other 1,000 tests.
@Suite struct RealTransportCachingConformanceTests {
    @Test(
        "the HTTP WG cache suite's cases through a real transport, on both caches",
        arguments: RealTransportKind.allCases)
    func conformance(transport: RealTransportKind) async throws {
        let runs = CacheKind.allCases.map { RealTransportConformance.Run(transport: transport, cache: $0) }
        for (run, testCase, failures) in try await RealTransportConformance.results(of: runs) {
            HTTPCachingConformance.record(
                failures, known: RealTransportConformance.entry(for: testCase.id, through: transport, on: run.cache),
                prefix: "\(testCase.id) on the \(run.cache.rawValue) cache: ")
        }
    }

    @Test(
        "summary: cases passed per kind, transport and cache, and the known-failure lists match the results",
        .enabled(if: ProcessInfo.processInfo.environment["SAPI_CACHE_COUNTS"] != nil, "SAPI_CACHE_COUNTS is not set"))
    func summary() async throws {
        for run in RealTransportConformance.runs {
            let results = try await RealTransportConformance.results(of: [run]).map { ($0.1, $0.2) }
            var passed: [ConformanceCase.Kind: Int] = [:]
            var total: [ConformanceCase.Kind: Int] = [:]
            var unexpected: [String] = []
            var fixed: [String] = []
            for (testCase, failures) in results {
                total[testCase.kind, default: 0] += 1
                let known = RealTransportConformance.entry(for: testCase.id, through: run.transport, on: run.cache)
                if failures.isEmpty {
                    passed[testCase.kind, default: 0] += 1
                    if known != nil { fixed.append(testCase.id) }
                } else if !failures.allSatisfy({ known?.matches($0) == true }) {
                    for failure in failures where known?.matches(failure) != true {
                        print("conformance: \(run): \(testCase.id): unexpected: \(failure)")
                    }
                    unexpected.append(testCase.id)
                }
            }
            let counts = ConformanceCase.Kind.allCases.map { "\($0.rawValue) \(passed[$0] ?? 0) of \(total[$0] ?? 0)" }
            print("conformance: \(run): \(counts.joined(separator: ", "))")
            print("conformance: \(run): \(SuiteCount.line(results))")
            #expect(unexpected.isEmpty, "failing through \(run) otherwise than listed: \(unexpected.sorted())")
            #expect(fixed.isEmpty, "passing through \(run) but still listed as failing: \(fixed.sorted())")
        }
    }
}

/// What runs through the real transports, and how it fails there when it fails otherwise than over
/// `MockTransport`.
enum RealTransportConformance {
    /// A transport and a cache.
    struct Run: Sendable, CustomTestStringConvertible, CustomStringConvertible {
        var transport: RealTransportKind
        var cache: CacheKind

        var description: String { "\(transport) / \(cache.rawValue) cache" }
        var testDescription: String { description }
    }

    /// How many case runs go on at once: enough that the pauses overlap, few enough that a busy machine still
    /// answers a step within the second its case allows. At 160, a CI run beside the background builds missed
    /// the windows of six cases (a stale-while-revalidate window, a heuristic lifetime: the origin's answer came
    /// where the stored one was due); at 64, beside a build of another worktree, seven did. Those run again alone
    /// (`judgedAlone`).
    static let width = 64

    /// Runs every case through each of `runs`, `width` at a time, and returns each run's failures.
    static func results(of runs: [Run]) async throws -> [(Run, ConformanceCase, [ConformanceFailure])] {
        let work = runs.flatMap { run in cases.map { (run, $0) } }
        return try await withThrowingTaskGroup(of: (Run, ConformanceCase, [ConformanceFailure]).self) { group in
            var results: [(Run, ConformanceCase, [ConformanceFailure])] = []
            var next = work.makeIterator()
            func add() -> Bool {
                guard let (run, testCase) = next.next() else { return false }
                group.addTask {
                    let failures = try await ConformanceRunner.run(testCase, through: run.transport, on: run.cache)
                    return (run, testCase, failures)
                }
                return true
            }
            for _ in 0..<width where !add() { break }
            while let result = try await group.next() {
                results.append(result)
                _ = add()
            }
            return try await judgedAlone(results)
        }
    }

    /// The results, with each case that failed otherwise than its known entry says run again alone, one after the
    /// other: that result counts. Its steps' real-time windows are a second or a few, and among `width` others on a
    /// busy machine a step can miss one; alone, it has the machine. A case that fails alone fails the test.
    static func judgedAlone(
        _ results: [(Run, ConformanceCase, [ConformanceFailure])]
    ) async throws -> [(Run, ConformanceCase, [ConformanceFailure])] {
        var results = results
        for index in results.indices {
            let (run, testCase, failures) = results[index]
            let known = entry(for: testCase.id, through: run.transport, on: run.cache)
            guard !failures.allSatisfy({ known?.matches($0) == true }) else { continue }
            let alone = try await ConformanceRunner.run(testCase, through: run.transport, on: run.cache)
            print("conformance: \(run): \(testCase.id) run again alone: \(alone.isEmpty ? "passed" : "failed")")
            results[index].2 = alone
        }
        return results
    }

    static let runs: [Run] = RealTransportKind.allCases.flatMap { transport in
        CacheKind.allCases.map { Run(transport: transport, cache: $0) }
    }

    /// The cases that run through the real transports: every case but those `excluded` lists.
    static let cases: [ConformanceCase] = ConformanceCase.all.filter { excluded[$0.id] == nil }

    /// Cases that cannot run through a real transport, with why.
    static let excluded: [String: String] = [:]

    /// How a case fails through one transport when that differs from `KnownConformanceFailures`: the entry
    /// replaces the case's entry there; `nil` says that the case passes through that transport.
    static let differences: [String: [RealTransportKind: KnownConformanceFailure?]] = [
        // An unknown content coding: every transport decodes what a response's Content-Encoding names, and refuses
        // one it does not know (the core's content-coding rules), so the response never reaches the cache.
        "headers-store-Content-Encoding": everywhere(
            unknownCoding, .step(1, "type", undecodable), .notFromCache(step: 2),
            .step(2, "header", "Content-Encoding is absent")),
        "304-etag-update-response-Content-Encoding": everywhere(
            unknownCoding, .step(1, "type", undecodable), .step(2, "type", undecodable), .step(3, "type", undecodable)),
        // Transfer-Encoding: arizqhypgxofwne frames the body over HTTP/1.1: neither transport can read it. The
        // HTTP/2 front drops the field (a connection's own), so the case passes there.
        "headers-store-Transfer-Encoding": [
            .curl: .init(
                unknownFraming, .step(1, "type", "content coding could not be decoded"), .notFromCache(step: 2)),
            .urlsession: .init(unknownFraming, .step(1, "type", "the request failed"), .notFromCache(step: 2)),
        ],
        // nginx 1.22 passes these connection fields on over HTTP/2, where they are forbidden (RFC 9113 §8.2.2):
        // libcurl resets the stream.
        "headers-store-Proxy-Connection": [.curlHTTP2: connectionFieldOverHTTP2],
        "headers-store-TE": [.curlHTTP2: connectionFieldOverHTTP2],
        "headers-store-Upgrade": [.curlHTTP2: connectionFieldOverHTTP2],
        "headers-omit-headers-listed-in-Connection": [
            .curlHTTP2: .init(
                "nginx removes the Connection field and passes on the fields it names: the cache cannot tell them "
                    + "from the response's own",
                .step(2, "no-header", "unexpected a: \"1\""), .step(2, "no-header", "unexpected b: \"2\""))
        ],
        // An ETag with obs-text: the fixture writes ü in ISO-8859-1 (as Python's http.server does), which libcurl
        // passes on as a byte that is not UTF-8, and FoundationNetworking refuses.
        "conditional-etag-strong-respond-obs-text": [
            .curl: obsText(.step(1, "echo", "response ETag is")),
            .curlHTTP2: obsText(.step(1, "echo", "response ETag is")),
            .urlsession: obsText(.step(1, "type", "the request failed")),
        ],
        // A 3xx without Location: FoundationNetworking ends the task without a response.
        "status-301-fresh": [.urlsession: redirectWithoutLocation(steps: 1, 2)],
        "status-301-stale": [.urlsession: redirectWithoutLocation(steps: 1)],
        "status-302-fresh": [.urlsession: redirectWithoutLocation(steps: 1, 2)],
        "status-302-stale": [.urlsession: redirectWithoutLocation(steps: 1)],
        "status-303-fresh": [.urlsession: redirectWithoutLocation(steps: 1, 2)],
        "status-303-stale": [.urlsession: redirectWithoutLocation(steps: 1)],
        "status-307-fresh": [.urlsession: redirectWithoutLocation(steps: 1, 2)],
        "status-307-stale": [.urlsession: redirectWithoutLocation(steps: 1)],
        "status-308-fresh": [.urlsession: redirectWithoutLocation(steps: 1, 2)],
        "status-308-stale": [.urlsession: redirectWithoutLocation(steps: 1)],
    ]

    static let undecodable = "the call failed: network: the response's content coding could not be decoded"
    static let unknownCoding =
        "the transports decode the content coding a response names and refuse an unknown one: the response is a "
        + "network error, never stored"
    static let unknownFraming =
        "an unknown Transfer-Encoding leaves the body's framing unknown: the transport refuses the response"
    static let connectionFieldOverHTTP2 = KnownConformanceFailure(
        "the HTTP/2 front (nginx 1.22) passes a connection field on over HTTP/2, which libcurl refuses as a protocol "
            + "error",
        .step(1, "type", "PROTOCOL_ERROR"), .notFromCache(step: 2))

    /// The same entry through every transport.
    static func everywhere(
        _ reason: String, _ expected: ExpectedConformanceFailure...
    ) -> [RealTransportKind: KnownConformanceFailure?] {
        let entry = KnownConformanceFailure(reason: reason, expected: expected)
        return Dictionary(uniqueKeysWithValues: RealTransportKind.allCases.map { ($0, entry) })
    }

    static func obsText(_ expected: ExpectedConformanceFailure) -> KnownConformanceFailure {
        KnownConformanceFailure(
            reason:
                "an ETag with obs-text arrives as ISO-8859-1, and a call cannot send it back (the manager refuses a "
                + "value that is not ASCII)",
            expected: [expected, .step(2, "type", "has a non-ASCII character in its value")])
    }

    static func redirectWithoutLocation(steps: Int...) -> KnownConformanceFailure {
        KnownConformanceFailure(
            reason: "FoundationNetworking ends a 3xx without Location without a response (the cache never sees it)",
            expected: steps.map {
                .step($0, "type", "the call failed: network: the request completed without a response")
            })
    }

    /// The entry of a case through a transport and on a cache, or `nil` when the case is expected to pass.
    static func entry(
        for id: String, through transport: RealTransportKind, on cache: CacheKind
    ) -> KnownConformanceFailure? {
        if let difference = differences[id], let entry = difference[transport] { return entry }
        return KnownConformanceFailures.entry(for: id, on: cache)
    }
}
