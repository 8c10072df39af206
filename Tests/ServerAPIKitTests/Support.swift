import Foundation
import ServerAPIKit

/// Counts events and lets a test wait until a number of them happened, without sleeping.
///
/// A wait ends early when its task is cancelled (a test's time limit), so a test whose event
/// never comes fails instead of hanging.
final class EventCounter: Sendable {
    private struct State {
        var count = 0
        var nextID = 0
        var waiters: [Int: (target: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
        var cancelled: Set<Int> = []
    }

    private let state = Locked(State())

    var count: Int { state.withLock { $0.count } }

    func fire() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            let count = state.count
            let ready = state.waiters.filter { $0.value.target <= count }
            for id in ready.keys { state.waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }

    func wait(for target: Int = 1) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.count >= target || state.cancelled.remove(id) != nil { return true }
                    state.waiters[id] = (target, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter.continuation }
                state.cancelled.insert(id)
                return nil
            }
            waiter?.resume()
        }
    }
}

/// A thread-safe log of strings.
final class Log: Sendable {
    private let entries = Locked<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

extension ServerAPI {
    static func test(_ path: String = "/x") -> ServerAPI { ServerAPI(host: "https://api.test", path: path) }
}

func errorOf(_ body: () async throws -> some Any) async -> ServerAPIError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? ServerAPIError
    }
}
