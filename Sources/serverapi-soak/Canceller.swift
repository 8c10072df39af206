import Foundation
import ServerAPIKit
import Synchronization

/// Cancels calls at random while a round runs: by id, tag, first, last, all, a caller's task, or a
/// completion handler's handle.
final class Canceller: Sendable {
    enum Action: String, CaseIterable {
        case id, tag, first, last, all, task, handle
    }

    private let counts = Mutex([Action: Int]())
    private let tags: [String]

    init(tags: [String]) { self.tags = tags }

    /// Runs until its task is cancelled, pausing `pause` (a random share of it) between cancellations.
    func run(manager: ServerAPIManager, ledger: CallLedger, handles: HandleTable, pause: Duration) async {
        var generator = SystemRandomNumberGenerator()
        while !Task.isCancelled {
            let wait = pause * Double.random(in: 0.2...1.8, using: &generator)
            do { try await Task.sleep(for: wait) } catch { return }
            let roll = Int.random(in: 0..<100, using: &generator)
            let action: Action
            switch roll {
            case 0..<30: action = .id
            case 30..<42: action = .tag
            case 42..<56: action = .first
            case 56..<70: action = .last
            case 70..<71 where Bool.random(using: &generator): action = .all
            case 70..<71: action = .tag
            case 71..<90: action = .task
            default: action = .handle
            }
            let hit: Bool
            switch action {
            case .id:
                let call = manager.inFlight.randomElement()
                hit = call.map { !manager.cancel(id: $0.id).isEmpty } ?? false
            case .tag: hit = !manager.cancel(tag: tags.randomElement()!).isEmpty
            case .first: hit = manager.cancelFirst() != nil
            case .last: hit = manager.cancelLast() != nil
            case .all: hit = !manager.cancelAll().isEmpty
            case .task:
                let task = ledger.randomTask()
                task?.cancel()
                hit = task != nil
            case .handle:
                let handle = handles.randomHandle()
                handle?.cancel()
                hit = handle != nil
            }
            if hit { counts.withLock { $0[action, default: 0] += 1 } }
        }
    }

    /// How many cancellations of each kind found a call to cancel.
    var summary: String {
        let counts = self.counts.withLock { $0 }
        return Action.allCases.map { "\($0.rawValue) \(counts[$0] ?? 0)" }.joined(separator: ", ")
    }
}
