import Foundation
import ServerAPIKit
import Synchronization

/// Counts how often a completion handler ran (it must run exactly once).
final class CompletionCounter: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts one more run and returns the new count.
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }

    var value: Int { count.load(ordering: .relaxed) }
}

/// The completion-handler calls' handles (so that the canceller can use them) and their counters.
final class HandleTable: Sendable {
    private struct State {
        var handles: [RequestID: RequestHandle] = [:]
        var counters: [RequestID: CompletionCounter] = [:]
    }
    private let state = Mutex(State())

    func insert(_ id: RequestID, _ handle: RequestHandle) { state.withLock { $0.handles[id] = handle } }
    func remove(_ id: RequestID) { state.withLock { _ = $0.handles.removeValue(forKey: id) } }
    func record(_ id: RequestID, counter: CompletionCounter) { state.withLock { $0.counters[id] = counter } }
    func randomHandle() -> RequestHandle? { state.withLock { $0.handles.values.randomElement() } }

    /// The ids whose completion handler ran more than once, with the count; then forgets the counters.
    func drainDuplicates() -> [(RequestID, Int)] {
        state.withLock { state in
            defer { state.counters.removeAll() }
            return state.counters.compactMap { $0.value.value > 1 ? ($0.key, $0.value.value) : nil }
        }
    }
}

/// Every call of a round: started, ended (and how), so that a call that ends twice or never is seen.
final class CallLedger: Sendable {
    private struct State {
        var running: [RequestID: CallKind] = [:]
        var tasks: [RequestID: Task<Void, Never>] = [:]
        var endings: [String: [String: Int]] = [:]
        var violations: [String] = []
        var ended = 0
    }
    private let state = Mutex(State())

    func start(_ id: RequestID, _ kind: CallKind) { state.withLock { $0.running[id] = kind } }

    /// Keeps a running call's task for the canceller (not one that has already ended).
    func attach(_ id: RequestID, _ task: Task<Void, Never>) {
        state.withLock { state in
            if state.running[id] != nil { state.tasks[id] = task }
        }
    }

    func end(_ id: RequestID, _ kind: CallKind, _ ending: Result<String, SoakViolation>) {
        state.withLock { state in
            state.tasks.removeValue(forKey: id)
            guard state.running.removeValue(forKey: id) != nil else {
                state.violations.append("\(kind.rawValue) call \(id) ended twice")
                return
            }
            state.ended += 1
            switch ending {
            case .success(let how):
                state.endings[kind.rawValue, default: [:]][how, default: 0] += 1
                if how != ServerAPIError.Kind.cancelled.rawValue, !kind.allowedEndings.contains(how) {
                    state.violations.append("\(kind.rawValue) call \(id) ended with \(how)")
                }
            case .failure(let violation):
                state.endings[kind.rawValue, default: [:]]["violation", default: 0] += 1
                state.violations.append(violation.description)
            }
        }
    }

    /// A random running call's task (to cancel it as its caller would).
    func randomTask() -> Task<Void, Never>? { state.withLock { $0.tasks.values.randomElement() } }

    func add(violation: String) { state.withLock { $0.violations.append(violation) } }

    var running: [RequestID: CallKind] { state.withLock { $0.running } }
    var ended: Int { state.withLock { $0.ended } }
    var violations: [String] { state.withLock { $0.violations } }
    var endings: [String: [String: Int]] { state.withLock { $0.endings } }
}
