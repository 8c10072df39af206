/// The conformance cases the cache fails, with why: each a choice this cache makes (the suite's `check` cases
/// observe behaviour RFC 9111 leaves open), or what it does not build.
///
/// A case listed here runs as a known issue; when the cache passes it, its test fails with "Known issue was not
/// recorded" and `HTTPCachingConformance/summary` names it: remove it from this list. A case that fails and is
/// not listed fails its test.
enum KnownConformanceFailures {
    /// Case identifier: why the cache fails it (on both caches unless `onlyOn` says otherwise).
    static let reasons: [String: String] = [
        // Optimal.
        "vary-normalise-lang-order": varyAsSent,
        "vary-normalise-lang-case": varyAsSent,
        "vary-normalise-lang-select": varyAsSent,
        "conditional-lm-fresh-no-lm":
            "without a Last-Modified, If-Modified-Since is compared with the stored Date: an earlier date is a 200",
        "partial-store-partial-reuse-partial": partial,
        "partial-store-partial-reuse-partial-byterange": partial,
        "partial-store-partial-reuse-partial-absent": partial,
        "partial-store-partial-reuse-partial-suffix": partial,
        "partial-store-partial-complete": partial,
        // Check.
        "freshness-max-age-two-stale-fresh-sameline": firstDuplicate,
        "freshness-max-age-two-stale-fresh-sepline": firstDuplicate,
        "freshness-max-age-decimal-zero": invalidMaxAge,
        "freshness-max-age-decimal-five": invalidMaxAge,
        "freshness-max-age-a100": invalidMaxAge,
        "freshness-max-age-100a": invalidMaxAge,
        "stale-close": staleOnError,
        "stale-503": staleOnError,
        "stale-warning-stored": staleOnError,
        "stale-warning-become": staleOnError,
        "heuristic-delta-5": shortHeuristic,
        "heuristic-delta-10": shortHeuristic,
        "heuristic-delta-30": shortHeuristic,
        "ccreq-oic": "only-if-cached with nothing stored is a cacheMiss error, where a proxy answers 504",
        "pragma-request-no-cache":
            "Pragma: no-cache in a request without Cache-Control is honoured (RFC 9111 §5.4): the origin answers",
        "conditional-etag-strong-respond-obs-text":
            "the manager refuses a header value that is not ASCII before anything is sent",
        "conditional-etag-quoted-respond-unquoted": etagAsSent,
        "conditional-etag-unquoted-respond-quoted": etagAsSent,
        "conditional-etag-vary-headers-mismatch":
            "a request whose Vary fields differ from the stored response's is not revalidated with its ETag: it "
            + "is another variant, loaded whole",
        "conditional-etag-strong-generate-unquoted": etagAsSent,
        "conditional-etag-forward-unquoted": etagAsSent,
        "304-etag-update-response-Content-Encoding": framing,
        "304-etag-update-response-Content-Range": framing,
        "head-410-update":
            "a 410 to a HEAD says the resource is gone: it does not refresh the stored 200 (RFC 9111 §4.3.5 updates "
            + "from a 200 only), so the next GET loads",
        "other-age-delay": "a response from the network carries the Age its server sent; only a stored one gets ours",
    ]

    static let varyAsSent =
        "Vary fields are matched by value (list members trimmed), not by what Accept-Language means: another order, "
        + "case or selection is another variant"
    static let partial =
        "partial responses are never stored, so never combined nor served as a whole; a stored whole answers a Range"
    static let firstDuplicate =
        "of two max-age directives the first counts (RFC 9111 §4.2.1 allows the first, or stale)"
    static let invalidMaxAge =
        "an invalid max-age makes the response stale (RFC 9111 §4.2.1), where some caches read its leading digits"
    static let staleOnError =
        "a stale response answers a failed call only within stale-if-error (or in the offline modes), and no "
        + "Warning is added (RFC 9111 retired it)"
    static let shortHeuristic =
        "a tenth of a few seconds since Last-Modified is fresh for less than the 3 s the case waits"
    static let etagAsSent = "entity tags are compared and sent as the server wrote them, quotes included"
    static let framing =
        "a 304 does not replace the stored body's Content-Encoding or Content-Range: they describe the stored bytes"

    /// Cases that fail on one cache only.
    static let onlyOn: [String: CacheKind] = [:]

    static func reason(for id: String, on kind: CacheKind) -> String? {
        guard let reason = reasons[id] else { return nil }
        if let only = onlyOn[id], only != kind { return nil }
        return reason
    }
}
