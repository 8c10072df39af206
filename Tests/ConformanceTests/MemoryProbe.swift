import Foundation
@_spi(Backend) import ServerAPIKit

#if canImport(Glibc)
    import Glibc
#endif

/// Watches this process's resident memory (VmRSS in /proc/self/status) while a transfer runs.
///
/// Tests run in one process, so the peak (VmHWM) says nothing about one transfer: the probe
/// samples VmRSS every few milliseconds and reports how far it rose above where it started.
final class MemoryProbe: Sendable {
    private let samples = Locked<(baseline: Int64, peak: Int64)>((0, 0))
    private let sampler = Locked<Task<Void, Never>?>(nil)

    /// Resident memory now, in bytes; `nil` where /proc is not available.
    static func residentBytes() -> Int64? { read("VmRSS:") }

    /// Hands the pages `malloc` holds free back to the system (glibc's `malloc_trim(0)`, looked up at run time:
    /// the Glibc module has no `malloc.h`), so that a rise measured from here is what a transfer holds, not
    /// hidden by the allocator reusing pages that earlier tests in the process freed. Does nothing elsewhere.
    static func trimFreePages() {
        #if canImport(Glibc)
            guard let program = dlopen(nil, RTLD_NOW), let symbol = dlsym(program, "malloc_trim") else { return }
            _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
        #endif
    }

    /// The process's peak resident memory so far, in bytes.
    static func peakResidentBytes() -> Int64? { read("VmHWM:") }

    /// Starts sampling.
    func start(every interval: Duration = .milliseconds(5)) {
        let now = Self.residentBytes() ?? 0
        samples.withLock { $0 = (now, now) }
        let task = Task.detached { [self] in
            while !Task.isCancelled {
                if let rss = Self.residentBytes() { samples.withLock { $0.peak = max($0.peak, rss) } }
                try? await Task.sleep(for: interval)
            }
        }
        sampler.withLock { $0 = task }
    }

    /// Stops sampling and returns the largest rise above the starting point, in bytes.
    func stop() -> Int64 {
        sampler.withLock { $0?.cancel() }
        if let rss = Self.residentBytes() { samples.withLock { $0.peak = max($0.peak, rss) } }
        return samples.withLock { $0.peak - $0.baseline }
    }

    private static func read(_ key: String) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            let digits = line.dropFirst(key.count).trimmingCharacters(in: .whitespaces).split(separator: " ").first
            return digits.flatMap { Int64($0) }.map { $0 * 1024 }
        }
        return nil
    }
}

/// Formats a byte count as MiB.
func mebibytes(_ bytes: Int64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
