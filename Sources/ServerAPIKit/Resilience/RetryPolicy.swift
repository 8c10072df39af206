#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// When a failed attempt is retried, and how long to wait before the next one.
///
/// Delays grow exponentially from `baseDelay` by `multiplier`, are capped at `maxDelay`,
/// and are spread by `jitter` (a fraction of the delay, drawn at random) so that many
/// clients do not retry in step. A `Retry-After` header (seconds or an HTTP date) replaces
/// the computed delay when `honorsRetryAfter` is set, capped at `maxRetryAfter`.
public struct RetryPolicy: Sendable, Hashable {
    /// The delay before the first retry.
    public var baseDelay: Duration
    /// The factor by which each delay grows.
    public var multiplier: Double
    /// The longest delay.
    public var maxDelay: Duration
    /// The fraction of the delay drawn at random (0 for none, 1 for "full jitter").
    public var jitter: Double
    /// The statuses that are retried.
    public var retryableStatuses: Set<Int>
    /// The error kinds that are retried.
    public var retryableKinds: Set<ServerAPIError.Kind>
    /// Whether POST, PATCH and other non-idempotent methods are retried too.
    public var retriesNonIdempotent: Bool
    /// Whether `Retry-After` sets the delay.
    public var honorsRetryAfter: Bool
    /// The longest `Retry-After` honoured; a longer one ends the retries.
    public var maxRetryAfter: Duration

    /// Creates a policy of exponential backoff with jitter, retrying the failures `retryOn` accepts.
    public init(
        baseDelay: Duration = .milliseconds(200),
        multiplier: Double = 2,
        maxDelay: Duration = .seconds(10),
        jitter: Double = 0.2,
        retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
        retryableKinds: Set<ServerAPIError.Kind> = [.timedOut, .cannotConnect, .network],
        retriesNonIdempotent: Bool = false,
        honorsRetryAfter: Bool = true,
        maxRetryAfter: Duration = .seconds(60)
    ) {
        self.baseDelay = baseDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = min(max(jitter, 0), 1)
        self.retryableStatuses = retryableStatuses
        self.retryableKinds = retryableKinds
        self.retriesNonIdempotent = retriesNonIdempotent
        self.honorsRetryAfter = honorsRetryAfter
        self.maxRetryAfter = maxRetryAfter
    }

    /// The default: 200 ms doubling up to 10 s, 20 % jitter, idempotent methods only.
    public static let `default` = RetryPolicy()

    /// Retries immediately, without waiting (for tests).
    public static let immediate = RetryPolicy(baseDelay: .zero, maxDelay: .zero, jitter: 0)

    /// Returns a copy that also retries non-idempotent methods (POST, PATCH).
    public func allowingNonIdempotent() -> RetryPolicy {
        var copy = self
        copy.retriesNonIdempotent = true
        return copy
    }

    /// Whether an error is of a kind this policy retries.
    package func shouldRetry(_ error: ServerAPIError) -> Bool {
        if error.kind == .httpStatus, let status = error.status { return retryableStatuses.contains(status) }
        return retryableKinds.contains(error.kind)
    }

    /// The waits between retries.
    var backoff: Backoff { Backoff(initial: baseDelay, multiplier: multiplier, maximum: maxDelay, jitter: jitter) }

    /// The delay before retry number `retry` (1 for the first retry), without jitter.
    package func baseDelay(forRetry retry: Int) -> Duration { backoff.nominal(afterSteps: retry - 1) }

    /// The delay before retry number `retry`, with jitter drawn from `random` (a number in 0..<1).
    package func delay(forRetry retry: Int, random: Double = Double.random(in: 0..<1)) -> Duration {
        backoff.delay(afterSteps: retry - 1, random: random)
    }

    /// The wait a `Retry-After` header asks for, if it is present and readable.
    /// - Parameters:
    ///   - value: The header value: seconds, or an HTTP date.
    ///   - now: The current time, for HTTP dates.
    package static func retryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value.map({ HTTPSyntax.trimmed($0) }), !value.isEmpty else { return nil }
        if let seconds = Double(value), seconds >= 0 { return .seconds(seconds) }
        // The HTTP-date forms (RFC 9110 §5.6.7) are what RFC 6265's date algorithm reads; no DateFormatter,
        // which would bring in Foundation's internationalisation (ICU).
        guard let date = SetCookie.parseDate(value) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now)))
    }
}
