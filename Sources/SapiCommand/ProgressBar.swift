import Dispatch
@_spi(Backend) import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A progress line on standard error: bytes, rate and time left, redrawn at most ten times a second.
///
/// A report that comes too soon after the last redraw is kept and drawn when the tenth of a second
/// is over, so that the line never stays behind the transfer (a burst, then a stall, must show the
/// burst's last bytes).
final class ProgressBar: Sendable {
    private struct State {
        var started = ContinuousClock.now
        var lastDraw: ContinuousClock.Instant?
        var firstCompleted: Int64?
        var drawn = false
        /// The latest report not drawn yet, waiting for the redraw that is scheduled.
        var pending: TransferProgress?
        var finished = false
    }

    private static let interval = Duration.milliseconds(100)
    private let state = Locked(State())
    private let write: @Sendable (String) -> Void

    /// Creates a bar that writes through `write` (standard error by default).
    // Not through `StandardError`, which would show the carriage returns that redraw the line: the bar quotes nothing
    // from the network.
    init(write: @escaping @Sendable (String) -> Void = { Descriptor.write($0.utf8, to: Descriptor.standardError) }) {
        self.write = write
    }

    /// Redraws the line for a progress report, or schedules the redraw when the last one was too recent.
    func update(_ progress: TransferProgress) {
        let (line, delay): (String?, Duration?) = state.withLock { state in
            guard !state.finished else { return (nil, nil) }
            let now = ContinuousClock.now
            let done = progress.total.map { progress.completed >= $0 } ?? false
            if let last = state.lastDraw, now - last < Self.interval, !done {
                let scheduled = state.pending != nil
                state.pending = progress
                return (nil, scheduled ? nil : Self.interval - (now - last))
            }
            state.pending = nil
            return (Self.draw(progress, now: now, state: &state), nil)
        }
        if let line { write(line) }
        if let delay {
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(Int(delay.seconds * 1_000_000) + 1)) {
                [self] in
                drawPending()
            }
        }
    }

    /// Ends the line, if one was drawn; later reports are ignored.
    func finish() {
        let drawn = state.withLock { state in
            state.finished = true
            state.pending = nil
            return state.drawn
        }
        if drawn { write("\n") }
    }

    private func drawPending() {
        let line: String? = state.withLock { state in
            guard !state.finished, let progress = state.pending else { return nil }
            state.pending = nil
            return Self.draw(progress, now: ContinuousClock.now, state: &state)
        }
        if let line { write(line) }
    }

    private static func draw(_ progress: TransferProgress, now: ContinuousClock.Instant, state: inout State) -> String {
        state.lastDraw = now
        state.drawn = true
        if state.firstCompleted == nil { state.firstCompleted = progress.completed }
        let elapsed = max((now - state.started).seconds, 0.001)
        let rate = Double(progress.completed - (state.firstCompleted ?? 0)) / elapsed
        return "\r" + line(progress, rate: rate) + "\u{1B}[K"
    }

    static func line(_ progress: TransferProgress, rate: Double) -> String {
        let arrow = progress.direction == .upload ? "↑" : "↓"
        var text = "\(arrow) \(bytes(Double(progress.completed)))"
        if let total = progress.total, total > 0 {
            let fraction = min(1, Double(progress.completed) / Double(total))
            let width = 24
            let filled = Int(fraction * Double(width))
            text =
                "\(arrow) [" + String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
                + "] \(Int(fraction * 100))% \(bytes(Double(progress.completed))) / \(bytes(Double(total)))"
            if rate > 0 {
                let left = Double(total - progress.completed) / rate
                text += "  \(bytes(rate))/s  ETA \(clock(left))"
            }
        } else if rate > 0 {
            text += "  \(bytes(rate))/s"
        }
        return text
    }

    static func bytes(_ count: Double) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = count
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(Int(value)) B" : String(cFormat: "%.1f", value) + " " + units[unit]
    }

    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--:--" }
        let total = Int(seconds.rounded())
        return String(cFormat: "%ld:%02ld", total / 60, total % 60)
    }
}
