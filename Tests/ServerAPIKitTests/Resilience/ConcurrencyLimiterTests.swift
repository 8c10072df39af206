import ServerAPITesting
import Testing

@testable import ServerAPIKit

@Suite("Concurrency limiter state machine")
struct ConcurrencyLimiterTests {
    @Test("a fixed limit grants up to the limit, queues up to the queue size, then rejects")
    func fixed() {
        var limiter = ConcurrencyLimiter(.fixed(2, maxQueue: 1))
        #expect(limiter.acquire(1) == .granted)
        #expect(limiter.acquire(2) == .granted)
        #expect(limiter.acquire(3) == .queued)
        #expect(limiter.acquire(4) == .rejected(limit: 2))
        #expect(limiter.inFlight == 2 && limiter.queue == [3])
    }

    @Test("a release grants the first queued attempt, in order")
    func fifo() {
        var limiter = ConcurrencyLimiter(.fixed(1, maxQueue: 5))
        #expect(limiter.acquire(1) == .granted)
        #expect(limiter.acquire(2) == .queued)
        #expect(limiter.acquire(3) == .queued)
        #expect(limiter.release(nil) == [2])
        #expect(limiter.inFlight == 1 && limiter.queue == [3])
        #expect(limiter.release(nil) == [3])
        #expect(limiter.release(nil) == [])
        #expect(limiter.inFlight == 0)
    }

    @Test("a queued attempt that leaves (timeout, cancellation) is not granted later")
    func leave() {
        var limiter = ConcurrencyLimiter(.fixed(1, maxQueue: 5))
        _ = limiter.acquire(1)
        _ = limiter.acquire(2)
        _ = limiter.acquire(3)
        #expect(limiter.leave(2) == true)
        #expect(limiter.release(nil) == [3])
        // Granted already: leaving says so, and the attempt must release its slot.
        #expect(limiter.leave(3) == false)
        #expect(limiter.inFlight == 1)
    }

    @Test("a new attempt never jumps the queue, and a hedge never queues")
    func noJumping() {
        var limiter = ConcurrencyLimiter(.fixed(1, maxQueue: 5))
        _ = limiter.acquire(1)
        _ = limiter.acquire(2)
        #expect(limiter.tryAcquire() == false)
        #expect(limiter.release(nil) == [2])
        #expect(limiter.tryAcquire() == false)
        _ = limiter.release(nil)
        #expect(limiter.tryAcquire() == true)
    }

    @Test("a queue of zero rejects at the limit")
    func noQueue() {
        var limiter = ConcurrencyLimiter(.fixed(1, maxQueue: 0))
        #expect(limiter.acquire(1) == .granted)
        #expect(limiter.acquire(2) == .rejected(limit: 1))
    }

    @Test("AIMD grows by one per answer while in use, and backs off on overload or slow answers")
    func aimd() {
        let settings = AIMDLimit(initial: 4, minimum: 2, maximum: 6, backoffRatio: 0.5, latencyThreshold: .seconds(1))
        var limiter = ConcurrencyLimiter(ConcurrencyLimitPolicy(limit: .aimd(settings)))
        for id in 1...4 { #expect(limiter.acquire(UInt64(id)) == .granted) }
        _ = limiter.release(.init(latency: .milliseconds(10), overloaded: false))
        #expect(limiter.limit == 5)
        _ = limiter.release(.init(latency: .milliseconds(10), overloaded: false))
        #expect(limiter.limit == 6)
        // Idle (2 in flight of 6): no growth, and never past the maximum anyway.
        _ = limiter.release(.init(latency: .milliseconds(10), overloaded: false))
        #expect(limiter.limit == 6)
        _ = limiter.release(.init(latency: .milliseconds(10), overloaded: true))
        #expect(limiter.limit == 3)
        _ = limiter.acquire(9)
        _ = limiter.release(.init(latency: .seconds(2), overloaded: false))
        #expect(limiter.limit == 2)  // the minimum
        // A cancelled attempt (no sample) does not move the limit.
        _ = limiter.acquire(10)
        _ = limiter.release(nil)
        #expect(limiter.limit == 2)
    }

    /// A gradient limiter whose minimum latency was measured: 100 ms, from `probeSamples` answers at
    /// the probe concurrency.
    static func measuredGradient(initial: Int = 10, probeInterval: Int = 1_000) -> ConcurrencyLimiter {
        let settings = GradientLimit(
            initial: initial, minimum: 1, maximum: 100, tolerance: 1.5, smoothing: 1, probeConcurrency: 2,
            probeSamples: 3, probeInterval: probeInterval)
        var limiter = ConcurrencyLimiter(ConcurrencyLimitPolicy(limit: .gradient(settings)))
        for (index, latency) in [90, 100, 400].enumerated() {
            #expect(limiter.acquire(UInt64(index)) == .granted)
            _ = limiter.release(.init(latency: .milliseconds(latency), overloaded: false))
        }
        return limiter
    }

    @Test("the gradient limit first measures the origin's latency at the probe concurrency: the median answer")
    func gradientProbes() {
        let settings = GradientLimit(initial: 10, probeConcurrency: 2, probeSamples: 3)
        var limiter = ConcurrencyLimiter(ConcurrencyLimitPolicy(limit: .gradient(settings), maxQueue: 10))
        #expect(limiter.limit == 2)
        #expect(limiter.acquire(1) == .granted && limiter.acquire(2) == .granted)
        #expect(limiter.acquire(3) == .queued)
        // Two in flight is the probe concurrency: the answer counts.
        #expect(limiter.release(.init(latency: .milliseconds(100), overloaded: false)) == [3])
        _ = limiter.release(.init(latency: .milliseconds(400), overloaded: false))
        #expect(limiter.gradient.probing && limiter.gradient.minimumLatency == nil)
        _ = limiter.release(.init(latency: .milliseconds(90), overloaded: false))
        #expect(!limiter.gradient.probing)
        #expect(limiter.gradient.minimumLatency == 0.1)
        #expect(limiter.limit == 10)
    }

    @Test("answers still draining from before a probe, or overloaded, do not measure the minimum latency")
    func gradientProbeIgnoresLoad() {
        var limiter = Self.measuredGradient(probeInterval: 1)
        for id in 10..<15 { _ = limiter.acquire(UInt64(id)) }
        // The next answer ends the interval: the limiter probes again, at 2 in flight.
        _ = limiter.release(.init(latency: .milliseconds(100), overloaded: false))
        #expect(limiter.gradient.probing && limiter.limit == 2)
        // Four still in flight from before: their answers ran with more load than the probe's.
        _ = limiter.release(.init(latency: .milliseconds(900), overloaded: false))
        _ = limiter.release(.init(latency: .milliseconds(900), overloaded: false))
        #expect(limiter.gradient.samples.isEmpty)
        _ = limiter.release(.init(latency: .milliseconds(50), overloaded: true))
        #expect(limiter.gradient.samples.isEmpty)
        _ = limiter.release(.init(latency: .milliseconds(200), overloaded: false))
        #expect(limiter.gradient.samples == [0.2])
    }

    @Test("the gradient limit grows while latency stays within the tolerance and shrinks when it rises past it")
    func gradient() {
        var limiter = Self.measuredGradient()
        for id in 10..<20 { _ = limiter.acquire(UInt64(id)) }
        // 1.5 × the minimum: the gradient is 1, and the limit gains √10 of headroom.
        _ = limiter.release(.init(latency: .milliseconds(150), overloaded: false))
        let grown = limiter.limit
        #expect(grown == 13)
        for id in 20..<24 { _ = limiter.acquire(UInt64(id)) }
        // Six times the minimum: the gradient bottoms out at 0.5.
        _ = limiter.release(.init(latency: .milliseconds(600), overloaded: false))
        #expect(limiter.limit < grown)
        let before = limiter.limit
        _ = limiter.release(.init(latency: .milliseconds(100), overloaded: true))
        #expect(limiter.limit < before)
    }

    @Test("the gradient limit measures the minimum latency again every probe interval")
    func gradientReprobes() {
        var limiter = Self.measuredGradient(probeInterval: 3)
        for id in 10..<13 { _ = limiter.acquire(UInt64(id)) }
        for _ in 0..<2 { _ = limiter.release(.init(latency: .milliseconds(100), overloaded: false)) }
        #expect(!limiter.gradient.probing)
        _ = limiter.release(.init(latency: .milliseconds(100), overloaded: false))
        #expect(limiter.gradient.probing && limiter.limit == 2)
        // The origin got slower: the new minimum replaces the old one.
        for id in 13..<16 {
            #expect(limiter.acquire(UInt64(id)) == .granted)
            _ = limiter.release(.init(latency: .milliseconds(300), overloaded: false))
        }
        #expect(limiter.gradient.minimumLatency == 0.3 && !limiter.gradient.probing)
    }

    @Test("a limit that shrinks holds queued attempts until in-flight ones drop below it")
    func shrinkHoldsQueue() {
        let settings = AIMDLimit(initial: 2, minimum: 1, maximum: 4, backoffRatio: 0.5)
        var limiter = ConcurrencyLimiter(ConcurrencyLimitPolicy(limit: .aimd(settings), maxQueue: 4))
        _ = limiter.acquire(1)
        _ = limiter.acquire(2)
        #expect(limiter.acquire(3) == .queued)
        #expect(limiter.release(.init(latency: .zero, overloaded: true)) == [])
        #expect(limiter.limit == 1 && limiter.inFlight == 1)
        #expect(limiter.release(nil) == [3])
    }
}
