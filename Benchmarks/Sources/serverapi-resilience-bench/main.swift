import BenchSupport
import Foundation
import ServerAPICurl
import ServerAPIKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// serverapi-resilience-bench: the four resilience policies against the fault fixture on loopback, with
// CurlTransport, each row a ratio from one run (issue 29):
//
//   slow-replica  2 % of responses 1 s late (/sometimes-slow): p99 without and with hedging, and the extra
//                 requests hedging sent
//   down          an upstream that hangs (/hang, 1 s timeout): a call's time once the breaker is open, and how
//                 soon traffic resumes once it is back
//   retry-storm   503 to everything with retry(3): attempts per call without and with the retry budget
//   overload      an upstream whose throughput peaks at 8 in flight (/load): throughput and p99 with no limit,
//                 fixed limits, AIMD and gradient
//
//   SAPI_FIXTURE_URL=http://127.0.0.1:PORT serverapi-resilience-bench [--calls N] [--concurrency C] [--scenario NAME]

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("serverapi-resilience-bench: \(message)\n".utf8))
    exit(1)
}

guard let fixture = ProcessInfo.processInfo.environment["SAPI_FIXTURE_URL"] else {
    fail("SAPI_FIXTURE_URL is not set: start scripts/test-server.sh and eval its env")
}
let calls = Int(option("--calls") ?? "") ?? 2000
let concurrency = Int(option("--concurrency") ?? "") ?? 32
let only = option("--scenario")

func manager(_ policies: ResiliencePolicies) -> ServerAPIManager {
    var configuration = ServerAPIManager.Configuration()
    configuration.resilience = policies
    // No cap on connections per host (the transport's default is 8): past it libcurl queues calls itself, a
    // hedge waits behind the call it should overtake, and "no limit" is a limit of 8.
    return ServerAPIManager(
        transport: CurlTransport(configuration: .init(maxConnectionsPerHost: 0)), configuration: configuration)
}

func milliseconds(_ duration: Duration) -> Double { duration.seconds * 1000 }

func percentile(_ values: [Duration], _ p: Double) -> Duration {
    guard !values.isEmpty else { return .zero }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
}

/// What one run of calls measured.
struct Run {
    var latencies: [Duration] = []
    var results: [Result<ServerResult, ServerAPIError>] = []
    var elapsed: Duration = .zero
    var p99: Duration { percentile(latencies, 0.99) }
    var values: [ServerResult] { results.compactMap { try? $0.get() } }
    var errors: [ServerAPIError] { results.compactMap { if case .failure(let e) = $0 { e } else { nil } } }
}

/// Sends `count` calls, `width` at a time, and times each in its caller.
func run(_ count: Int, width: Int, _ call: @escaping @Sendable (Int) async throws -> ServerResult) async -> Run {
    let started = ContinuousClock.now
    var run = Run()
    await withTaskGroup(of: (Duration, Result<ServerResult, ServerAPIError>).self) { group in
        var next = 0
        func add() {
            let index = next
            next += 1
            group.addTask {
                let start = ContinuousClock.now
                do {
                    let value = try await call(index)
                    return (ContinuousClock.now - start, .success(value))
                } catch {
                    return (ContinuousClock.now - start, .failure(.wrap(error)))
                }
            }
        }
        while next < min(width, count) { add() }
        for await (latency, result) in group {
            run.latencies.append(latency)
            run.results.append(result)
            if next < count { add() }
        }
    }
    run.elapsed = ContinuousClock.now - started
    return run
}

/// One goal of issue 29 and what this run measured for it, for the table at the end.
struct Goal: Sendable {
    var goal: String
    var measured: String
    var met: Bool
}
let goals = Mutex<[Goal]>([])
func goal(_ goal: String, _ measured: String, met: Bool) {
    goals.withLock { $0.append(Goal(goal: goal, measured: measured, met: met)) }
}

func row(_ cells: [String]) { print("| " + cells.joined(separator: " | ") + " |") }
func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

// MARK: Scenarios

func slowReplica() async throws {
    let url = try require(URL(string: "\(fixture)/sometimes-slow?percent=2&delay_ms=1000"))
    print("\n### One replica slow (2 % of responses 1 s late), \(calls) calls, \(concurrency) at a time\n")
    row(["", "p50 ms", "p99 ms", "extra requests", "p99 with / without"])
    row(["---", "---", "---", "---", "---"])
    let plain = manager(.none)
    let without = await run(calls, width: concurrency) { _ in try await plain.send(ServerAPI(url: url).format(.string))
    }
    row([
        "no hedging", format(milliseconds(percentile(without.latencies, 0.5))), format(milliseconds(without.p99)),
        "0 %", "1",
    ])
    // At p95 the calls past the delay (5 %) ask for as many hedges as the cap allows, so some slow calls
    // find it spent; at p97 the cap has room for every slow call.
    for level in [0.95, 0.97] {
        let hedging = manager(
            ResiliencePolicies(hedging: .percentile(level, fallback: .milliseconds(100), maxShare: 0.05)))
        let with = await run(calls, width: concurrency) { _ in
            try await hedging.send(ServerAPI(url: url).format(.string))
        }
        let hedges = with.values.filter(\.metrics.resilience.hedged).count
        let ratio = with.p99.seconds / max(without.p99.seconds, 1e-9)
        let extra = 100 * Double(hedges) / Double(calls)
        let name = "hedged at p\(Int((level * 100).rounded())) (≤ 5 %)"
        row([
            name, format(milliseconds(percentile(with.latencies, 0.5))), format(milliseconds(with.p99)),
            format(extra) + " %", format(ratio, 3),
        ])
        goal(
            "hedging (\(name)): p99 ≤ 1/5 of p99 without, ≤ 5 % extra requests",
            "\(format(ratio, 3)) of p99, \(format(extra)) % extra", met: ratio <= 0.2 && extra <= 5)
    }
}

func down() async throws {
    print("\n### Upstream down (hangs; 1 s timeout), breaker: 5 failures in a row, open 2 s\n")
    let breaker = manager(ResiliencePolicies(circuitBreaker: .consecutiveFailures(5, openFor: .seconds(2))))
    let hang = try require(URL(string: "\(fixture)/hang"))
    let health = try require(URL(string: "\(fixture)/health"))
    let failing = await run(5, width: 1) { _ in try await breaker.send(ServerAPI(url: hang).timeout(.seconds(1))) }
    let opened = ContinuousClock.now
    let rejected = await run(200, width: 1) { _ in try await breaker.send(ServerAPI(url: health).format(.string)) }
    let rejectedKinds = Set(rejected.errors.map(\.kind))
    // Upstream back: call until one succeeds.
    var resumed: Duration?
    while resumed == nil, ContinuousClock.now - opened < .seconds(10) {
        if (try? await breaker.send(ServerAPI(url: health).format(.string))) != nil {
            resumed = ContinuousClock.now - opened
        }
        try await Task.sleep(for: .milliseconds(10))
    }
    row(["", "value"])
    row(["---", "---"])
    row([
        "a call while the upstream hangs (before the breaker opens), p50 ms",
        format(milliseconds(percentile(failing.latencies, 0.5))),
    ])
    row(["a call once the breaker is open, p50 ms", format(milliseconds(percentile(rejected.latencies, 0.5)), 3)])
    row(["a call once the breaker is open, p99 ms", format(milliseconds(rejected.p99), 3)])
    row(["their error kinds", rejectedKinds.map(\.rawValue).sorted().joined(separator: ", ")])
    row([
        "traffic resumed after the breaker opened, s (probe interval 2 s)",
        resumed.map { format($0.seconds, 2) } ?? "never",
    ])
    let open = rejected.p99
    goal(
        "breaker open: a call fails in < 1 ms", "p99 \(format(milliseconds(open), 3)) ms",
        met: open < .milliseconds(1) && rejectedKinds == [.circuitOpen])
    // The upstream is back as soon as the breaker opens: the first probe, one interval later, must succeed
    // (the loop above polls every 10 ms).
    goal(
        "upstream back: traffic resumes within one probe interval (2 s)",
        resumed.map { "after \(format($0.seconds, 2)) s" } ?? "never",
        met: resumed.map { $0 < .milliseconds(2_100) } ?? false)
}

func retryStorm() async throws {
    let url = try require(URL(string: "\(fixture)/status/503"))
    print("\n### Retry storm (503 to everything, retry(3) immediately), \(calls) calls, \(concurrency) at a time\n")
    row(["", "attempts", "extra load", "calls/s"])
    row(["---", "---", "---", "---"])
    for (name, budget) in [
        ("no budget", RetryBudget?.none), ("budget 20 %, no floor", RetryBudget(minRetriesPerSecond: 0)),
        ("budget 20 % + 10/s (Finagle's defaults)", RetryBudget.default),
    ] {
        let client = manager(ResiliencePolicies(retryBudget: budget))
        let result = await run(calls, width: concurrency) { _ in
            try await client.send(ServerAPI(url: url).retry(3, policy: .immediate))
        }
        let attempts = result.errors.compactMap(\.metrics?.attempts).reduce(0, +)
        let extra = 100 * Double(attempts - calls) / Double(calls)
        let rate = Double(calls) / result.elapsed.seconds
        row([name, "\(attempts)", format(extra) + " %", format(rate, 0)])
        guard let budget else { continue }
        // The floor is Finagle's reserve: floor × window retries allowed in any window whatever the traffic,
        // so a storm gets the share plus floor × max(window, its length) ÷ its calls.
        let reserve = Double(budget.minRetriesPerSecond) * max(budget.window.seconds, result.elapsed.seconds)
        let bound = 100 * (budget.percentCanRetry + reserve / Double(calls))
        goal(
            "retry storm: extra load ≤ 20 % with the budget (\(name))",
            "\(format(extra)) % (bound: share + reserve ÷ calls = \(format(bound)) %, \(calls) calls in "
                + "\(format(result.elapsed.seconds)) s)",
            met: extra <= 20)
    }
}

func overload() async throws {
    let url = try require(URL(string: "\(fixture)/load?base_ms=10&knee=8"))
    print("\n### Overload (throughput peaks at 8 in flight), \(calls) calls, \(concurrency * 2) callers\n")
    row(["limit", "calls/s", "p99 ms", "final limit", "failed"])
    row(["---", "---", "---", "---", "---"])
    var policies: [(String, ConcurrencyLimitPolicy?)] = [("none", nil)]
    for limit in [4, 8, 16, 32] {
        policies.append(("fixed \(limit)", .fixed(limit, maxQueue: 10_000, queueTimeout: .seconds(60))))
    }
    policies.append(
        (
            // AIMD must be told what slow is: here three times the upstream's latency when idle (10 ms).
            // The gradient limit measures that latency itself.
            "AIMD",
            ConcurrencyLimitPolicy(
                limit: .aimd(AIMDLimit(initial: 8, latencyThreshold: .milliseconds(30))), maxQueue: 10_000,
                queueTimeout: .seconds(60))
        ))
    policies.append(
        (
            "gradient",
            ConcurrencyLimitPolicy(
                limit: .gradient(GradientLimit(initial: 8)), maxQueue: 10_000, queueTimeout: .seconds(60))
        ))
    var measured: [(name: String, throughput: Double, p99: Duration)] = []
    for (name, policy) in policies {
        let client = manager(ResiliencePolicies(concurrencyLimit: policy))
        let result = await run(calls, width: concurrency * 2) { _ in
            try await client.send(ServerAPI(url: url).format(.string))
        }
        let limit = result.values.last?.metrics.resilience.concurrencyLimit.map(String.init) ?? "-"
        let failures = Dictionary(grouping: result.errors, by: \.kind.rawValue).mapValues(\.count)
        let failed = failures.isEmpty ? "0" : failures.map { "\($0.value) \($0.key)" }.sorted().joined(separator: ", ")
        let throughput = Double(calls) / result.elapsed.seconds
        row([name, format(throughput, 0), format(milliseconds(result.p99)), limit, failed])
        measured.append((name, throughput, result.p99))
    }
    let bestFixed = measured.filter { $0.name.hasPrefix("fixed") }.max { $0.throughput < $1.throughput }
    guard let bestFixed, let none = measured.first(where: { $0.name == "none" }) else { return }
    for adaptive in measured where adaptive.name == "AIMD" || adaptive.name == "gradient" {
        let share = adaptive.throughput / bestFixed.throughput
        let better = none.p99.seconds / max(adaptive.p99.seconds, 1e-9)
        goal(
            "overload, \(adaptive.name): throughput within 10 % of the best fixed limit, p99 ≥ 2x better than none",
            "\(format(share, 2)) of \(bestFixed.name), p99 \(format(better, 2))x better",
            met: share >= 0.9 && better >= 2)
    }
}

struct Missing: Error {}
func require<T>(_ value: T?) throws -> T {
    guard let value else { throw Missing() }
    return value
}

print("## Resilience (serverapi-resilience-bench, CurlTransport, \(Date()))")
if only == nil || only == "slow-replica" { try await slowReplica() }
if only == nil || only == "down" { try await down() }
if only == nil || only == "retry-storm" { try await retryStorm() }
if only == nil || only == "overload" { try await overload() }

print("\n### Goals (issue 29)\n")
row(["goal", "measured", "met"])
row(["---", "---", "---"])
for entry in goals.withLock({ $0 }) { row([entry.goal, entry.measured, entry.met ? "yes" : "**no**"]) }
