@_spi(Backend) import ServerAPIKit

/// A clock that stands still until a test moves it, so retry waits, throttling intervals and
/// TTLs run deterministically without sleeping.
///
/// ```swift
/// let clock = TestClock()
/// let manager = ServerAPIManager(transport: mock, configuration: .init(clock: clock))
/// async let result = manager.send(api.retry(1))
/// await clock.waitForSleepers(1)   // the manager is waiting to retry
/// clock.advance(by: .seconds(1))
/// ```
public final class TestClock: Clock, Sendable {
    /// A point on the test clock: the time advanced since the clock was made.
    public struct Instant: InstantProtocol, Hashable, Sendable {
        /// The time since the clock started.
        public var offset: Duration

        /// Creates the instant `offset` after the clock started.
        public init(offset: Duration) { self.offset = offset }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelled: Set<UInt64> = []
        var requested: [Duration] = []
        var waiters = CountWaiters()
        var sleeperCount: Int { sleepers.count }
    }

    private let state = Locked(State())

    /// Creates a clock at offset zero.
    public init() {}

    /// The current instant: it moves only when the test calls `advance(by:)`.
    public var now: Instant { state.withLock { $0.now } }

    /// Zero: the clock moves exactly by what the test advances it.
    public var minimumResolution: Duration { .zero }

    /// Every sleep duration asked of this clock so far, in order.
    public var requestedSleeps: [Duration] { state.withLock { $0.requested } }

    /// How many tasks are sleeping on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until the test advances the clock to `deadline`, or throws `CancellationError` when the task is
    /// cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.requested.append(state.now.duration(to: deadline))
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (resume, waiters) = state.withLock {
                    state -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (nil, Self.readyWaiters(&state))
                }
                for waiter in waiters { waiter.resume() }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
                state.cancelled.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` tasks are sleeping on this clock, or as soon as the waiting task
    /// is cancelled (so a test's time limit ends a wait for sleepers that never come; check
    /// `sleeperCount` afterwards when that matters).
    public func waitForSleepers(_ count: Int) async {
        await state.wait(until: \.sleeperCount, reaches: count, waiters: \.waiters)
    }

    private static func readyWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        state.waiters.reached(state.sleepers.count)
    }
}
