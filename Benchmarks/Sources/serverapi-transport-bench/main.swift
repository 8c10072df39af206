// One client, one mode, one process: `scripts/bench-transports.sh` runs this once per row and run, so
// that no client's threads, pools or peak memory colour another's numbers. Prints one JSON object.
import AsyncHTTPClient
import BenchSupport
import Foundation
import NIOCore
import NIOSSL
import ServerAPICurl
import ServerAPIKit
import ServerAPIURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// What one run measured.
struct RunResult: Codable, Sendable {
    var client: String
    var mode: String
    var requests: Int
    var seconds: Double
    var requestsPerSecond: Double
    var p50Microseconds: Double?
    var p99Microseconds: Double?
    var bytes: Int64?
    var megabytesPerSecond: Double?
    var peakRSSKilobytes: Int
    /// The process's user + system CPU time over the measured seconds, per request.
    var cpuMicrosecondsPerRequest: Double?
    /// The curl clients' `CurlTransport.Configuration.loopCount`.
    var loops: Int?
    /// The HTTP version that answered the first call (`--http-version`), as `TransportMetrics` names it.
    var httpVersion: String?
}

/// A client under test: a small GET that returns the body size, and a download to a file.
struct Client: Sendable {
    var fetch: @Sendable () async throws -> Int
    var download: @Sendable (URL) async throws -> Int64
    var shutdown: @Sendable () async throws -> Void
    /// Where the calling tasks prefer to run: the curl transport's thread for the `-executor` clients.
    var executor: (any TaskExecutor)? = nil
    /// One call that returns the HTTP version that answered it, for the clients that know.
    var answeredVersion: (@Sendable () async throws -> String?)? = nil
}

struct Options {
    var client = "curl"
    var mode = "seq"
    var url = URL(string: "http://127.0.0.1:8080/small.json")!
    var duration = 5.0
    var warmUp = 1.0
    var concurrency = 64
    var output = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("bench-download.bin")
    /// The CA to trust for https URLs (the `h2` mode's local nginx).
    var caFile: String?
    /// The curl clients' loops; `nil` for the transport's default (the active processor count).
    var loops: Int?
    /// The client's name in the output; `nil` for `client`.
    var label: String?
    /// The curl clients' HTTP version in the `seq` and `cN` modes (`--http-version`, as `sapi` names them); `nil`
    /// for HTTP/1.1.
    var httpVersion: HTTPVersion?

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard let value = iterator.next() else {
                throw ServerAPIError(.invalidRequest, "\(argument) needs a value")
            }
            switch argument {
            case "--client": client = value
            case "--mode": mode = value
            case "--url":
                guard let parsed = URL(string: value) else { throw ServerAPIError(.invalidRequest, "bad URL \(value)") }
                url = parsed
            case "--duration": duration = Double(value) ?? duration
            case "--warmup": warmUp = Double(value) ?? warmUp
            case "--concurrency": concurrency = Int(value) ?? concurrency
            case "--output": output = URL(fileURLWithPath: value)
            case "--ca": caFile = value
            case "--loops": loops = Int(value)
            case "--label": label = value
            case "--http-version":
                guard let version = HTTPVersion(name: value) else {
                    throw ServerAPIError(.invalidRequest, "bad HTTP version \(value)")
                }
                httpVersion = version
            default: throw ServerAPIError(.invalidRequest, "unknown option \(argument)")
            }
        }
    }
}

func makeClient(
    _ name: String, url: URL, connections: Int, http2: Bool, caFile: String?, loops: Int?, httpVersion: HTTPVersion?
) throws -> Client {
    if http2 { return try makeHTTP2Client(name, url: url, caFile: caFile) }
    switch name {
    case "curl", "curl-manager", "curl-executor", "curl-manager-executor":
        var configuration = CurlTransport.Configuration(
            maxConnectionsPerHost: connections, httpVersion: httpVersion ?? .http1,
            additionalTrustedCAFile: caFile.map(URL.init(fileURLWithPath:)))
        if let loops { configuration.loopCount = loops }
        // SAPI_BENCH_SOCKET_INTERFACE=1: the loops drive libcurl's socket interface on epoll.
        configuration.socketInterface = ProcessInfo.processInfo.environment["SAPI_BENCH_SOCKET_INTERFACE"] == "1"
        // SAPI_BENCH_LOOP_ASSIGNMENT=byOrigin or roundRobin: another assignment than the default (adaptive).
        switch ProcessInfo.processInfo.environment["SAPI_BENCH_LOOP_ASSIGNMENT"] {
        case "byOrigin": configuration.loopAssignment = .byOrigin
        case "roundRobin": configuration.loopAssignment = .roundRobin
        default: break
        }
        let transport = CurlTransport(configuration: configuration)
        var client =
            name.hasPrefix("curl-manager") ? managerClient(transport, url: url) : transportClient(transport, url: url)
        if name.hasSuffix("-executor") { client.executor = transport.executor }
        return client
    case "urlsession-raw":
        return rawURLSessionClient(url: url, connections: connections)
    case "urlsession", "urlsession-manager":
        let transport = URLSessionTransport(configuration: .init(maxConnectionsPerHost: connections))
        return name == "urlsession" ? transportClient(transport, url: url) : managerClient(transport, url: url)
    case "ahc":
        return ahcClient(url: url, connections: connections)
    default:
        throw ServerAPIError(.invalidRequest, "unknown client \(name)")
    }
}

/// A client for the `h2` mode: HTTP/2 over TLS to one host, trusting `caFile`. Both clients open
/// one connection and multiplex on it (libcurl waits for it with CURLOPT_PIPEWAIT; AHC does by itself).
func makeHTTP2Client(_ name: String, url: URL, caFile: String?) throws -> Client {
    switch name {
    case "curl", "curl-manager":
        let transport = CurlTransport(
            configuration: .init(httpVersion: .http2, additionalTrustedCAFile: caFile.map(URL.init(fileURLWithPath:))))
        return name == "curl-manager" ? managerClient(transport, url: url) : transportClient(transport, url: url)
    case "ahc":
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.trustRoots = .file(caFile) }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        return ahcClient(url: url, configuration: configuration)
    default:
        throw ServerAPIError(.invalidRequest, "the h2 mode has no client \(name): use curl, curl-manager or ahc")
    }
}

func transportClient(_ transport: some RequestPerforming, url: URL) -> Client {
    Client(
        fetch: {
            let response = try await transport.perform(TransportRequest(url: url))
            guard response.isSuccess else { throw ServerAPIError(.httpStatus, "status \(response.status)") }
            return response.data?.count ?? 0
        },
        download: { destination in
            let response = try await transport.perform(
                TransportRequest(url: url, timeout: .seconds(600), download: DownloadTarget(destination: destination)))
            guard case .file(_, let bytes) = response.body else { throw ServerAPIError(.network, "no file") }
            return bytes
        },
        shutdown: {},
        answeredVersion: { try await transport.perform(TransportRequest(url: url)).metrics.httpVersion })
}

func managerClient(_ transport: some RequestPerforming, url: URL) -> Client {
    let manager = ServerAPIManager(transport: transport)
    return Client(
        fetch: {
            let result = try await manager.send(ServerAPI(url: url).format(.data))
            return result.data?.count ?? 0
        },
        download: { destination in
            let result = try await manager.send(
                ServerAPI(url: url).timeout(.seconds(600)).download(to: destination))
            let size = try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int64
            _ = result
            return size ?? 0
        },
        shutdown: {},
        answeredVersion: { try await manager.send(ServerAPI(url: url).format(.data)).metrics.transport?.httpVersion })
}

/// FoundationNetworking's URLSession itself, with the settings URLSessionTransport gives its own session.
func rawURLSessionClient(url: URL, connections: Int) -> Client {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = connections
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    let session = URLSession(configuration: configuration)
    return Client(
        fetch: {
            let (data, response) = try await session.data(from: url)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw ServerAPIError(.httpStatus, "status") }
            return data.count
        },
        download: { destination in
            let (file, _) = try await session.download(from: url)
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: file, to: destination)
            return (try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int64) ?? 0
        },
        shutdown: { session.invalidateAndCancel() })
}

func ahcClient(url: URL, connections: Int) -> Client {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
    return ahcClient(url: url, configuration: configuration)
}

func ahcClient(url: URL, configuration: HTTPClient.Configuration) -> Client {
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    let address = url.absoluteString
    return Client(
        fetch: {
            let response = try await client.execute(HTTPClientRequest(url: address), timeout: .seconds(60))
            guard response.status == .ok else { throw ServerAPIError(.httpStatus, "status \(response.status)") }
            let body = try await response.body.collect(upTo: 16 << 20)
            return body.readableBytes
        },
        download: { destination in
            let response = try await client.execute(HTTPClientRequest(url: address), timeout: .seconds(600))
            guard response.status == .ok else { throw ServerAPIError(.httpStatus, "status \(response.status)") }
            guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
                throw ServerAPIError(.fileSystem, "cannot create \(destination.path)")
            }
            let handle = try FileHandle(forWritingTo: destination)
            defer { try? handle.close() }
            var total: Int64 = 0
            for try await buffer in response.body {
                try buffer.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
                total += Int64(buffer.readableBytes)
            }
            return total
        },
        shutdown: { try await client.shutdown() })
}

/// Calls `fetch` from `concurrency` tasks until `deadline`; returns each call's latency in seconds.
func hammer(_ client: Client, concurrency: Int, until deadline: ContinuousClock.Instant) async throws -> [Double] {
    try await withThrowingTaskGroup(of: [Double].self) { group in
        for _ in 0..<concurrency {
            group.addTask(executorPreference: client.executor) {
                var latencies: [Double] = []
                latencies.reserveCapacity(1 << 16)
                let clock = ContinuousClock()
                while clock.now < deadline {
                    let start = clock.now
                    _ = try await client.fetch()
                    let elapsed = clock.now - start
                    latencies.append(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
                }
                return latencies
            }
        }
        var all: [Double] = []
        for try await latencies in group { all += latencies }
        return all
    }
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double? {
    guard !sorted.isEmpty else { return nil }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

let usage = """
    usage: serverapi-transport-bench [--client curl|curl-manager|curl-executor|curl-manager-executor|
                                              urlsession|urlsession-manager|urlsession-raw|ahc]
                                     [--mode seq|c64|h2|download] [--url URL] [--duration SECONDS]
                                     [--warmup SECONDS] [--concurrency N] [--output FILE] [--ca FILE]
                                     [--loops N] [--label NAME] [--http-version 1.1|2|3|3-only]
    cN (c256, c1000, …): N concurrent calls over up to N connections, like c64.
    h2: c64 over HTTP/2 to an https URL whose certificate --ca signed (clients curl, curl-manager, ahc).
    --loops: the curl clients' CurlTransport loops (default: the active processor count).
    --label: the client's name in the output (default: --client).
    --http-version: the curl clients' HTTP version in the seq and cN modes (default 1.1), with --ca for https; the
    version that answered the first call is in the output (scripts/bench-transports.sh --http3).
    Prints one JSON line of results. scripts/bench-transports.sh runs every client and prints the table.
    """
if CommandLine.arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
    print(usage)
    exit(0)
}
let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("serverapi-transport-bench: \(error)\n\(usage)\n".utf8))
    exit(1)
}
/// `cN` modes: N concurrent calls (c64 is the classic one; --concurrency overrides its 64).
let concurrentMode = options.mode.first == "c" ? Int(options.mode.dropFirst()) : nil
let concurrency =
    options.mode == "c64" || options.mode == "h2" ? options.concurrency : concurrentMode ?? 1
let client = try makeClient(
    options.client, url: options.url, connections: max(concurrency, 1), http2: options.mode == "h2",
    caFile: options.caFile, loops: options.loops, httpVersion: options.httpVersion)
let clock = ContinuousClock()
var result: RunResult
// Which version answered, asked before the warm-up: libcurl with `.http3` would fall back to TCP unnoticed.
let answeredVersion = options.httpVersion == nil ? nil : try await client.answeredVersion?()

switch options.mode {
case _ where options.mode == "seq" || options.mode == "h2" || concurrentMode != nil:
    // Warm-up: opens the connections and fills the pools before anything is timed.
    _ = try await hammer(client, concurrency: concurrency, until: clock.now + .seconds(options.warmUp))
    let start = clock.now
    let cpuStart = cpuSeconds()
    let latencies = try await hammer(client, concurrency: concurrency, until: start + .seconds(options.duration))
    let cpu = cpuSeconds() - cpuStart
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let sorted = latencies.sorted()
    result = RunResult(
        client: options.label ?? options.client, mode: options.mode, requests: sorted.count, seconds: seconds,
        requestsPerSecond: Double(sorted.count) / seconds,
        p50Microseconds: percentile(sorted, 0.5).map { $0 * 1e6 },
        p99Microseconds: percentile(sorted, 0.99).map { $0 * 1e6 },
        bytes: nil, megabytesPerSecond: nil, peakRSSKilobytes: peakRSSKilobytes(),
        cpuMicrosecondsPerRequest: sorted.isEmpty ? nil : cpu * 1e6 / Double(sorted.count),
        loops: options.client.hasPrefix("curl") ? options.loops ?? CurlTransport.Configuration.defaultLoopCount : nil,
        httpVersion: answeredVersion)
case "download":
    // No warm-up: opening one connection is nothing next to a transfer of 64 MB to 1 GB.
    try? FileManager.default.removeItem(at: options.output)
    let start = clock.now
    let bytes = try await client.download(options.output)
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    try? FileManager.default.removeItem(at: options.output)
    result = RunResult(
        client: options.client, mode: options.mode, requests: 1, seconds: seconds, requestsPerSecond: 1 / seconds,
        p50Microseconds: nil, p99Microseconds: nil, bytes: bytes,
        megabytesPerSecond: Double(bytes) / seconds / 1_048_576, peakRSSKilobytes: peakRSSKilobytes())
default:
    throw ServerAPIError(.invalidRequest, "unknown mode \(options.mode)")
}
try await client.shutdown()
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
print(String(decoding: try encoder.encode(result), as: UTF8.self))
