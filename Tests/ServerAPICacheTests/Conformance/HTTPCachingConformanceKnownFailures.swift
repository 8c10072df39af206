/// A failure a known-failing case is expected to record: the step, the check and a part of the check's message.
/// Only a failure that matches all three is a known issue; any other failure of the case is reported.
struct ExpectedConformanceFailure: Sendable, CustomStringConvertible {
    /// The step, numbered from 1.
    var step: Int
    /// The check, as `ConformanceFailure.check` names it.
    var check: String
    /// A part of the message, enough to tell this failure from another of the same check.
    var text: String

    func matches(_ failure: ConformanceFailure) -> Bool {
        failure.step == step && failure.check == check && failure.message.contains(text)
    }

    var description: String { "step \(step) \(check): …\(text)…" }
}

/// A case the cache fails: why, and exactly which failures it records.
struct KnownConformanceFailure: Sendable {
    var reason: String
    var expected: [ExpectedConformanceFailure]

    init(_ reason: String, _ expected: ExpectedConformanceFailure...) {
        self.init(reason: reason, expected: expected)
    }

    init(reason: String, expected: [ExpectedConformanceFailure]) {
        self.reason = reason
        self.expected = expected
    }

    /// Whether `failure` is one of those expected.
    func matches(_ failure: ConformanceFailure) -> Bool { expected.contains { $0.matches(failure) } }
}

extension ExpectedConformanceFailure {
    /// Step `step`'s check `check` fails with a message containing `text`.
    static func step(_ step: Int, _ check: String, _ text: String) -> Self {
        Self(step: step, check: check, text: text)
    }

    /// The call was expected to be answered by the cache and reached the origin.
    static func notFromCache(step: Int) -> Self {
        .step(step, "type", "expected an answer from the cache, got the origin's response of step \(step)")
    }

    /// The call failed because the origin closed the connection, where the case expected the stored response.
    static func disconnected(step: Int) -> Self {
        .step(step, "type", "the call failed: network: the origin closed the connection")
    }

    /// A `Range` call got the origin's whole response where the case expected a part of a stored one.
    static func partialAsked(step: Int, _ part: String) -> Self {
        .step(step, "text", "expected \"\(part)\"")
    }
}

/// The conformance cases the cache fails, with why: each a choice this cache makes (the suite's `check` cases
/// observe behaviour RFC 9111 leaves open), or what it does not build; and the failures each is expected to
/// record.
///
/// A listed case runs its expected failures as a known issue, and only those: another failure of the case is
/// reported as any failure is. When an expected failure no longer happens, the case's test fails ("Known issue
/// was not recorded", or which expected failure is gone) and `HTTPCachingConformance/summary` names it: remove
/// it from this list. A case that fails and is not listed fails its test.
enum KnownConformanceFailures {
    /// Case identifier: why the cache fails it and what it records (on both caches unless `onlyOn` says
    /// otherwise).
    static let entries: [String: KnownConformanceFailure] = [
        // Optimal.
        "conditional-lm-fresh-no-lm": .init(
            "without a Last-Modified, If-Modified-Since is compared with the stored Date: an earlier date is a 200",
            .step(2, "status", "status 200, expected 304")),
        "partial-store-partial-reuse-partial": .init(
            partial, .notFromCache(step: 2), .partialAsked(step: 2, "01234"),
            .step(2, "status", "status 200, expected 206")),
        "partial-store-partial-reuse-partial-byterange": .init(
            partial, .notFromCache(step: 2), .partialAsked(step: 2, "234"),
            .step(2, "status", "status 200, expected 206")),
        "partial-store-partial-reuse-partial-absent": .init(
            partial, .notFromCache(step: 2), .partialAsked(step: 2, "234"),
            .step(2, "status", "status 200, expected 206")),
        "partial-store-partial-reuse-partial-suffix": .init(
            partial, .notFromCache(step: 2), .partialAsked(step: 2, "4"),
            .step(2, "status", "status 200, expected 206")),
        "partial-store-partial-complete": .init(
            partial, .step(2, "sent", "the origin got range: (none), expected bytes=5-")),
        // Check.
        "freshness-max-age-two-stale-fresh-sameline": .init(firstDuplicate, .notFromCache(step: 2)),
        "freshness-max-age-two-stale-fresh-sepline": .init(firstDuplicate, .notFromCache(step: 2)),
        "freshness-max-age-decimal-zero": .init(invalidMaxAge, .notFromCache(step: 2)),
        "freshness-max-age-decimal-five": .init(invalidMaxAge, .notFromCache(step: 2)),
        "freshness-max-age-a100": .init(invalidMaxAge, .notFromCache(step: 2)),
        "freshness-max-age-100a": .init(invalidMaxAge, .notFromCache(step: 2)),
        "stale-warning-stored": .init(noWarning, .step(2, "header", "no warning in the response")),
        "stale-warning-become": .init(noWarning, .step(2, "header", "no warning in the response")),
        "heuristic-delta-5": .init(shortHeuristic, .notFromCache(step: 2)),
        "heuristic-delta-10": .init(shortHeuristic, .notFromCache(step: 2)),
        "heuristic-delta-30": .init(shortHeuristic, .notFromCache(step: 2)),
        "ccreq-oic": .init(
            "only-if-cached with nothing stored is a cacheMiss error (the Caching article says why), where a proxy "
                + "answers 504",
            .step(1, "type", "the call failed: cache miss: the cache has no entry for this call")),
        "conditional-etag-strong-respond-obs-text": .init(
            "the manager refuses a header value that is not ASCII before anything is sent",
            .step(2, "type", "has a non-ASCII character in its value")),
        "conditional-etag-strong-generate-unquoted": .init(
            etagAsSent, .step(2, "sent", "the origin got If-None-Match: abcdef, expected \"abcdef\"")),
        "conditional-etag-forward-unquoted": .init(
            etagAsSent, .step(1, "sent", "the origin got If-None-Match: abcdef, expected \"abcdef\"")),
        "304-etag-update-response-Content-Encoding": .init(
            framing, .step(2, "header", "Content-Encoding is"), .step(2, "echo", "response Content-Encoding is"),
            .step(3, "header", "Content-Encoding is")),
        "304-etag-update-response-Content-Range": .init(
            framing, .step(2, "header", "Content-Range is"), .step(2, "echo", "response Content-Range is"),
            .step(3, "header", "Content-Range is")),
        "head-410-update": .init(
            "a 410 to a HEAD says the resource is gone: it does not refresh the stored 200 (RFC 9111 §4.3.5 updates "
                + "from a 200 only), so the next GET loads",
            .notFromCache(step: 3), .step(3, "header", "Template-A is absent, expected \"2\"")),
        "other-age-delay": .init(
            "a response from the network carries the Age its server sent; only a stored one gets ours",
            .step(1, "header", "age is absent, expected more than 0")),
    ]

    static let partial =
        "partial responses are never stored, so never combined nor served as a whole (a part served as the whole is "
        + "wrong data; the Caching article says why); a stored whole answers a Range"
    static let firstDuplicate =
        "of two max-age directives the first counts (RFC 9111 §4.2.1 allows the first, or stale)"
    static let invalidMaxAge =
        "an invalid max-age (3600.5, a3600, 3600a) makes the response stale, as RFC 9111 §4.2.1 encourages, where some "
        + "caches read its leading digits"
    static let noWarning =
        "a stale response served when the server fails carries no Warning field: RFC 9111 obsoletes it (§5.5), and "
        + "the Age field says how old the response is"
    static let shortHeuristic =
        "heuristic freshness is a tenth of the time since Last-Modified, with no minimum: a response modified a few "
        + "seconds ago is fresh for less than the 3 s the case waits"
    static let etagAsSent =
        "entity tags are sent as the server or the caller wrote them, with quotes or without (they compare alike)"
    static let framing =
        "a 304 does not replace the stored body's Content-Encoding or Content-Range: they describe the stored bytes"

    /// Cases that fail on one cache only.
    static let onlyOn: [String: CacheKind] = [:]

    /// The entry of a case on a cache, or `nil` when the case is expected to pass there.
    static func entry(for id: String, on kind: CacheKind) -> KnownConformanceFailure? {
        guard let entry = entries[id] else { return nil }
        if let only = onlyOn[id], only != kind { return nil }
        return entry
    }
}
