import Foundation
import ServerAPIFileCache
import ServerAPIKit
import ServerAPIMemoryCache
import ServerAPITesting

// Cache latency: memory cache hit and store, file cache hit (1 KB and 1 MB) against reading the
// same file with `Data(contentsOf:)`. Each figure is the median of several runs of many operations;
// the file cache and the raw read alternate run by run so that drift hits both alike.
//
//   swift run -c release --package-path Benchmarks serverapi-cache-bench [--quick]

let quick = CommandLine.arguments.contains("--quick")
let runs = quick ? 3 : 9

/// One measured row.
struct Row: Codable {
    var name: String
    var nanosecondsPerOperation: Double
    var runs: [Double]
    var baseline: String?
    var ratio: Double?
    var goal: String?
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Nanoseconds per operation of `iterations` runs of `operation`.
func measure(iterations: Int, _ operation: (Int) async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    for index in 0..<iterations { try await operation(index) }
    let elapsed = clock.now - start
    let (seconds, attoseconds) = elapsed.components
    return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(iterations)
}

/// A key of the shape the manager makes for a typical GET with a query and a varying header: the method, the
/// normalized URL, and the header's name with the SHA-256 of its value (64 hex digits).
func key(_ index: Int) -> CacheKey {
    let digest = String(repeating: String(index % 7, radix: 16), count: 64)
    return CacheKey(
        rawValue: "GET https://api.example.com/v1/shops/\(index)/products?page=3&sort=price authorization=\(digest)")
}

func entry(size: Int, seed: Int) -> CacheEntry {
    var body = Data(count: size)
    body.withUnsafeMutableBytes { raw in
        for index in raw.indices { raw[index] = UInt8(truncatingIfNeeded: index &* 31 &+ seed) }
    }
    return CacheEntry(
        status: 200,
        headers: [
            "Content-Type": "application/json; charset=utf-8", "Cache-Control": "max-age=300",
            "ETag": "\"\(seed)-abcdef\"", "Date": "Sat, 21 Nov 2026 10:00:00 GMT",
        ],
        body: body, url: URL(string: "https://api.example.com/v1/shops/1/products") ?? URL(fileURLWithPath: "/"),
        storedAt: Date(),
        expiresAt: Date().addingTimeInterval(3600))
}

// Top-level code runs on the main actor; the measurements run off it, as an app's calls would,
// so that no lookup pays for a hop between executors.
func benchmark() async throws -> [Row] {
    var rows: [Row] = []

    func report(
        _ name: String, _ samples: [Double], baseline: String? = nil, baselineSamples: [Double]? = nil,
        goal: String? = nil
    ) {
        let value = median(samples)
        let ratio = baselineSamples.map { value / median($0) }
        rows.append(
            Row(name: name, nanosecondsPerOperation: value, runs: samples, baseline: baseline, ratio: ratio, goal: goal)
        )
    }

    // MARK: Memory cache

    let keyCount = 1_000
    let keys = (0..<keyCount).map(key)
    let memory = MemoryCache(configuration: .init(countLimit: keyCount, byteLimit: 64 << 20))
    let smallEntry = entry(size: 1_024, seed: 1)
    for key in keys { await memory.store(smallEntry, for: key) }

    var memoryHits: [Double] = []
    var memoryStores: [Double] = []
    let memoryIterations = quick ? 100_000 : 1_000_000
    for _ in 0..<runs {
        var found = 0
        memoryHits.append(
            await measure(iterations: memoryIterations) { index in
                if await memory.lookup(keys[index % keyCount]) != nil { found += 1 }
            })
        precondition(found == memoryIterations, "every lookup must hit")
        // Storing over existing keys at the count limit: replacement and promotion, no growth.
        memoryStores.append(
            await measure(iterations: memoryIterations / 4) { index in
                await memory.store(smallEntry, for: keys[index % keyCount])
            })
    }
    report("memory cache hit (1 KB entry)", memoryHits, goal: "< 2000 ns")
    report("memory cache store (1 KB entry, at the count limit)", memoryStores)

    // MARK: Through the manager

    // A whole call answered by each cache (`returnCacheElseLoad`, fresh entry), against the same
    // call answered by the mock transport with no cache.
    let mock = MockTransport()
    mock.setRecording(false)
    mock.stub(
        .get, "/v1/shops/1/products", .json(String(repeating: "{\"id\":12345,\"name\":\"tea\"},", count: 30) + "{}"))
    // The same body as a response that varies and carries its freshness and age, as HTTP caching reads it:
    // a hit then matches the variant and computes the age it is served with.
    mock.stub(
        .get, "/v1/shops/1/varied",
        .json(
            String(repeating: "{\"id\":12345,\"name\":\"tea\"},", count: 30) + "{}",
            headers: ["Cache-Control": "max-age=3600", "Vary": "Accept-Language", "Age": "5"]))
    let call = ServerAPI(host: "https://api.example.com/v1", path: "/shops/1/products").format(.data)
    let varied = ServerAPI(host: "https://api.example.com/v1", path: "/shops/1/varied").format(.data)
        .header("Accept-Language", "en").cache(.returnCacheElseLoad)
    let managerDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "serverapi-cache-bench-manager-\(getpid())")
    defer { try? FileManager.default.removeItem(at: managerDirectory) }
    let managers: [(String, ServerAPIManager, ServerAPI)] = [
        ("manager send, no cache (mock transport)", ServerAPIManager(transport: mock), call),
        (
            "manager send, memory cache hit", ServerAPIManager(transport: mock, cache: MemoryCache()),
            call.cache(.returnCacheElseLoad, ttl: .seconds(3600))
        ),
        (
            "manager send, memory cache hit, Vary and Age", ServerAPIManager(transport: mock, cache: MemoryCache()),
            varied
        ),
        (
            "manager send, file cache hit",
            ServerAPIManager(transport: mock, cache: FileCache(directory: managerDirectory)),
            call.cache(.returnCacheElseLoad, ttl: .seconds(3600))
        ),
    ]
    var managerSamples = Array(repeating: [Double](), count: managers.count)
    for (name, manager, api) in managers {
        _ = try await manager.send(api)
        // Every measured call of a cache row must be a hit: a stale entry would measure the network instead.
        let again = try await manager.send(api)
        if name.contains("hit") { precondition(again.isFromCache, "\(name): not a hit") }
    }
    // `--profile ROW`: only that manager row, in a loop of 2 million calls, for perf or callgrind.
    if let flag = CommandLine.arguments.firstIndex(of: "--profile"), flag + 1 < CommandLine.arguments.count {
        let wanted = CommandLine.arguments[flag + 1]
        guard let (_, manager, api) = managers.first(where: { $0.0 == wanted }) else {
            print("no manager row named \(wanted): \(managers.map(\.0))")
            exit(1)
        }
        for _ in 0..<2_000_000 { _ = try await manager.send(api) }
        exit(0)
    }
    try await Task.sleep(for: .milliseconds(1_100))
    let managerIterations = quick ? 5_000 : 20_000
    for _ in 0..<runs {
        for (index, (_, manager, api)) in managers.enumerated() {
            managerSamples[index].append(
                try await measure(iterations: managerIterations) { _ in
                    _ = try await manager.send(api)
                })
        }
    }
    for (index, (name, _, _)) in managers.enumerated() {
        report(
            name, managerSamples[index], baseline: index == 0 ? nil : managers[0].0,
            baselineSamples: index == 0 ? nil : managerSamples[0])
    }

    // MARK: File cache

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serverapi-cache-bench-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let files = FileCache(directory: directory, configuration: .init(sizeLimit: 1 << 30))
    // The same files through an instance that hashes every body it reads.
    let hashing = FileCache(directory: directory, configuration: .init(sizeLimit: 1 << 30, verifiesEveryRead: true))
    let fileCases = [("1 KB", 1_024, quick ? 5_000 : 50_000), ("1 MB", 1 << 20, quick ? 200 : 1_000)]
    for (_, size, _) in fileCases {
        try await files.store(entry(size: size, seed: size), for: keys[size % keyCount])
    }
    // A file is trusted (its body not hashed again) once its change time is a second old: wait
    // for that, as an app reading its cache later would find it.
    try await Task.sleep(for: .milliseconds(1_100))

    for (label, size, iterations) in fileCases {
        let key = keys[size % keyCount]
        let url = files.fileURL(for: key)
        guard let check = await files.lookup(key), check.body == entry(size: size, seed: size).body else {
            fatalError("the file cache did not read back what it stored")
        }
        var cacheHits: [Double] = []
        var hashedHits: [Double] = []
        var rawReads: [Double] = []
        // Warm the page cache and the allocator for every path.
        for _ in 0..<max(10, iterations / 20) {
            _ = await files.lookup(key)
            _ = await hashing.lookup(key)
            _ = try Data(contentsOf: url)
        }
        for _ in 0..<runs {
            var bytes = 0
            var rawBytes = 0
            cacheHits.append(
                await measure(iterations: iterations) { _ in
                    bytes &+= await files.lookup(key)?.body.count ?? 0
                })
            rawReads.append(
                try await measure(iterations: iterations) { _ in
                    rawBytes &+= try Data(contentsOf: url).count
                })
            hashedHits.append(
                await measure(iterations: iterations) { _ in
                    bytes &+= await hashing.lookup(key)?.body.count ?? 0
                })
            precondition(bytes == 2 * iterations * check.body.count, "every lookup must hit")
            precondition(rawBytes > iterations * check.body.count)
        }
        report("Data(contentsOf:) of the entry file (\(label))", rawReads)
        report(
            "file cache hit (\(label))", cacheHits, baseline: "Data(contentsOf:) (\(label))", baselineSamples: rawReads,
            goal: "<= 1.5x the raw read")
        report(
            "file cache hit (\(label)), body hashed every read", hashedHits, baseline: "Data(contentsOf:) (\(label))",
            baselineSamples: rawReads)
    }

    for synchronizes in [true, false] {
        let store = FileCache(
            directory: directory.appendingPathComponent(synchronizes ? "sync" : "nosync"),
            configuration: .init(sizeLimit: 1 << 30, synchronizesWrites: synchronizes))
        var samples: [Double] = []
        for _ in 0..<runs {
            samples.append(
                try await measure(iterations: quick ? 50 : 200) { index in
                    try await store.store(smallEntry, for: keys[index % 100])
                })
        }
        report("file cache store (1 KB, fsync \(synchronizes ? "on" : "off"))", samples)
    }

    return rows
}

let rows = try await benchmark()

// MARK: Report

func format(_ nanoseconds: Double) -> String {
    switch nanoseconds {
    case ..<1_000: String(format: "%.0f ns", nanoseconds)
    case ..<1_000_000: String(format: "%.2f µs", nanoseconds / 1_000)
    default: String(format: "%.2f ms", nanoseconds / 1_000_000)
    }
}

let nameWidth = rows.map(\.name.count).max() ?? 10
print("Cache latency, median of \(runs) runs" + (quick ? " (quick)" : ""))
print("operation".padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  per op        ratio    goal")
for row in rows {
    let ratio = row.ratio.map { String(format: "%.2fx", $0) } ?? ""
    print(
        row.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
            + format(row.nanosecondsPerOperation).padding(toLength: 12, withPad: " ", startingAt: 0) + "  "
            + ratio.padding(toLength: 7, withPad: " ", startingAt: 0) + "  " + (row.goal ?? ""))
}

struct Report: Codable {
    var benchmark = "serverapi-cache-bench"
    var date = ISO8601DateFormatter().string(from: Date())
    var runs: Int
    var quick: Bool
    var rows: [Row]
}

let resultsDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("results")
try FileManager.default.createDirectory(at: resultsDirectory, withIntermediateDirectories: true)
let encoder = JSONEncoder()
encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
let output = resultsDirectory.appendingPathComponent("bench-cache.json")
try encoder.encode(Report(runs: runs, quick: quick, rows: rows)).write(to: output)
print("wrote \(output.path)")
