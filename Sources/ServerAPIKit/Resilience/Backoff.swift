#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How long to wait before trying again: the one rule behind a call's retries (`RetryPolicy`), an event
/// source's reconnections (`EventSource.Configuration`) and a WebSocket's (`WebSocket.Reconnection`).
///
/// The wait starts at `initial`, grows by `multiplier` at each step, is capped at `maximum`, and is spread by
/// `jitter` — a fraction of the wait, drawn at random on either side — so that many clients that failed
/// together do not come back in step.
package struct Backoff: Sendable, Hashable {
    /// The wait before the first try again (step 0).
    package var initial: Duration
    /// The factor by which the wait grows at each step.
    package var multiplier: Double
    /// The longest wait, before jitter.
    package var maximum: Duration
    /// The fraction of the wait drawn at random, 0 (none) to 1.
    package var jitter: Double

    package init(initial: Duration, multiplier: Double, maximum: Duration, jitter: Double = 0) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The wait after `steps` steps of growth, without jitter: `initial × multiplier^steps`, at most `maximum`.
    package func nominal(afterSteps steps: Int) -> Duration {
        let cap = Swift.max(maximum, .zero)
        let factor = pow(multiplier, Double(Swift.max(steps, 0)))
        // Compared in seconds first, so that a factor too large for a `Duration` (or not a number) is "as long as
        // allowed" instead of an overflow.
        guard factor.isFinite, factor >= 0, initial.seconds * factor < cap.seconds else { return cap }
        return initial * factor
    }

    /// The wait after `steps` steps, with jitter picked by `random` (0 to 1: the shortest to the longest).
    package func delay(afterSteps steps: Int, random: Double = .random(in: 0...1)) -> Duration {
        let base = nominal(afterSteps: steps)
        let spread = Swift.min(Swift.max(jitter, 0), 1)
        guard spread > 0 else { return base }
        return base * (1 - spread + 2 * spread * Swift.min(Swift.max(random, 0), 1))
    }
}
