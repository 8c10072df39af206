@_spi(Backend) import ServerAPIKit
import Synchronization

/// A transport's loops, each started the first time a call needs it.
///
/// The first loop starts with the transport (the executor's home); the others when a call's origin first
/// hashes to them, so a client of one origin runs one thread and holds one loop's descriptors, however
/// many loops it may use. Once closed, no loop starts: a call routed to one that never started goes to the
/// first, which refuses it as shut down.
final class CurlLoopSet: Sendable {
    private struct State {
        var loops: [CurlLoop?]
        var executor: CurlLoopExecutor?
        var closed = false
    }

    /// How many loops there may be.
    let count: Int
    /// For each loop, started or not, the calls routed to it that have not returned (a streamed call returns
    /// with its head): how busy it is, for `LoopAssignment.adaptive`. Read without the lock.
    let callsInFlight: [CallCounter]
    private let first: CurlLoop
    private let make: @Sendable () -> CurlLoop
    private let state: Locked<State>

    init(count: Int, make: @escaping @Sendable () -> CurlLoop) {
        self.count = max(count, 1)
        callsInFlight = (0..<self.count).map { _ in CallCounter() }
        self.make = make
        first = make()
        state = Locked(State(loops: [first] + Array(repeating: nil, count: self.count - 1)))
    }

    /// Lets every loop, started now or later, run tasks that prefer `executor`.
    func useTaskExecutor(_ executor: CurlLoopExecutor) {
        let started = state.withLock { state -> [CurlLoop] in
            state.executor = executor
            return state.loops.compactMap { $0 }
        }
        for loop in started { loop.useTaskExecutor(executor) }
    }

    /// The loop at `index`, started if it was not.
    func loop(at index: Int) -> CurlLoop {
        let (loop, executor, isNew) = state.withLock { state -> (CurlLoop, CurlLoopExecutor?, Bool) in
            if let loop = state.loops[index] { return (loop, nil, false) }
            if state.closed { return (first, nil, false) }
            let loop = make()
            state.loops[index] = loop
            return (loop, state.executor, true)
        }
        if isNew, let executor { loop.useTaskExecutor(executor) }
        return loop
    }

    /// The first loop: where work from outside the loops runs.
    var home: CurlLoop { first }

    /// The loop whose thread this is, if any.
    var current: CurlLoop? {
        state.withLock { state in
            for case let loop? in state.loops where loop.isLoopThread { return loop }
            return nil
        }
    }

    /// The loops started so far.
    var started: [CurlLoop] { state.withLock { $0.loops.compactMap { $0 } } }

    /// What `body` gives for each loop, started or not (`unstarted` for those that are not).
    func map<T>(unstarted: T, _ body: (CurlLoop) -> T) -> [T] {
        state.withLock { $0.loops }.map { $0.map(body) ?? unstarted }
    }

    /// Refuses new jobs on every loop, the transfers in flight going on; no loop starts afterwards.
    func drain() {
        let started = state.withLock { state -> [CurlLoop] in
            state.closed = true
            return state.loops.compactMap { $0 }
        }
        for loop in started { loop.drain() }
    }

    /// Returns once no started loop has a transfer in flight.
    func waitUntilIdle() async {
        for loop in started { await loop.waitUntilIdle() }
    }

    /// Shuts every started loop down; no loop starts afterwards.
    func close() {
        let started = state.withLock { state -> [CurlLoop] in
            state.closed = true
            // The executor refers to this set: let the cycle go.
            state.executor = nil
            return state.loops.compactMap { $0 }
        }
        for loop in started { loop.shutDown() }
    }
}

/// A count of calls in flight on one loop.
final class CallCounter: Sendable {
    private let value = Atomic<Int>(0)

    /// The calls counted now.
    var count: Int { value.load(ordering: .relaxed) }

    /// Counts a call in.
    func enter() { value.add(1, ordering: .relaxed) }

    /// Counts a call in if fewer than `limit` are counted now, in one step, so that two callers that read the
    /// same count cannot both take the last place; whether it did.
    func enter(below limit: Int) -> Bool {
        var current = value.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = value.compareExchange(
                expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Counts a call out.
    func leave() { value.subtract(1, ordering: .relaxed) }
}
