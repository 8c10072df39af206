/// One origin's concurrency limit as a pure state machine: attempts acquire a slot or queue for one,
/// release it with what they observed, and leave the queue when they time out or are cancelled. The
/// answers say who may go; the manager resumes them.
struct ConcurrencyLimiter: Sendable, Hashable {
    /// The answer to an attempt asking for a slot.
    enum Acquisition: Sendable, Hashable {
        /// It has a slot.
        case granted
        /// It waits in the queue until `release` grants it or it leaves.
        case queued
        /// The queue is full.
        case rejected(limit: Int)
    }

    /// What an attempt that held a slot observed.
    struct Sample: Sendable, Hashable {
        /// How long the attempt took.
        var latency: Duration
        /// Whether it saw overload: a timeout, 429 or 503.
        var overloaded: Bool
    }

    let policy: ConcurrencyLimitPolicy
    private(set) var inFlight = 0
    private(set) var queue: [UInt64] = []
    /// The limit, fractional while it adapts.
    private var estimate: Double
    /// The gradient limit's long-term latency, in seconds.
    private var longLatency: Double?

    init(_ policy: ConcurrencyLimitPolicy) {
        self.policy = policy
        switch policy.limit {
        case .fixed(let limit): estimate = Double(max(limit, 1))
        case .aimd(let settings): estimate = Double(settings.initial)
        case .gradient(let settings): estimate = Double(settings.initial)
        }
    }

    /// The current limit.
    var limit: Int { max(Int(estimate), 1) }

    /// Asks for a slot for attempt `id`.
    mutating func acquire(_ id: UInt64) -> Acquisition {
        if queue.isEmpty && inFlight < limit {
            inFlight += 1
            return .granted
        }
        guard queue.count < policy.maxQueue else { return .rejected(limit: limit) }
        queue.append(id)
        return .queued
    }

    /// Takes a slot only when one is free and nobody waits: for a hedge, which never queues.
    mutating func tryAcquire() -> Bool {
        guard queue.isEmpty && inFlight < limit else { return false }
        inFlight += 1
        return true
    }

    /// Gives a slot back, adapting the limit to `sample` when there is one (a cancelled attempt has none).
    /// - Returns: The queued attempts that now have a slot, in queue order.
    mutating func release(_ sample: Sample?) -> [UInt64] {
        if let sample { adapt(to: sample) }
        inFlight = max(inFlight - 1, 0)
        var granted: [UInt64] = []
        while !queue.isEmpty && inFlight < limit {
            granted.append(queue.removeFirst())
            inFlight += 1
        }
        return granted
    }

    /// Takes a queued attempt out of the queue (its wait timed out, or it was cancelled).
    /// - Returns: `true` when it was queued; `false` when it was granted a slot already, which it must release.
    mutating func leave(_ id: UInt64) -> Bool {
        guard let index = queue.firstIndex(of: id) else { return false }
        queue.remove(at: index)
        return true
    }

    private mutating func adapt(to sample: Sample) {
        switch policy.limit {
        case .fixed:
            return
        case .aimd(let settings):
            if sample.overloaded || sample.latency > settings.latencyThreshold {
                estimate = max(Double(settings.minimum), (estimate * settings.backoffRatio).rounded(.down))
            } else if Double(inFlight) * 2 >= estimate {
                // Grow only while the limit is in use: an idle client learns nothing about capacity.
                estimate = min(Double(settings.maximum), estimate + 1)
            }
        case .gradient(let settings):
            let latest = max(sample.latency.seconds, 1e-6)
            let long: Double
            if let previous = longLatency {
                let factor = 2 / (Double(settings.longWindow) + 1)
                var updated = previous * (1 - factor) + latest * factor
                // After an overload the long-term latency drifts high; bring it down faster once
                // latencies recover, so the limit can grow again.
                if updated / latest > 2 { updated *= 0.95 }
                long = updated
            } else {
                long = latest
            }
            longLatency = long
            // An idle client learns nothing about capacity.
            if Double(inFlight) < estimate / 2 && !sample.overloaded { return }
            let gradient = sample.overloaded ? 0.5 : min(max(settings.tolerance * long / latest, 0.5), 1)
            let target = estimate * gradient + estimate.squareRoot()
            let smoothed = estimate * (1 - settings.smoothing) + target * settings.smoothing
            estimate = min(max(smoothed, Double(settings.minimum)), Double(settings.maximum))
        }
    }
}
