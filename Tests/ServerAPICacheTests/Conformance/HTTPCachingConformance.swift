import Foundation
import ServerAPIKit
import Testing

/// The HTTP working group's cache test suite (github.com/http-tests/cache-tests), the cases of it that apply to
/// a private client cache, re-stated in HTTPCachingConformanceCases.swift and run on `MemoryCache` and
/// `FileCache` through a `ServerAPIManager` configured as the Caching article says for HTTP semantics.
///
/// Run it, and read the counts per cache:
///
/// ```
/// swift test --filter HTTPCachingConformance
/// SAPI_CACHE_COUNTS=1 swift test --filter "HTTPCachingConformance/summary" 2>&1 | grep conformance:
/// ```
///
/// Each case on each cache is a test. A case the current engine fails is listed, with why and with the failures
/// it records (step, check, message), in `KnownConformanceFailures` (HTTPCachingConformanceKnownFailures.swift):
/// those failures, and no other, are a known issue. Once one of them no longer happens, the test fails ("Known
/// issue was not recorded", or which one is gone): update the list. `summary` runs every case again and prints
/// "required N of M, optimal N of M, check N of M" per cache; it fails when the list and the results disagree
/// either way. The per-case tests already fail on each such disagreement, so `summary` is a report, run when
/// `SAPI_CACHE_COUNTS` is set (a run without it reports it skipped): the suite's cases run once per pass, not twice.
@Suite struct HTTPCachingConformance {
    @Test("a case of the HTTP WG cache suite, on each cache", arguments: ConformanceCase.all, CacheKind.allCases)
    func conformance(testCase: ConformanceCase, kind: CacheKind) async throws {
        let failures = try await ConformanceRunner.run(testCase, on: kind)
        Self.record(failures, known: KnownConformanceFailures.entry(for: testCase.id, on: kind))
    }

    @Test(
        "summary: cases passed per kind and cache, and the known-failure list matches the results",
        .enabled(if: ProcessInfo.processInfo.environment["SAPI_CACHE_COUNTS"] != nil, "SAPI_CACHE_COUNTS is not set"))
    func summary() async throws {
        for kind in CacheKind.allCases {
            var passed: [ConformanceCase.Kind: Int] = [:]
            var total: [ConformanceCase.Kind: Int] = [:]
            var failing: Set<String> = []
            var unexpectedFailures: [String] = []
            var results: [(ConformanceCase, [ConformanceFailure])] = []
            for testCase in ConformanceCase.all {
                total[testCase.kind, default: 0] += 1
                let failures = try await ConformanceRunner.run(testCase, on: kind)
                results.append((testCase, failures))
                if failures.isEmpty {
                    passed[testCase.kind, default: 0] += 1
                } else {
                    failing.insert(testCase.id)
                    let known = KnownConformanceFailures.entry(for: testCase.id, on: kind)
                    let unexpected = failures.filter { known?.matches($0) != true }
                    if !unexpected.isEmpty {
                        let what = "\(testCase.id) (\(testCase.kind.rawValue))"
                        print("conformance: \(kind.rawValue) cache: \(what): unexpected: \(unexpected)")
                        unexpectedFailures.append(testCase.id)
                    }
                }
            }
            let counts = ConformanceCase.Kind.allCases.map { "\($0.rawValue) \(passed[$0] ?? 0) of \(total[$0] ?? 0)" }
            print("conformance: \(kind.rawValue) cache: \(counts.joined(separator: ", "))")
            print("conformance: \(kind.rawValue) cache: \(SuiteCount.line(results))")
            for caseKind in ConformanceCase.Kind.allCases {
                let ids = ConformanceCase.all.filter { $0.kind == caseKind && failing.contains($0.id) }.map(\.id)
                print(
                    "conformance: \(kind.rawValue) cache: \(caseKind.rawValue) failing: \(ids.joined(separator: " "))")
            }
            let listed = Set(
                ConformanceCase.all.map(\.id).filter { KnownConformanceFailures.entry(for: $0, on: kind) != nil })
            let unlisted = failing.subtracting(listed).sorted()
            let fixed = listed.subtracting(failing).sorted()
            #expect(unlisted.isEmpty, "failing on the \(kind.rawValue) cache but not listed: \(unlisted)")
            #expect(fixed.isEmpty, "passing on the \(kind.rawValue) cache but still listed as failing: \(fixed)")
            #expect(
                unexpectedFailures.isEmpty,
                "failing on the \(kind.rawValue) cache otherwise than listed: \(unexpectedFailures)")
        }
    }

    @Test("the known-failure list names only cases of the suite")
    func knownFailuresAreCases() {
        let ids = Set(ConformanceCase.all.map(\.id))
        #expect(ids.count == ConformanceCase.all.count, "case identifiers are unique")
        let strays = Set(KnownConformanceFailures.entries.keys).subtracting(ids).sorted()
        #expect(strays.isEmpty, "listed but not a case: \(strays)")
        let unnamed = KnownConformanceFailures.entries.filter { $0.value.expected.isEmpty }.keys.sorted()
        #expect(unnamed.isEmpty, "listed without the failures they record: \(unnamed)")
    }

    /// Records `failures` as issues: those `known` expects as a known issue, any other as a failure; and an
    /// expected failure that did not happen as a failure too.
    /// - Parameter prefix: Put before each failure's text (which case, where a test runs several).
    static func record(_ failures: [ConformanceFailure], known: KnownConformanceFailure?, prefix: String = "") {
        guard let known else {
            record(failures, prefix: prefix)
            return
        }
        for expected in known.expected where !failures.contains(where: expected.matches) {
            Issue.record("\(prefix)the known failure \(expected) no longer happens: update the known-failure list")
        }
        // Matched by the recorded text, so that a failure the entry does not name stays a failure.
        let expectedTexts = Set(failures.filter { known.matches($0) }.map { prefix + $0.description })
        withKnownIssue(Comment(rawValue: known.reason)) {
            record(failures, prefix: prefix)
        } matching: { issue in
            issue.comments.contains { expectedTexts.contains($0.rawValue) }
        }
    }

    static func record(_ failures: [ConformanceFailure], prefix: String = "") {
        for failure in failures { Issue.record(Comment(rawValue: prefix + failure.description)) }
    }
}
