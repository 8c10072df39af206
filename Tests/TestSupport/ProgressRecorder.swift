@_spi(Backend) import ServerAPIKit

/// Records a transfer's progress reports, lets a test wait for the first one in a direction, and
/// notices any that arrive after the transfer returned.
///
/// ```swift
/// let recorder = ProgressRecorder()
/// _ = try await transport.perform(TransportRequest(url: url, progress: recorder.record))
/// #expect(recorder.reports(.download).last?.completed == 300_000)
/// ```
public final class ProgressRecorder: Sendable {
    private struct State {
        var reports: [TransferProgress] = []
        var returned = false
        var lateReports = 0
        var waiters: [(TransferProgress.Direction, CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// Creates a recorder with no reports.
    public init() {}

    /// The closure to give a request as its `progress`.
    public var record: @Sendable (TransferProgress) -> Void {
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
    public func reports(_ direction: TransferProgress.Direction) -> [TransferProgress] {
        state.withLock { $0.reports.filter { $0.direction == direction } }
    }

    /// Every report so far, in order, both directions together.
    public var all: [TransferProgress] { state.withLock { $0.reports } }

    /// Notes that the transfer returned: any report after this is a contract violation.
    public func markReturned() { state.withLock { $0.returned = true } }

    /// How many reports arrived after `markReturned()`.
    public var lateReports: Int { state.withLock { $0.lateReports } }

    /// Waits for the first report in a direction (at once if one already arrived).
    public func first(_ direction: TransferProgress.Direction) async {
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
