import Foundation
import ServerAPIKit

/// Counts events and lets a test wait until a number of them happened, without sleeping.
final class EventCounter: Sendable {
    private struct State {
        var count = 0
        var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    var count: Int { state.withLock { $0.count } }

    func fire() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            let count = state.count
            let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
            state.waiters.removeAll { $0.0 <= count }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    func wait(for target: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.count >= target { return true }
                state.waiters.append((target, continuation))
                return false
            }
            if ready { continuation.resume() }
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
