import ServerAPIKit

/// Records progress reports, and notices any that arrive after the transfer returned.
final class ProgressRecorder: Sendable {
    private struct State {
        var reports: [TransferProgress] = []
        var returned = false
        var lateReports = 0
        var waiters: [(TransferProgress.Direction, CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// The closure to give a request as its `progress`.
    var record: @Sendable (TransferProgress) -> Void {
        { [self] report in
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.reports.append(report)
                if state.returned { state.lateReports += 1 }
                let (ready, waiting) = state.waiters.partitioned { $0.0 == report.direction }
                state.waiters = waiting
                return ready.map(\.1)
            }
            for waiter in ready { waiter.resume() }
        }
    }

    /// Every report in one direction, in order.
    func reports(_ direction: TransferProgress.Direction) -> [TransferProgress] {
        state.withLock { $0.reports.filter { $0.direction == direction } }
    }

    /// Notes that the transfer returned: any report after this is a contract violation.
    func markReturned() { state.withLock { $0.returned = true } }

    /// How many reports arrived after `markReturned()`.
    var lateReports: Int { state.withLock { $0.lateReports } }

    /// Waits for the first report in a direction (at once if one already arrived).
    func first(_ direction: TransferProgress.Direction) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.reports.contains(where: { $0.direction == direction }) { return true }
                state.waiters.append((direction, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

extension Array {
    /// The elements that match, and those that do not, each in order.
    func partitioned(_ matches: (Element) -> Bool) -> ([Element], [Element]) {
        var yes: [Element] = []
        var no: [Element] = []
        for element in self {
            if matches(element) { yes.append(element) } else { no.append(element) }
        }
        return (yes, no)
    }
}
