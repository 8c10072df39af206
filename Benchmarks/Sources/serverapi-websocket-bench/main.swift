// One client, one row, one process: `scripts/bench-websocket.sh` runs this once per client and row, so that no
// client's threads, buffers or peak memory colour the other's numbers; `serve` is the server, in a process of its
// own. Prints one JSON object.
import BenchSupport
import Foundation
import NIOCore
import NIOPosix
import ServerAPICurl
import ServerAPIKit

/// What one run measured.
struct RunResult: Codable, Sendable {
    var client: String
    var mode: String
    var size: Int
    var connections: Int
    /// Round trips (echo) or messages (sink, source) in the measured seconds, every one checked.
    var messages: Int
    var bytes: Int
    var seconds: Double
    var messagesPerSecond: Double
    var megabytesPerSecond: Double
    /// The process's user + system CPU time over the measured seconds, per message (per round trip for echo).
    var cpuMicrosecondsPerMessage: Double
    var peakRSSKilobytes: Int
    /// Resident memory before the connections were opened, and right after (before any message).
    var rssBeforeOpenKilobytes: Int
    var rssOpenKilobytes: Int
    /// How long opening every connection took.
    var openSeconds: Double
    /// The libcurl the process loaded (ServerAPIKit's client).
    var libcurl: String?
    /// The process's CPU time from its start to the end of the run (the script subtracts it from the machine's).
    var processCPUSeconds: Double
    /// The process's threads with every connection open (idle: after they settled).
    var threads: Int?
}

enum Mode: String {
    /// Send one message, await its echo, repeat.
    case echo
    /// Send messages one after the other, each awaited; the server counts them.
    case sink
    /// The server sends messages as fast as the socket takes them; the client counts them.
    case source
    /// Open the connections, send nothing for the run's seconds, measure memory and threads, close.
    case idle
    /// Echo and source with a JSON payload (`Wire.json(size:)`) on routes that accept permessage-deflate: the
    /// compressed rows. ServerAPIKit offers compression (its default) and the server agrees; websocket-kit offers
    /// none, so its messages go as they are.
    case echoJSON = "echo-json"
    case sourceJSON = "source-json"

    /// The payload is JSON, and the route accepts compression.
    var isJSON: Bool { self == .echoJSON || self == .sourceJSON }
}

struct Options {
    var client = "serverapikit"
    var mode = Mode.echo
    var size = 64
    var connections = 1
    var port = 0
    var duration = 5.0
    var warmUp = 1.0

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard let value = iterator.next() else { throw BenchFailure("\(argument) needs a value") }
            switch argument {
            case "--client": client = value
            case "--mode":
                guard let parsed = Mode(rawValue: value) else { throw BenchFailure("unknown mode \(value)") }
                mode = parsed
            case "--size": size = Int(value) ?? size
            case "--connections": connections = Int(value) ?? connections
            case "--port": port = Int(value) ?? port
            case "--duration": duration = Double(value) ?? duration
            case "--warmup": warmUp = Double(value) ?? warmUp
            default: throw BenchFailure("unknown option \(argument)")
            }
        }
        guard size > 0, connections > 0, port > 0 else { throw BenchFailure("--size, --connections, --port: > 0") }
    }
}

/// How the client named `client` opens a connection to `url` (its payload is made here, once, for all of them).
func opener(_ client: String, url: URL, size: Int, json: Bool) throws -> @Sendable () async throws -> any BenchSocket {
    let bytes = json ? Wire.json(size: size) : [UInt8](repeating: Wire.fill, count: size)
    switch client {
    case "serverapikit":
        guard CurlTransport.supportsWebSockets else {
            throw BenchFailure("CurlTransport has no WebSockets on this system (they need Linux)")
        }
        let manager = ServerAPIManager(transport: CurlTransport())
        let payload = WebSocketMessage.binary(Data(bytes))
        return { try await ServerAPIKitSocket.open(manager, url: url, payload: payload) }
    case "websocket-kit":
        let group = MultiThreadedEventLoopGroup.singleton
        let payload = ByteBufferAllocator().buffer(bytes: bytes)
        return { [payload] in try await WebSocketKitSocket.open(url: url, payload: payload, group: group) }
    default:
        throw BenchFailure("unknown client \(client): serverapikit or websocket-kit")
    }
}

/// Opens `count` connections at once.
func openSockets(_ open: @escaping @Sendable () async throws -> any BenchSocket, count: Int) async throws
    -> [any BenchSocket]
{
    try await withThrowingTaskGroup(of: (any BenchSocket).self) { group in
        for _ in 0..<count { group.addTask { try await open() } }
        var sockets: [any BenchSocket] = []
        for try await socket in group { sockets.append(socket) }
        return sockets
    }
}

/// Runs `mode` on every socket at once until `deadline`; returns the messages and bytes, each one checked.
func runPhase(
    _ sockets: [any BenchSocket], mode: Mode, size: Int, until deadline: ContinuousClock.Instant
) async throws -> (messages: Int, bytes: Int) {
    try await withThrowingTaskGroup(of: Int.self) { group in
        for socket in sockets {
            group.addTask {
                switch mode {
                case .echo, .echoJSON: try await echo(socket, size: size, until: deadline)
                case .sink: try await sink(socket, size: size, until: deadline)
                case .source, .sourceJSON: try await source(socket, size: size, until: deadline)
                case .idle: 0
                }
            }
        }
        var messages = 0
        for try await count in group { messages += count }
        return (messages, messages * size)
    }
}

func echo(_ socket: any BenchSocket, size: Int, until deadline: ContinuousClock.Instant) async throws -> Int {
    var roundTrips = 0
    while ContinuousClock.now < deadline {
        try await socket.sendMessage()
        guard case .binary(let count, let intact) = try await socket.receive(), count == size, intact else {
            throw BenchFailure("echo: round trip \(roundTrips + 1) did not come back as it was sent")
        }
        roundTrips += 1
    }
    return roundTrips
}

func sink(_ socket: any BenchSocket, size: Int, until deadline: ContinuousClock.Instant) async throws -> Int {
    var sent = 0
    while ContinuousClock.now < deadline {
        try await socket.sendMessage()
        sent += 1
    }
    try await socket.sendText(Wire.done)
    guard case .text(let text) = try await socket.receive(), let counted = Wire.numbers(text, keyword: "count") else {
        throw BenchFailure("sink: no count from the server")
    }
    guard counted.messages == sent, counted.bytes == sent * size else {
        throw BenchFailure("sink: sent \(sent) messages, the server counted \(counted.messages) (\(counted.bytes) B)")
    }
    return sent
}

func source(_ socket: any BenchSocket, size: Int, until deadline: ContinuousClock.Instant) async throws -> Int {
    async let counted = socket.countUntilText(size: size)
    let milliseconds = (ContinuousClock.now.duration(to: deadline) / .milliseconds(1)).rounded()
    try await socket.sendText(Wire.start(milliseconds: max(1, Int(milliseconds))))
    let tally = try await counted
    guard let sent = Wire.numbers(tally.text, keyword: "end") else {
        throw BenchFailure("source: \(tally.text.prefix(40)) instead of the end")
    }
    guard sent.messages == tally.messages, sent.bytes == tally.bytes, tally.wrongSize == 0 else {
        throw BenchFailure(
            "source: the server sent \(sent.messages) messages, \(tally.messages) arrived, \(tally.wrongSize) "
                + "of the wrong size")
    }
    return tally.messages
}

let usage = """
    usage: serverapi-websocket-bench serve [--port N]
           serverapi-websocket-bench deflated SIZE
           serverapi-websocket-bench --port N [--client serverapikit|websocket-kit] [--mode echo|sink|source|idle|echo-json|source-json]
                                     [--size BYTES] [--connections N] [--duration SECONDS] [--warmup SECONDS]
    serve: the server, on 127.0.0.1 (port 0: the kernel picks); prints `port N`, serves until killed.
    echo: send one message, await its echo, repeat. sink: send messages, the server counts them.
    source: the server sends messages as fast as the socket takes them. Every connection at once.
    idle: open the connections, let them sit for the run's seconds, measure resident memory and threads.
    echo-json, source-json: echo and source with a JSON payload, permessage-deflate where the client offers it.
    serverapikit runs on any libcurl CurlTransport supports (Linux).
    Prints one JSON line of results. scripts/bench-websocket.sh runs every row and prints the table.
    """
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
    print(usage)
    exit(0)
}
if arguments.first == "deflated", arguments.count == 2, let size = Int(arguments[1]) {
    // The size of `Wire.json(size:)` as a compressed message: what the compressed rows put on the wire.
    print(BenchServer.deflate(Wire.json(size: size)).count)
    exit(0)
}
if arguments.first == "serve" {
    let port = arguments.count > 2 && arguments[1] == "--port" ? Int(arguments[2]) ?? 0 : 0
    try BenchServer.run(port: port)
}
let options: Options
do {
    options = try Options(arguments)
} catch {
    FileHandle.standardError.write(Data("serverapi-websocket-bench: \(error)\n\(usage)\n".utf8))
    exit(1)
}

// A run that loses a message waits for it for ever: the watchdog turns that into an error. A source's messages are
// all read before its end: compressed ones fill the sockets' kernel buffers with eight times as many messages (a
// thousand connections' backlog took ServerAPIKit more than a minute to inflate), so a source run gets five.
let allowed = options.warmUp + options.duration + (options.mode == .sourceJSON ? 300 : 60)
Thread.detachNewThread {
    Thread.sleep(forTimeInterval: allowed)
    FileHandle.standardError.write(Data("serverapi-websocket-bench: no result after \(allowed) s: stuck\n".utf8))
    exit(3)
}

do {
    let route =
        switch options.mode {
        case .echo, .idle: "echo"
        case .sink: "sink"
        case .source: "source?size=\(options.size)"
        case .echoJSON: "echo?deflate=1"
        case .sourceJSON: "source?size=\(options.size)&json=1&deflate=1"
        }
    let url = URL(string: "ws://127.0.0.1:\(options.port)/\(route)")!
    let clock = ContinuousClock()
    let open = try opener(options.client, url: url, size: options.size, json: options.mode.isJSON)
    let rssBefore = procStatusKilobytes("VmRSS")
    let openStart = clock.now
    let sockets = try await openSockets(open, count: options.connections)
    let openElapsed = clock.now - openStart
    var rssOpen = procStatusKilobytes("VmRSS")
    if options.mode == .idle {
        // Open and idle: what the connections hold once the opening's transient memory is released.
        try await Task.sleep(for: .seconds(options.warmUp + options.duration))
        rssOpen = procStatusKilobytes("VmRSS")
    }
    let threads = threadCount()
    _ = try await runPhase(sockets, mode: options.mode, size: options.size, until: clock.now + .seconds(options.warmUp))
    let cpuStart = cpuSeconds()
    let start = clock.now
    let measured = try await runPhase(
        sockets, mode: options.mode, size: options.size, until: start + .seconds(options.duration))
    let elapsed = clock.now - start
    let cpu = cpuSeconds() - cpuStart
    let peak = peakRSSKilobytes()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for socket in sockets { group.addTask { try await socket.close() } }
        try await group.waitForAll()
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    guard measured.messages > 0 || options.mode == .idle else { throw BenchFailure("no message in \(seconds) s") }
    let result = RunResult(
        client: options.client, mode: options.mode.rawValue, size: options.size, connections: options.connections,
        messages: measured.messages, bytes: measured.bytes, seconds: seconds,
        messagesPerSecond: Double(measured.messages) / seconds,
        megabytesPerSecond: Double(measured.bytes) / seconds / 1_048_576,
        cpuMicrosecondsPerMessage: measured.messages > 0 ? cpu * 1e6 / Double(measured.messages) : 0,
        peakRSSKilobytes: peak,
        rssBeforeOpenKilobytes: rssBefore, rssOpenKilobytes: rssOpen,
        openSeconds: Double(openElapsed.components.seconds) + Double(openElapsed.components.attoseconds) / 1e18,
        libcurl: options.client == "serverapikit" ? CurlTransport.libcurlVersion : nil, processCPUSeconds: cpuSeconds(),
        threads: threads)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    print(String(decoding: try encoder.encode(result), as: UTF8.self))
} catch {
    let row = "\(options.client) \(options.mode) \(options.size) B × \(options.connections)"
    FileHandle.standardError.write(Data("serverapi-websocket-bench: \(row): \(error)\n".utf8))
    exit(1)
}

/// The process's threads now (the entries of /proc/self/task).
func threadCount() -> Int? {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count
}
