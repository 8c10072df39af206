import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The median, fastest and slowest time per call of one benchmark, in wall-clock and CPU time.
struct Measurement: Codable, Sendable {
    /// What was measured.
    var name: String
    /// Calls per repetition.
    var iterations: Int
    /// Repetitions timed (after the warm-up).
    var repetitions: Int
    /// Median wall-clock time per call, in microseconds.
    var medianMicroseconds: Double
    /// Fastest repetition's wall-clock time per call, in microseconds.
    var minMicroseconds: Double
    /// Slowest repetition's wall-clock time per call, in microseconds.
    var maxMicroseconds: Double
    /// Median CPU time of the process per call, in microseconds: what the work costs, without the
    /// time spent waiting for a core that other processes hold.
    var medianCPUMicroseconds: Double
}

/// One benchmark to run: a name, and a body that makes `iterations` calls.
struct Benchmark {
    var name: String
    var body: () async throws -> Void
}

enum Runner {
    /// Runs benchmarks interleaved (A, B, C, A, B, C, …) so that a change in machine load hits
    /// them alike; each gets `warmUp` untimed runs, then `repetitions` timed ones.
    static func compare(
        _ benchmarks: [Benchmark], iterations: Int, warmUp: Int = 3, repetitions: Int = 15
    ) async throws -> [Measurement] {
        for benchmark in benchmarks {
            for _ in 0..<warmUp { try await benchmark.body() }
        }
        var wall = Array(repeating: [Double](), count: benchmarks.count)
        var cpu = Array(repeating: [Double](), count: benchmarks.count)
        for _ in 0..<repetitions {
            for (index, benchmark) in benchmarks.enumerated() {
                let cpuStart = processCPUTime()
                let start = ContinuousClock.now
                try await benchmark.body()
                let elapsed = ContinuousClock.now - start
                let cpuElapsed = processCPUTime() - cpuStart
                wall[index].append(elapsed.microseconds / Double(iterations))
                cpu[index].append(cpuElapsed / Double(iterations))
            }
        }
        return benchmarks.indices.map { index in
            let times = wall[index].sorted()
            return Measurement(
                name: benchmarks[index].name, iterations: iterations, repetitions: repetitions,
                medianMicroseconds: median(times), minMicroseconds: times[0], maxMicroseconds: times[times.count - 1],
                medianCPUMicroseconds: median(cpu[index].sorted()))
        }
    }

    static func median(_ sorted: [Double]) -> Double {
        sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// CPU time used by the whole process so far (all threads), in microseconds.
    static func processCPUTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e6 + Double(time.tv_nsec) / 1e3
    }
}

extension Duration {
    var microseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e6 + Double(attoseconds) / 1e12
    }
}

/// Keeps a value alive so the optimizer cannot drop the work that produced it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
