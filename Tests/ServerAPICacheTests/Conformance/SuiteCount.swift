/// Our cases' results counted as the HTTP WG suite counts a browser's: over the cases it runs in browsers
/// (137 required, 77 optimal, 86 check in its current list; a private client cache is asked what a browser's is).
/// Ours are those plus 29 it does not run in browsers (a 3xx's response, which a browser's fetch cannot see; a
/// conditional request the caller makes, which fetch hides), kept because a library's user sees and makes them.
enum SuiteCount {
    /// The cases of ours the HTTP WG suite does not run in browsers (its `browser_skip`).
    static let notRunInBrowsers: Set<String> = [
        "status-301-fresh", "status-301-stale", "status-302-fresh", "status-302-stale", "status-303-fresh",
        "status-303-stale", "status-307-fresh", "status-307-stale", "status-308-fresh", "status-308-stale",
        "conditional-lm-fresh", "conditional-lm-fresh-earlier", "conditional-lm-stale", "conditional-lm-fresh-no-lm",
        "conditional-lm-fresh-rfc850", "conditional-etag-strong-respond", "conditional-304-etag",
        "conditional-etag-precedence", "conditional-etag-strong-respond-obs-text",
        "conditional-etag-quoted-respond-unquoted", "conditional-etag-unquoted-respond-unquoted",
        "conditional-etag-unquoted-respond-quoted", "conditional-etag-weak-respond",
        "conditional-etag-weak-respond-lowercase", "conditional-etag-weak-respond-backslash",
        "conditional-etag-weak-respond-omit-slash", "conditional-etag-strong-respond-multiple-first",
        "conditional-etag-strong-respond-multiple-second", "conditional-etag-strong-respond-multiple-last",
    ]

    /// "the suite's browser cases: required N of M, optimal N of M, check N of M" for `results` (each case with
    /// the failures it recorded).
    static func line(_ results: [(ConformanceCase, [ConformanceFailure])]) -> String {
        var passed: [ConformanceCase.Kind: Int] = [:]
        var total: [ConformanceCase.Kind: Int] = [:]
        for (testCase, failures) in results where !notRunInBrowsers.contains(testCase.id) {
            total[testCase.kind, default: 0] += 1
            if failures.isEmpty { passed[testCase.kind, default: 0] += 1 }
        }
        let counts = ConformanceCase.Kind.allCases.map { "\($0.rawValue) \(passed[$0] ?? 0) of \(total[$0] ?? 0)" }
        return "the suite's browser cases: \(counts.joined(separator: ", "))"
    }
}
