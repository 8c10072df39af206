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

    @Test("the gradient limit grows while latency holds and shrinks when it rises")
    func gradient() {
        let settings = GradientLimit(initial: 10, minimum: 1, maximum: 100, tolerance: 1, smoothing: 1, longWindow: 100)
        var limiter = ConcurrencyLimiter(ConcurrencyLimitPolicy(limit: .gradient(settings)))
        for id in 1...10 { _ = limiter.acquire(UInt64(id)) }
        _ = limiter.release(.init(latency: .milliseconds(100), overloaded: false))
        let grown = limiter.limit
        #expect(grown > 10)
        for id in 11...20 { _ = limiter.acquire(UInt64(id)) }
        // Four times the long-term latency: the gradient bottoms out at 0.5.
        _ = limiter.release(.init(latency: .milliseconds(400), overloaded: false))
        #expect(limiter.limit < grown)
        let before = limiter.limit
        _ = limiter.release(.init(latency: .milliseconds(100), overloaded: true))
        #expect(limiter.limit < before)
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
