import Foundation

/// The generous time bounds of the tests that check that something ends (a cancellation, a timeout, a
/// stall), scaled for slow builds: `SAPI_TEST_TIME_SCALE=N` multiplies every bound by N. `scripts/test.sh`
/// sets it for the ThreadSanitizer run, where instrumented code on two busy cores runs many times slower.
/// A bound is never a speed assertion; the figures are in the benchmarks.
public enum TestTiming {
    /// The multiplier from `SAPI_TEST_TIME_SCALE` (at least 1; 1 when unset).
    public static let scale: Int = {
        guard let text = ProcessInfo.processInfo.environment["SAPI_TEST_TIME_SCALE"], let value = Int(text) else {
            return 1
        }
        return max(1, value)
    }()

    /// `duration` scaled for this build.
    public static func bound(_ duration: Duration) -> Duration { duration * scale }
}
