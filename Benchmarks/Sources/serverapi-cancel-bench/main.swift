import BenchSupport
import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPIURLSession
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// serverapi-cancel-bench: how long a cancelled call takes to end in its caller, per transport and per
// cancellation point: the time from the cancel (the caller's task, or the manager's cancel(id:)) to
// the moment the caller's `catch` runs with the `cancelled` error. Prints a table (p50, p99, max) and
// writes Benchmarks/results/bench-cancel.json. DESIGN.md promises 100 ms.
//
//   SAPI_FIXTURE_URL=http://127.0.0.1:PORT serverapi-cancel-bench [--samples N] [--output PATH]
//       [--backend curl|urlsession] [--point NAME]     (one backend, one point: all by default)
//
// Points:
//   before-start   the caller's task is cancelled right after it starts the call (before or as the
//                  transport begins)
//   connecting     cancel(id:) while the transport connects to a loopback listener that never
//                  completes a connection (its backlog is full)
//   mid-body       cancel(id:) once the first body bytes arrived (fixture /hang-body: the rest never comes)
//   between-retries  cancel(id:) during a 2 s retry delay after a 503
//   backpressure   a streamed body (fixture /stream-bytes, 64 MiB) that is not read: the transport's
//                  buffer is full and it has stopped reading; cancel(id:), then the reader reads on
//                  and gets the error. URLSessionTransport cannot pause on Linux (see its `stream`):
//                  it keeps receiving into memory, and when the whole body arrived before the cancel
//                  the call has ended and its reader gets the body ("ok", counted apart)

struct Row: Codable {
    var backend: String
    var point: String
    /// The samples that ended with `cancelled` (the percentiles are theirs).
    var samples: Int
    var p50Milliseconds: Double
    var p99Milliseconds: Double
    var maxMilliseconds: Double
    var wrongEndings: Int
    /// How the calls that did not end with `cancelled` ended ("ok": the whole body had arrived).
    var otherEndings: [String: Int]
}

struct Report: Codable {
    var date: String
    var samplesPerRow: Int
    var goalMilliseconds: Double
    var rows: [Row]
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("serverapi-cancel-bench: \(message)\n".utf8))
    exit(1)
}

guard let fixtureText = ProcessInfo.processInfo.environment["SAPI_FIXTURE_URL"] else {
    fail("SAPI_FIXTURE_URL is not set (scripts/bench-cancel.sh starts the fixture)")
}
let fixture = fixtureText.hasSuffix("/") ? String(fixtureText.dropLast()) : fixtureText
let samples = Int(option("--samples") ?? "") ?? 100
let output = option("--output") ?? "Benchmarks/results/bench-cancel.json"

/// A loopback port whose connections never complete: a listener with a zero backlog, filled with
/// connections it never accepts, so the kernel drops further SYNs and a client's connect waits.
final class UnansweredListener: Sendable {
    let port: Int
    private let descriptors: [Int32]

    init() {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, raw, &length) == 0
            }
        }
        guard listener >= 0, listening else { fail("cannot open a loopback listener") }
        port = Int(UInt16(bigEndian: address.sin_port))
        var descriptors = [listener]
        for _ in 0..<4 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
            }
            descriptors.append(client)
        }
        self.descriptors = descriptors
    }

    deinit { for descriptor in descriptors { close(descriptor) } }
}

/// A flag set from any thread and waited on by polling (set-up only: never inside a measured span).
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    func reset() { value.store(false, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
    func wait(_ what: String, seconds: Double = 10) async {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !isSet {
            if ContinuousClock.now > end { fail("timed out waiting for \(what)") }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// Signals when a response (the 503 before a retry delay) reached the manager.
struct ResponseSeen: ServerAPIPlugin {
    let flag: Flag
    func didReceive(_ result: Result<TransportResponse, ServerAPIError>, for request: TransportRequest, api: ServerAPI)
    {
        flag.set()
    }
}

enum Point: String, CaseIterable {
    case beforeStart = "before-start"
    case connecting
    case midBody = "mid-body"
    case betweenRetries = "between-retries"
    case backpressure
}

/// Where the caller's `catch` ran, and with what.
final class Ending: Sendable {
    private let state = Mutex<(ContinuousClock.Instant, String)?>(nil)
    func record(_ how: String) { state.withLock { $0 = (ContinuousClock.now, how) } }
    var value: (ContinuousClock.Instant, String)? { state.withLock { $0 } }

    /// Runs a call and records when and how it ended: "ok", the error's kind, or a foreign error's type.
    func run(_ call: () async throws -> Void) async {
        do {
            try await call()
            record("ok")
        } catch let error as ServerAPIError {
            record(error.kind.rawValue)
        } catch {
            record("\(type(of: error))")
        }
    }
}

/// One sample: sets up the call at `point`, cancels it, and returns the latency and how the call ended.
func sample(_ point: Point, manager: ServerAPIManager, seen: Flag, listener: UnansweredListener) async
    -> (Duration, String)
{
    let ending = Ending()
    let id = RequestID.next()
    let ready = Flag()
    let task: Task<Void, Never>
    switch point {
    case .beforeStart:
        let api = ServerAPI(url: URL(string: fixture + "/hang")!).id(id)
        task = Task {
            await ending.run { _ = try await manager.send(api) }
        }
    case .connecting:
        let api = ServerAPI(url: URL(string: "http://127.0.0.1:\(listener.port)/")!).id(id).timeout(.seconds(30))
        task = Task {
            await ending.run { _ = try await manager.send(api) }
        }
        // In flight, then a moment for the transport to start its connect.
        while manager.inFlight.first(where: { $0.id == id }) == nil { try? await Task.sleep(for: .milliseconds(1)) }
        try? await Task.sleep(for: .milliseconds(20))
    case .midBody:
        let api = ServerAPI(url: URL(string: fixture + "/hang-body?size=1000000&after=1000")!).id(id).format(.data)
        task = Task {
            await ending.run {
                _ = try await manager.send(api) { progress in
                    if progress.direction == .download, progress.completed > 0 { ready.set() }
                }
            }
        }
        await ready.wait("the first body bytes")
    case .betweenRetries:
        seen.reset()
        let api = ServerAPI(url: URL(string: fixture + "/status/503")!).id(id)
            .retry(3, policy: RetryPolicy(baseDelay: .seconds(2), jitter: 0))
        task = Task {
            await ending.run { _ = try await manager.send(api) }
        }
        await seen.wait("the first 503")
        // The manager now decides to retry and sleeps the 2 s delay.
        try? await Task.sleep(for: .milliseconds(20))
    case .backpressure:
        let key = "cancel-bench-\(id.rawValue)"
        let api = ServerAPI(url: URL(string: fixture + "/stream-bytes?size=67108864&key=\(key)")!).id(id)
        let proceed = Flag()
        task = Task {
            await ending.run {
                let response = try await manager.stream(api)
                ready.set()
                await proceed.wait("the cancel", seconds: 30)
                for try await _ in response.body {}
            }
        }
        await ready.wait("the stream's head")
        // The body is not read: the buffer fills and the transport stops reading the socket.
        try? await Task.sleep(for: .milliseconds(150))
        let start = ContinuousClock.now
        _ = manager.cancel(id: id)
        proceed.set()
        await task.value
        guard let (end, how) = ending.value else { fail("a backpressure sample did not end") }
        return (end - start, how)
    }
    let start = ContinuousClock.now
    if point == .beforeStart { task.cancel() } else { _ = manager.cancel(id: id) }
    await task.value
    guard let (end, how) = ending.value else { fail("a \(point.rawValue) sample did not end") }
    return (end - start, how)
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

let listener = UnansweredListener()
var rows: [Row] = []
let backends = option("--backend").map { [$0] } ?? ["curl", "urlsession"]
if let unknown = backends.first(where: { !["curl", "urlsession"].contains($0) }) { fail("unknown backend \(unknown)") }
let points =
    option("--point").map { name in
        guard let point = Point(rawValue: name) else { fail("unknown point \(name)") }
        return [point]
    } ?? Point.allCases
for backend in backends {
    let seen = Flag()
    let transport: any RequestPerforming = backend == "curl" ? CurlTransport() : URLSessionTransport()
    let manager = ServerAPIManager(transport: transport, plugins: [ResponseSeen(flag: seen)])
    for point in points {
        var latencies: [Double] = []
        var other: [String: Int] = [:]
        for _ in 0..<samples {
            let (latency, how) = await sample(point, manager: manager, seen: seen, listener: listener)
            // Only calls that ended `cancelled` measure a cancellation; the others are counted.
            if how == ServerAPIError.Kind.cancelled.rawValue {
                latencies.append(milliseconds(latency))
            } else {
                other[how, default: 0] += 1
            }
        }
        latencies.sort()
        if latencies.isEmpty { fail("no \(backend) \(point.rawValue) sample ended with `cancelled`: \(other)") }
        let row = Row(
            backend: backend, point: point.rawValue, samples: latencies.count,
            p50Milliseconds: percentile(latencies, 0.5),
            p99Milliseconds: percentile(latencies, 0.99), maxMilliseconds: latencies.last!,
            wrongEndings: other.values.reduce(0, +), otherEndings: other)
        FileHandle.standardError.write(Data("  \(backend) \(point.rawValue): done\n".utf8))
        rows.append(row)
    }
}

print()
print("Cancellation latency: cancel → the caller's `cancelled` error, \(samples) samples per row (ms)")
print()
print("| transport | point | p50 | p99 | max | samples | not `cancelled` |")
print("|---|---|---:|---:|---:|---:|---:|")
for row in rows {
    print(
        String(
            format: "| %@ | %@ | %.2f | %.2f | %.2f | %d | %d |", row.backend, row.point, row.p50Milliseconds,
            row.p99Milliseconds, row.maxMilliseconds, row.samples, row.wrongEndings))
}
for row in rows where row.wrongEndings > 0 {
    let endings = row.otherEndings.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
    print("\(row.backend) \(row.point): not `cancelled`: " + endings.joined(separator: ", "))
}
let report = Report(
    date: ISO8601DateFormatter().string(from: Date()), samplesPerRow: samples, goalMilliseconds: 100, rows: rows)
let encoder = JSONEncoder()
encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
try FileManager.default.createDirectory(
    at: URL(fileURLWithPath: output).deletingLastPathComponent(), withIntermediateDirectories: true)
try encoder.encode(report).write(to: URL(fileURLWithPath: output))
print("\nWrote \(output)")
// A whole body that arrived before the cancel ("ok") is a race the transport may lose; anything else is wrong.
if rows.contains(where: { $0.otherEndings.keys.contains { $0 != "ok" } }) {
    fail("some cancelled calls ended with neither `cancelled` nor their whole body")
}
