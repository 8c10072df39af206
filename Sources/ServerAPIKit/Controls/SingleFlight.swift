/// Work in flight that identical requests join: one piece of work (a transport call, a token
/// refresh), any number of waiters.
///
/// A waiter that is cancelled leaves alone and ends with `cancelled`; the work goes on for the
/// others. When the last waiter leaves, the work is cancelled and closed, so a new identical
/// request starts afresh instead of joining a dying one. Every transition happens under one
/// lock; continuations are resumed and tasks cancelled after it is released.
final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    typealias Outcome = Result<Value, any Error>
    typealias Progress = @Sendable (TransferProgress) -> Void

    /// A waiter's place in a flight.
    struct Ticket: Sendable {
        let flight: UInt64
        let waiter: UInt64
        /// Whether this waiter opened the flight and must start its work.
        let isLeader: Bool
    }

    private enum Waiter {
        /// Entered, not waiting yet.
        case joined
        case waiting(CheckedContinuation<Outcome, Never>)
        /// Left before it started waiting; it gets `cancelled` when it does.
        case cancelled
    }

    private struct Flight {
        var key: Key
        var waiters: [UInt64: Waiter] = [:]
        var progress: [UInt64: Progress] = [:]
        var live = 0
        var task: Task<Void, Never>?
        var outcome: Outcome?
        var abandoned = false
    }

    private struct State {
        var nextID: UInt64 = 0
        /// The flights new identical calls may join.
        var open: [Key: UInt64] = [:]
        var flights: [UInt64: Flight] = [:]
        var joins = 0
        var joinWaiters = CountWaiters()
    }

    private let state = Locked(State())

    /// Joins the open flight for `key`; when there is none, opens one if `opening` (the caller
    /// is then its leader and must `start` it) or returns `nil`.
    func enter(_ key: Key, progress: Progress?, opening: Bool) -> Ticket? {
        let (ticket, ready) = state.withLock { state -> (Ticket?, [CheckedContinuation<Void, Never>]) in
            let existing = state.open[key]
            guard existing != nil || opening else { return (nil, []) }
            state.nextID += 1
            let waiter = state.nextID
            let flightID: UInt64
            if let existing {
                flightID = existing
            } else {
                state.nextID += 1
                flightID = state.nextID
                state.open[key] = flightID
                state.flights[flightID] = Flight(key: key)
            }
            state.flights[flightID]?.waiters[waiter] = .joined
            state.flights[flightID]?.live += 1
            if let progress { state.flights[flightID]?.progress[waiter] = progress }
            state.joins += 1
            let ready = state.joinWaiters.reached(state.joins)
            let ticket = Ticket(flight: flightID, waiter: waiter, isLeader: existing == nil)
            return (ticket, ready)
        }
        for waiter in ready { waiter.resume() }
        return ticket
    }

    /// Starts the leader's work; its outcome goes to every waiter still there.
    func start(_ ticket: Ticket, work: @escaping @Sendable () async -> Outcome) {
        // Unstructured on purpose: the work belongs to all waiters, not to the leader's task.
        let task = Task {
            let outcome = await work()
            self.finish(ticket.flight, with: outcome)
        }
        let stale = state.withLock { state -> Bool in
            guard let flight = state.flights[ticket.flight], !flight.abandoned, flight.outcome == nil else {
                return true
            }
            state.flights[ticket.flight]?.task = task
            return false
        }
        // Every waiter left before the task was stored: nobody wants the result.
        if stale { task.cancel() }
    }

    /// Waits for the flight's outcome; `cancelled` as soon as the caller's task or its call is cancelled.
    func wait(_ ticket: Ticket, call: Call? = nil) async -> Outcome {
        guard let call else {
            return await withTaskCancellationHandler {
                await suspend(ticket)
            } onCancel: {
                self.leave(ticket)
            }
        }
        return await call.withCancellationHandler {
            await suspend(ticket)
        } onCancel: {
            self.leave(ticket)
        }
    }

    /// Waits until the flight ends or the waiter leaves (`leave` resumes it).
    private func suspend(_ ticket: Ticket) async -> Outcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let ready = state.withLock { state -> Outcome? in
                guard var flight = state.flights.removeValue(forKey: ticket.flight) else {
                    return .failure(ServerAPIError.cancelled())
                }
                defer { Self.store(flight, ticket.flight, in: &state) }
                switch flight.waiters[ticket.waiter] {
                case .joined?:
                    if let outcome = flight.outcome {
                        flight.waiters[ticket.waiter] = nil
                        return outcome
                    }
                    flight.waiters[ticket.waiter] = .waiting(continuation)
                    return nil
                case .cancelled?, .waiting?, nil:
                    flight.waiters[ticket.waiter] = nil
                    return .failure(ServerAPIError.cancelled())
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The waiters' count of every flight ever entered; for tests.
    var joinCount: Int { state.withLock { $0.joins } }

    /// The flights not yet fully collected; for tests (0 once every call has ended).
    var flightCount: Int { state.withLock { $0.flights.count } }

    /// Returns once `count` waiters have entered flights in total, or the task is cancelled; for tests.
    func waitForJoins(_ count: Int) async {
        await state.wait(until: \.joins, reaches: count, waiters: \.joinWaiters)
    }

    /// Reports the shared call's progress to every waiter still there.
    func progress(_ flightID: UInt64, _ progress: TransferProgress) {
        let observers = state.withLock { state in state.flights[flightID].map { Array($0.progress.values) } ?? [] }
        for observer in observers { observer(progress) }
    }

    private func leave(_ ticket: Ticket) {
        let (continuation, task) = state.withLock {
            state -> (CheckedContinuation<Outcome, Never>?, Task<Void, Never>?) in
            guard var flight = state.flights.removeValue(forKey: ticket.flight) else { return (nil, nil) }
            defer { Self.store(flight, ticket.flight, in: &state) }
            var continuation: CheckedContinuation<Outcome, Never>?
            switch flight.waiters[ticket.waiter] {
            case .joined?:
                flight.waiters[ticket.waiter] = .cancelled
            case .waiting(let waiting)?:
                flight.waiters[ticket.waiter] = nil
                continuation = waiting
            case .cancelled?, nil:
                return (nil, nil)
            }
            flight.live -= 1
            flight.progress[ticket.waiter] = nil
            guard flight.live == 0, flight.outcome == nil, !flight.abandoned else { return (continuation, nil) }
            // The last waiter left: stop the shared call, and let the next identical call start afresh.
            flight.abandoned = true
            if state.open[flight.key] == ticket.flight { state.open[flight.key] = nil }
            return (continuation, flight.task)
        }
        continuation?.resume(returning: .failure(ServerAPIError.cancelled()))
        task?.cancel()
    }

    private func finish(_ flightID: UInt64, with outcome: Outcome) {
        let waiting = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            guard var flight = state.flights.removeValue(forKey: flightID) else { return [] }
            defer { Self.store(flight, flightID, in: &state) }
            flight.outcome = outcome
            flight.task = nil
            flight.progress = [:]
            if state.open[flight.key] == flightID { state.open[flight.key] = nil }
            var waiting: [CheckedContinuation<Outcome, Never>] = []
            for (id, waiter) in flight.waiters {
                guard case .waiting(let continuation) = waiter else { continue }
                waiting.append(continuation)
                flight.waiters[id] = nil
            }
            return waiting
        }
        for continuation in waiting { continuation.resume(returning: outcome) }
    }

    /// Writes back a flight taken out of the table (taken out so that changing it copies nothing),
    /// or drops it once it has ended or been abandoned and every waiter has collected.
    private static func store(_ flight: Flight, _ id: UInt64, in state: inout State) {
        // An abandoned flight is forgotten as soon as nobody is left in it; its task, cancelled,
        // finds nothing to report to when it ends.
        if (flight.outcome != nil || flight.abandoned) && flight.waiters.isEmpty {
            state.flights[id] = nil
        } else {
            state.flights[id] = flight
        }
    }
}
