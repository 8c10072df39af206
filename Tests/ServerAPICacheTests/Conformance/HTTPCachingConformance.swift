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
/// swift test --filter "HTTPCachingConformance/summary" 2>&1 | grep conformance:
/// ```
///
/// Each case on each cache is a test. A case the current engine fails is listed, with why, in
/// `KnownConformanceFailures` (HTTPCachingConformanceKnownFailures.swift) and its failures are a known issue;
/// once the engine passes it, the test fails with "Known issue was not recorded": remove it from the list.
/// `summary` runs every case again and prints "required N of M, optimal N of M, check N of M" per cache; it
/// fails when the list and the results disagree either way.
@Suite struct HTTPCachingConformance {
    @Test("a case of the HTTP WG cache suite, on each cache", arguments: ConformanceCase.all, CacheKind.allCases)
    func conformance(testCase: ConformanceCase, kind: CacheKind) async throws {
        let failures = try await ConformanceRunner.run(testCase, on: kind)
        if let reason = KnownConformanceFailures.reason(for: testCase.id, on: kind) {
            withKnownIssue(Comment(rawValue: reason)) {
                Self.record(failures)
            }
        } else {
            Self.record(failures)
        }
    }

    @Test("summary: cases passed per kind and cache, and the known-failure list matches the results")
    func summary() async throws {
        for kind in CacheKind.allCases {
            var passed: [ConformanceCase.Kind: Int] = [:]
            var total: [ConformanceCase.Kind: Int] = [:]
            var failing: Set<String> = []
            for testCase in ConformanceCase.all {
                total[testCase.kind, default: 0] += 1
                let failures = try await ConformanceRunner.run(testCase, on: kind)
                if failures.isEmpty {
                    passed[testCase.kind, default: 0] += 1
                } else {
                    failing.insert(testCase.id)
                    if KnownConformanceFailures.reason(for: testCase.id, on: kind) == nil {
                        let what = "\(testCase.id) (\(testCase.kind.rawValue))"
                        print("conformance: \(kind.rawValue) cache: \(what): \(failures)")
                    }
                }
            }
            let counts = ConformanceCase.Kind.allCases.map { "\($0.rawValue) \(passed[$0] ?? 0) of \(total[$0] ?? 0)" }
            print("conformance: \(kind.rawValue) cache: \(counts.joined(separator: ", "))")
            for caseKind in ConformanceCase.Kind.allCases {
                let ids = ConformanceCase.all.filter { $0.kind == caseKind && failing.contains($0.id) }.map(\.id)
                print(
                    "conformance: \(kind.rawValue) cache: \(caseKind.rawValue) failing: \(ids.joined(separator: " "))")
            }
            let listed = Set(
                ConformanceCase.all.map(\.id).filter { KnownConformanceFailures.reason(for: $0, on: kind) != nil })
            let unlisted = failing.subtracting(listed).sorted()
            let fixed = listed.subtracting(failing).sorted()
            #expect(unlisted.isEmpty, "failing on the \(kind.rawValue) cache but not listed: \(unlisted)")
            #expect(fixed.isEmpty, "passing on the \(kind.rawValue) cache but still listed as failing: \(fixed)")
        }
    }

    @Test("the known-failure list names only cases of the suite")
    func knownFailuresAreCases() {
        let ids = Set(ConformanceCase.all.map(\.id))
        #expect(ids.count == ConformanceCase.all.count, "case identifiers are unique")
        let strays = Set(KnownConformanceFailures.reasons.keys).subtracting(ids).sorted()
        #expect(strays.isEmpty, "listed but not a case: \(strays)")
    }

    static func record(_ failures: [ConformanceFailure]) {
        for failure in failures { Issue.record(Comment(rawValue: failure.description)) }
    }
}
