#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Minimum interval: the same call is not sent again within its interval.
extension ServerAPIManager {
    /// What a throttled call does instead of being sent.
    enum ThrottleOutcome {
        /// Send it; its result is recorded under this generation.
        case send(UInt64)
        /// Answer with the previous result.
        case replay(SharedResponse)
    }

    /// Admits a call under its minimum interval, measured on the manager's clock.
    /// - Throws: `throttled` when the call came too soon and may not (or cannot) reuse the previous result.
    func admit(_ api: ServerAPI, key: ControlKey, policy: ThrottlePolicy, url: URL) throws(ServerAPIError)
        -> ThrottleOutcome
    {
        switch controls.throttles.admit(key, interval: policy.interval, now: ClockInstant(configuration.clock)) {
        case .send(let generation):
            return .send(generation)
        case .throttled(let elapsed, let previous):
            if policy.onThrottle == .returnPrevious, let previous { return .replay(previous) }
            let reason = policy.onThrottle == .returnPrevious ? " and it has no result to reuse yet" : ""
            throw ServerAPIError(
                .throttled,
                "the same call was sent \(Self.seconds(elapsed)) ago\(reason); it may be sent once every "
                    + Self.seconds(policy.interval),
                requestID: api.id, url: url)
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        String(cFormat: "%.3g s", duration.seconds)
    }
}
