// A soak and chaos run of ServerAPIManager over a real transport, against the local fault fixture
// (scripts/soak.sh starts it). Each round sends many calls side by side (fast, slow, failing statuses
// with retries, refused connections, dropped bodies, wrong lengths, stalls, hangs, downloads, uploads,
// streamed bodies, completion handlers) while a canceller cancels at random by id, tag, first, last,
// all, the caller's task and the handle. It checks that every call ends exactly once with a result
// or a ServerAPIError, that the transport has no transfer left after each round, that open
// descriptors return to their baseline once the transport is released, and that resident memory
// stops growing after the first round. Exits 1 with the reasons when a check fails.
//
//   serverapi-soak --backend curl|urlsession [--calls N] [--rounds R] [--concurrency C]
//                  [--deadline SECONDS] [--cancel-pause-ms MS] [--kinds fast,download,...]
//   (SAPI_FIXTURE_URL names the fixture; --kinds sends only those kinds of call, e.g. to find which one
//   makes memory grow)
import Foundation
import ServerAPIKit

struct Options {
    var backend = "curl"
    var calls = 10_000
    var rounds = 6
    var concurrency = 48
    var deadline = 300
    var cancelPause = Duration.milliseconds(20)
    var kinds = CallKind.allCases

    init(arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        func value(_ name: String) throws -> String {
            guard let value = iterator.next() else { throw SoakViolation(description: "\(name) needs a value") }
            return value
        }
        func number(_ name: String) throws -> Int {
            let text = try value(name)
            guard let number = Int(text), number > 0 else {
                throw SoakViolation(description: "\(name) needs a positive number, not \(text)")
            }
            return number
        }
        while let argument = iterator.next() {
            switch argument {
            case "--backend": backend = try value(argument)
            case "--calls": calls = try number(argument)
            case "--rounds": rounds = try number(argument)
            case "--concurrency": concurrency = try number(argument)
            case "--deadline": deadline = try number(argument)
            case "--cancel-pause-ms": cancelPause = .milliseconds(try number(argument))
            case "--kinds":
                let names = try value(argument).split(separator: ",").map(String.init)
                kinds = try names.map { name in
                    guard let kind = CallKind(rawValue: name) else {
                        throw SoakViolation(description: "unknown kind \(name): \(CallKind.allCases.map(\.rawValue))")
                    }
                    return kind
                }
            default: throw SoakViolation(description: "unknown argument \(argument)")
            }
        }
    }
}

func fail(_ lines: [String]) -> Never {
    for line in lines { FileHandle.standardError.write(Data("serverapi-soak: FAIL: \(line)\n".utf8)) }
    exit(1)
}

/// Prints a line at once, even when the output is a pipe.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }

/// Waits until `condition` holds, checking every 20 ms, for at most `seconds`; returns whether it held.
func waitUntil(seconds: Double, _ condition: () async -> Bool) async -> Bool {
    let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < end {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}

/// The open descriptors once their count has not changed for half a second (at most 5 s of waiting).
func settledDescriptors() async -> Int {
    var count = ProcessProbe.openDescriptors()
    var stableSince = ContinuousClock.now
    let end = stableSince + .seconds(5)
    while ContinuousClock.now < end, ContinuousClock.now - stableSince < .milliseconds(500) {
        try? await Task.sleep(for: .milliseconds(50))
        let now = ProcessProbe.openDescriptors()
        if now != count { (count, stableSince) = (now, ContinuousClock.now) }
    }
    return count
}

let options: Options
do {
    options = try Options(arguments: CommandLine.arguments)
} catch {
    fail(["\(error)", "usage: serverapi-soak --backend curl|urlsession [--calls N] [--rounds R] [--concurrency C]"])
}
guard let fixtureText = ProcessInfo.processInfo.environment["SAPI_FIXTURE_URL"], let fixture = URL(string: fixtureText)
else {
    fail(["SAPI_FIXTURE_URL is not set: start the servers (scripts/test-server.sh start) or run scripts/soak.sh"])
}
guard Backend.make(options.backend) != nil else { fail(["unknown backend \(options.backend): curl or urlsession"]) }

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("serverapi-soak-\(getpid())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }
let uploadFile = scratch.appendingPathComponent("upload.bin")
try Data((0..<SoakEndpoints.uploadFileSize).map { UInt8($0 % 251) }).write(to: uploadFile)
// Port 1 on loopback: nothing listens there, so connecting is refused.
let endpoints = SoakEndpoints(
    fixture: fixture, refused: URL(string: "http://127.0.0.1:1/refused")!, scratch: scratch, uploadFile: uploadFile)

/// Picks kinds by weight, from a fixed seed so that every run sends the same mix.
struct KindPicker {
    private var state: UInt64
    private let table: [CallKind]
    init(seed: UInt64, kinds: [CallKind]) {
        state = seed
        table = kinds.flatMap { Array(repeating: $0, count: $0.weight) }
    }
    mutating func next() -> CallKind {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return table[Int((state >> 33) % UInt64(table.count))]
    }
}

let tags = (0..<64).map { "group-\($0)" }

/// One round: `calls` calls, `concurrency` at a time, with the canceller running; returns the ledger.
func runRound(_ number: Int, calls: Int, backend: Backend) async -> (CallLedger, Canceller, Duration) {
    let ledger = CallLedger()
    let handles = HandleTable()
    let canceller = Canceller(tags: tags)
    let manager = backend.manager
    let started = ContinuousClock.now
    let watchdog = Task {
        do { try await Task.sleep(for: .seconds(options.deadline)) } catch { return }
        let running = ledger.running.sorted { $0.key < $1.key }
        fail(
            ["round \(number): \(running.count) call(s) did not end within \(options.deadline) s:"]
                + running.prefix(50).map { "  \($0.value.rawValue) call \($0.key)" })
    }
    let cancelling = Task {
        await canceller.run(manager: manager, ledger: ledger, handles: handles, pause: options.cancelPause)
    }
    var picker = KindPicker(seed: UInt64(number) &* 7919 &+ 17, kinds: options.kinds)
    await withTaskGroup(of: Void.self) { group in
        for index in 0..<calls {
            if index >= options.concurrency { await group.next() }
            let kind = picker.next()
            let id = RequestID.next()
            let tag = tags[index % tags.count]
            ledger.start(id, kind)
            // An unstructured task per call: the canceller can cancel it as its caller would.
            let task = Task {
                let ending: Result<String, SoakViolation>
                do {
                    ending = .success(
                        try await kind.run(id: id, tag: tag, manager: manager, endpoints: endpoints, handles: handles))
                } catch let violation as SoakViolation {
                    ending = .failure(violation)
                } catch {
                    ending = .failure(SoakViolation(description: "\(kind.rawValue) call \(id): \(error)"))
                }
                ledger.end(id, kind, ending)
            }
            ledger.attach(id, task)
            group.addTask { await task.value }
        }
    }
    cancelling.cancel()
    await cancelling.value
    watchdog.cancel()
    for (id, count) in handles.drainDuplicates() {
        ledger.add(violation: "completion-handler call \(id) completed \(count) times")
    }
    return (ledger, canceller, ContinuousClock.now - started)
}

/// Checks that the transport has no transfer left; returns a violation when it keeps some.
func checkIdle(_ backend: Backend, round: Int) async -> String? {
    if await waitUntil(seconds: 10, { await backend.activeTransfers() == 0 }) { return nil }
    return "round \(round): the transport still reports \(await backend.activeTransfers()) active transfer(s)"
}

say(
    "serverapi-soak: \(options.backend), \(options.rounds) round(s) of \(options.calls) calls, "
        + "\(options.concurrency) at a time, fixture \(fixture.absoluteString)")

// The warm-up: a round on a transport that is then released. What stays open after it (libcurl's and
// FoundationNetworking's process-wide state, the resolver's files) is the descriptor baseline.
let descriptorsAtStart = ProcessProbe.openDescriptors()
do {
    let warmUp = Backend.make(options.backend)!
    let (ledger, _, _) = await runRound(0, calls: min(options.calls, 500), backend: warmUp)
    if !ledger.violations.isEmpty { fail(ledger.violations.prefix(30).map { "warm-up: \($0)" }) }
    if let idle = await checkIdle(warmUp, round: 0) { fail([idle]) }
}
// Released: its connections close on the transport's own thread, a moment later.
let baseline = await settledDescriptors()
say("descriptors: \(descriptorsAtStart) at start, \(baseline) after the warm-up transport was released (the baseline)")

var resident: [Int] = []
var heap: [Int] = []
var held: [Int] = []
var descriptorsAfterRounds: [Int] = []
var failures: [String] = []
var totals: [String: [String: Int]] = [:]
var totalCalls = 0
do {
    let backend = Backend.make(options.backend)!
    for round in 1...options.rounds {
        let (ledger, canceller, elapsed) = await runRound(round, calls: options.calls, backend: backend)
        failures += ledger.violations.map { "round \(round): \($0)" }
        if ledger.ended != options.calls {
            failures.append("round \(round): \(ledger.ended) of \(options.calls) calls ended")
        }
        if let idle = await checkIdle(backend, round: round) { failures.append(idle) }
        let files = FileManager.default
        let leftovers = (try? files.contentsOfDirectory(at: scratch, includingPropertiesForKeys: nil)) ?? []
        for file in leftovers where file != uploadFile { try? files.removeItem(at: file) }
        resident.append(ProcessProbe.residentBytes())
        let allocator = ProcessProbe.heap()
        heap.append(allocator.inUse)
        held.append(allocator.held)
        descriptorsAfterRounds.append(ProcessProbe.openDescriptors())
        totalCalls += ledger.ended
        var cancelled = 0
        for (kind, endings) in ledger.endings {
            for (how, count) in endings {
                totals[kind, default: [:]][how, default: 0] += count
                if how == ServerAPIError.Kind.cancelled.rawValue { cancelled += count }
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        say(
            String(
                format:
                    "round %d: %d calls in %.1f s (%.0f/s), %d cancelled; RSS %@ (heap: %@ in use, %@ held), %d descriptors; cancels: %@",
                round, ledger.ended, seconds, Double(ledger.ended) / seconds, cancelled, megabytes(resident.last!),
                megabytes(heap.last!), megabytes(held.last!),
                descriptorsAfterRounds.last!, canceller.summary))
        if failures.count > 30 { break }
    }
}
// The soak transport is released: every connection it kept must close.
let returned = await waitUntil(seconds: 10) { ProcessProbe.openDescriptors() <= baseline }
let descriptorsAtEnd = ProcessProbe.openDescriptors()
say("descriptors: \(descriptorsAtEnd) after the soak transport was released (baseline \(baseline))")
if !returned {
    failures.append(
        "\(descriptorsAtEnd - baseline) descriptor(s) above the baseline after the transport was released:")
    failures += ProcessProbe.descriptorTargets().map { "  \($0)" }
}

say("endings by kind (calls \(totalCalls)):")
for kind in CallKind.allCases {
    let endings = totals[kind.rawValue] ?? [:]
    say(
        "  \(kind.rawValue): "
            + endings.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
}

say("RSS after each round: " + resident.map(megabytes).joined(separator: ", "))
say("heap in use after each round: " + heap.map(megabytes).joined(separator: ", "))
say("heap held by the allocator after each round: " + held.map(megabytes).joined(separator: ", "))
say("RSS after the first round: \(megabytes(resident[0]))")
if resident.count >= 4 {
    // A plateau: the first rounds grow pools, caches and the allocator's arenas (FoundationNetworking's
    // for a round or two more than curl's); in the second half of the run, no round ends more than 5%
    // (or 4 MB, whichever is larger) above the round that starts that half.
    let start = resident.count / 2
    let reference = resident[start]
    let allowance = max(reference / 20, 4 << 20)
    let highest = resident[(start + 1)...].max()!
    let plateau = highest <= reference + allowance
    say(
        "RSS plateau: \(plateau ? "yes" : "NO"): rounds \(start + 2)-\(resident.count) peak at \(megabytes(highest)), "
            + "round \(start + 1) \(megabytes(reference)) (allowance \(megabytes(allowance)))")
    // What grew: live allocations (a leak) or only what the allocator keeps for reuse.
    let callsSince = options.calls * (resident.count - 1 - start)
    let heapGrowth = heap.last! - heap[start]
    say(
        String(
            format: "heap in use: %@ after round %d, %@ after round %d (%.0f bytes a call); held %@ → %@",
            megabytes(heap[start]), start + 1, megabytes(heap.last!), heap.count,
            Double(heapGrowth) / Double(max(callsSince, 1)), megabytes(held[start]), megabytes(held.last!)))
    if !plateau {
        failures.append("resident memory keeps growing: \(resident.map(megabytes))")
        if options.backend == "urlsession" {
            failures.append(
                "on URLSession, FoundationNetworking (Swift 5.10 to 6.3.1) leaks each task's parsed URL and glibc keeps "
                    + "freed memory per thread: see README, Reliability")
        }
    }
} else {
    say("RSS plateau: not assessed (fewer than 4 rounds)")
}

if !failures.isEmpty { fail(Array(failures.prefix(60))) }
say("serverapi-soak: \(options.backend): OK")
