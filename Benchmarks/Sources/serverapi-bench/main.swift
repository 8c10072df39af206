import Foundation

// serverapi-bench: runs the core benchmarks, prints a table and writes Benchmarks/results/bench-core.json.
//
//   swift run -c release --package-path Benchmarks serverapi-bench
//       [--requests N] [--bytes N] [--repetitions N] [--output PATH] [--only overhead|decoding]
//   serverapi-bench --profile direct|manager N
//       runs one overhead row N times, untimed, and exits: for valgrind (allocations per call) and perf

struct Report: Codable {
    struct Overhead: Codable {
        var requests: Int
        var rows: [Measurement]
        var directMicroseconds: Double
        var managerMicroseconds: Double
        var overheadMicroseconds: Double
        var overheadCPUMicroseconds: Double
        var goalMicroseconds: Double
        var met: Bool
    }

    struct Decoding: Codable {
        var envelopeBytes: Int
        var products: Int
        var rows: [Measurement]
        var ratio: Double
        var ratioCPU: Double
        var goalRatio: Double
        var met: Bool
    }

    var date: String
    var configuration: String
    var host: String
    var note: String
    var managerOverhead: Overhead?
    var keyPathDecoding: Decoding?
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func number(_ value: Double) -> String { String(format: value >= 1000 ? "%.0f" : "%.2f", value) }

func printTable(_ title: String, _ rows: [Measurement]) {
    let baseline = rows[0]
    print("\n\(title)")
    print(
        "  " + pad("benchmark", 44) + pad("median µs", 12) + pad("min µs", 11) + pad("max µs", 11) + pad("CPU µs", 11)
            + pad("× base", 9) + "× base (CPU)")
    for row in rows {
        print(
            "  " + pad(row.name, 44) + pad(number(row.medianMicroseconds), 12) + pad(number(row.minMicroseconds), 11)
                + pad(number(row.maxMicroseconds), 11) + pad(number(row.medianCPUMicroseconds), 11)
                + pad(String(format: "%.2f", row.medianMicroseconds / baseline.medianMicroseconds), 9)
                + String(format: "%.2f", row.medianCPUMicroseconds / baseline.medianCPUMicroseconds))
    }
}

#if DEBUG
    let configuration = "debug"
    print("warning: this is a debug build; run with -c release for meaningful numbers")
#else
    let configuration = "release"
#endif

if let row = option("--profile") {
    let count = CommandLine.arguments.last.flatMap(Int.init) ?? 1000
    try await CoreBenchmarks.profileOverhead(row: row, count: count)
    exit(0)
}

let requests = option("--requests").flatMap(Int.init) ?? 20_000
let bytes = option("--bytes").flatMap(Int.init) ?? 1_000_000
let repetitions = option("--repetitions").flatMap(Int.init) ?? 15
let only = option("--only")
let benchmarksFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let output =
    option("--output").map { URL(fileURLWithPath: $0) }
    ?? benchmarksFolder.appendingPathComponent("results/bench-core.json")
let processInfo = ProcessInfo.processInfo
print(
    "serverapi-bench (\(configuration)), \(processInfo.activeProcessorCount) cores, "
        + "\(repetitions) interleaved repetitions after 3 warm-ups; medians")

var report = Report(
    date: ISO8601DateFormatter().string(from: Date()), configuration: configuration,
    host: "\(processInfo.operatingSystemVersionString), \(processInfo.activeProcessorCount) cores",
    note: "Benchmarks run interleaved; goals are judged on the median CPU time of the process, which a "
        + "busy machine inflates less than wall-clock time; both are reported.")

if only == nil || only == "overhead" {
    let rows = try await CoreBenchmarks.managerOverhead(requests: requests, repetitions: repetitions)
    let overhead = rows[1].medianMicroseconds - rows[0].medianMicroseconds
    let overheadCPU = rows[1].medianCPUMicroseconds - rows[0].medianCPUMicroseconds
    printTable("Manager overhead: \(requests) sequential requests per repetition, µs per request", rows)
    print(
        "  manager overhead per request: \(number(overhead)) µs wall, \(number(overheadCPU)) µs CPU "
            + "(goal: under 5 µs) \(overheadCPU < 5 ? "met" : "MISSED")")
    report.managerOverhead = .init(
        requests: requests, rows: rows, directMicroseconds: rows[0].medianMicroseconds,
        managerMicroseconds: rows[1].medianMicroseconds, overheadMicroseconds: overhead,
        overheadCPUMicroseconds: overheadCPU, goalMicroseconds: 5, met: overheadCPU < 5)
}

if only == nil || only == "decoding" {
    let decoding = try await CoreBenchmarks.keyPathDecoding(bytes: bytes, repetitions: repetitions)
    let rows = decoding.rows
    let ratio = rows[1].medianMicroseconds / rows[0].medianMicroseconds
    let ratioCPU = rows[1].medianCPUMicroseconds / rows[0].medianCPUMicroseconds
    printTable(
        "Key-path decoding: \(decoding.envelopeBytes) byte envelope, \(decoding.products) products, µs per decode",
        rows)
    print(
        "  EnvelopeFormatter.decode ÷ JSONDecoder: \(String(format: "%.2f", ratio))× wall, "
            + "\(String(format: "%.2f", ratioCPU))× CPU (goal: within 1.2×) \(ratioCPU <= 1.2 ? "met" : "MISSED")")
    report.keyPathDecoding = .init(
        envelopeBytes: decoding.envelopeBytes, products: decoding.products, rows: rows, ratio: ratio,
        ratioCPU: ratioCPU, goalRatio: 1.2, met: ratioCPU <= 1.2)
}

let encoder = JSONEncoder()
encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
try encoder.encode(report).write(to: output)
print("\nwrote \(output.path)")
