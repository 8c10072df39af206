import Foundation
import ServerAPIKit

/// A progress line on standard error: bytes, rate and time left, redrawn at most ten times a second.
final class ProgressBar: Sendable {
    private struct State {
        var started = ContinuousClock.now
        var lastDraw: ContinuousClock.Instant?
        var firstCompleted: Int64?
        var drawn = false
    }

    private let state = Locked(State())
    private let write: @Sendable (String) -> Void

    /// Creates a bar that writes through `write` (standard error by default).
    init(write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) {
        self.write = write
    }

    /// Redraws the line for a progress report.
    func update(_ progress: TransferProgress) {
        let line: String? = state.withLock { state in
            let now = ContinuousClock.now
            let done = progress.total.map { progress.completed >= $0 } ?? false
            if let last = state.lastDraw, now - last < .milliseconds(100), !done { return nil }
            state.lastDraw = now
            state.drawn = true
            if state.firstCompleted == nil { state.firstCompleted = progress.completed }
            let elapsed = max((now - state.started).seconds, 0.001)
            let rate = Double(progress.completed - (state.firstCompleted ?? 0)) / elapsed
            return Self.line(progress, rate: rate)
        }
        if let line { write("\r" + line + "\u{1B}[K") }
    }

    /// Ends the line, if one was drawn.
    func finish() {
        if state.withLock({ $0.drawn }) { write("\n") }
    }

    static func line(_ progress: TransferProgress, rate: Double) -> String {
        let arrow = progress.direction == .upload ? "↑" : "↓"
        var text = "\(arrow) \(bytes(Double(progress.completed)))"
        if let total = progress.total, total > 0 {
            let fraction = min(1, Double(progress.completed) / Double(total))
            let width = 24
            let filled = Int(fraction * Double(width))
            text = "\(arrow) [" + String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
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
        return unit == 0 ? "\(Int(value)) B" : String(format: "%.1f", value) + " " + units[unit]
    }

    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--:--" }
        let total = Int(seconds.rounded())
        return String(format: "%d:%02d", total / 60, total % 60)
    }
}
