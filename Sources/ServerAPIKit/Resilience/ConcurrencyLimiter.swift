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
    /// The gradient limit's measurement of the origin's latency under little load.
    private(set) var gradient = GradientState()

    init(_ policy: ConcurrencyLimitPolicy) {
        self.policy = policy
        switch policy.limit {
        case .fixed(let limit): estimate = Double(max(limit, 1))
        case .aimd(let settings): estimate = Double(settings.initial)
        case .gradient(let settings): estimate = Double(settings.initial)
        }
    }

    /// The current limit: while a gradient limit measures its minimum latency, its probe concurrency.
    var limit: Int {
        if case .gradient(let settings) = policy.limit, gradient.probing {
            return max(min(settings.probeConcurrency, Int(estimate)), 1)
        }
        return max(Int(estimate), 1)
    }

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
            if gradient.probing {
                // Only answers that ran with little load measure the minimum: those still draining from
                // before the probe ran with the old limit.
                guard !sample.overloaded, inFlight <= settings.probeConcurrency else { return }
                gradient.samples.append(latest)
                guard gradient.samples.count >= settings.probeSamples else { return }
                gradient.samples.sort()
                gradient.minimumLatency = gradient.samples[gradient.samples.count / 2]
                gradient.samples.removeAll(keepingCapacity: true)
                gradient.probing = false
                gradient.sinceProbe = 0
                return
            }
            gradient.sinceProbe += 1
            if gradient.sinceProbe >= settings.probeInterval {
                gradient.probing = true
            }
            guard let minimumLatency = gradient.minimumLatency else { return }
            // An idle client learns nothing about capacity.
            if Double(inFlight) < estimate / 2 && !sample.overloaded { return }
            let ratio = sample.overloaded ? 0.5 : min(max(settings.tolerance * minimumLatency / latest, 0.5), 1)
            let target = estimate * ratio + estimate.squareRoot()
            let smoothed = estimate * (1 - settings.smoothing) + target * settings.smoothing
            estimate = min(max(smoothed, Double(settings.minimum)), Double(settings.maximum))
        }
    }
}

/// What a gradient limit knows of its origin's latency under little load.
struct GradientState: Sendable, Hashable {
    /// Measuring the minimum latency: the limit is the probe concurrency.
    var probing = true
    /// The latencies measured so far in this probe, in seconds.
    var samples: [Double] = []
    /// The median latency of the last probe, in seconds.
    var minimumLatency: Double?
    /// Answers since the last probe ended.
    var sinceProbe = 0
}
