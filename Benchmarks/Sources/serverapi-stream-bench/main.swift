// One client, one mode, one process: `scripts/bench-streaming.sh` runs this once per row and run, so
// that no client's threads, pools or peak memory colour another's numbers. Prints one JSON object.
//
//   --mode sse    reads server-sent events (the fault fixture's /sse/count?n=N) and counts them; the
//                 last event's id must be N (--expect N)
//   --mode bytes  reads a large body (the fixture's /stream-bytes?size=N) as chunks, counts the bytes
//                 and drops them; the count must be N (--expect N)
//
// Clients: `curl` and `urlsession` are `ServerAPIManager.stream(_:)` over CurlTransport and
// URLSessionTransport (events through `response.events`, bytes through `response.body`); `ahc` is
// async-http-client, splitting the event stream into lines and events itself, as a user of it would.
import AsyncHTTPClient
import BenchSupport
import Foundation
import NIOCore
import ServerAPICurl
import ServerAPIKit
import ServerAPIURLSession

#if canImport(Glibc)
    import Glibc
#endif

/// What one run measured.
struct RunResult: Codable, Sendable {
    var client: String
    var mode: String
    /// Events dispatched (sse mode).
    var events: Int?
    /// The last event's id (sse mode).
    var lastEventID: String?
    /// Body bytes received.
    var bytes: Int64
    /// From sending the request to the end of the body.
    var seconds: Double
    var eventsPerSecond: Double?
    var megabytesPerSecond: Double
    /// CPU time of the whole process over the same span (user + system, all threads).
    var cpuSeconds: Double
    /// The process's peak resident memory (VmHWM) at the end.
    var peakRSSKilobytes: Int
    /// Resident memory just before the request was sent: the peak minus this is what the transfer grew.
    var startRSSKilobytes: Int
}

struct Options {
    var client = "curl"
    var mode = "sse"
    var url = URL(string: "http://127.0.0.1:8080/sse/count?n=1000")!
    var expect: Int64? = nil

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
            case "--expect":
                guard let parsed = Int64(value) else { throw ServerAPIError(.invalidRequest, "bad count \(value)") }
                expect = parsed
            default: throw ServerAPIError(.invalidRequest, "unknown option \(argument)")
            }
        }
    }
}

/// What a client read: events and the last id (sse), and the body's bytes.
struct Tally: Sendable {
    var events = 0
    var lastEventID = ""
    var bytes: Int64 = 0
}

/// A client under test: reads the URL's event stream or its body to the end.
struct Client: Sendable {
    var readEvents: @Sendable (URL) async throws -> Tally
    var readBytes: @Sendable (URL) async throws -> Tally
    var shutdown: @Sendable () async throws -> Void
}

func makeClient(_ name: String) throws -> Client {
    switch name {
    case "curl": return managerClient(ServerAPIManager(transport: CurlTransport()))
    case "urlsession": return managerClient(ServerAPIManager(transport: URLSessionTransport()))
    case "ahc": return ahcClient()
    default: throw ServerAPIError(.invalidRequest, "unknown client \(name)")
    }
}

/// `ServerAPIManager.stream(_:)`: the events through `response.events`, the bytes through `response.body`.
func managerClient(_ manager: ServerAPIManager) -> Client {
    // The timeout bounds the time until the head (a transport that cannot stream reads the whole body first).
    let call: @Sendable (URL) -> ServerAPI = { ServerAPI(url: $0).timeout(.seconds(600)) }
    return Client(
        readEvents: { url in
            let response = try await manager.stream(call(url))
            guard response.status == 200 else { throw ServerAPIError(.httpStatus, "status \(response.status)") }
            var tally = Tally()
            for try await event in response.events {
                tally.events += 1
                tally.lastEventID = event.id
            }
            tally.bytes = await response.finalMetrics.transport?.bytesReceived ?? 0
            return tally
        },
        readBytes: { url in
            let response = try await manager.stream(call(url))
            guard response.status == 200 else { throw ServerAPIError(.httpStatus, "status \(response.status)") }
            var tally = Tally()
            for try await chunk in response.body {
                tally.bytes += Int64(chunk.count)
            }
            _ = await response.finalMetrics
            return tally
        },
        shutdown: {})
}

/// async-http-client, made as the transport benchmark makes it, with the event stream split by hand.
func ahcClient() -> Client {
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: HTTPClient.Configuration())
    return Client(
        readEvents: { url in
            let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(600))
            guard response.status == .ok else { throw ServerAPIError(.httpStatus, "status \(response.status)") }
            var parser = PlainEventSplitter()
            for try await buffer in response.body {
                parser.feed(buffer)
            }
            return Tally(events: parser.events, lastEventID: parser.lastEventID, bytes: parser.bytes)
        },
        readBytes: { url in
            let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(600))
            guard response.status == .ok else { throw ServerAPIError(.httpStatus, "status \(response.status)") }
            var tally = Tally()
            for try await buffer in response.body {
                tally.bytes += Int64(buffer.readableBytes)
            }
            return tally
        },
        shutdown: { try await client.shutdown() })
}

/// The straightforward way to read server-sent events from raw bytes, as a user of a client without
/// them writes it: keep the bytes not yet ended by `\n`, split on `\n`, an `id:` line sets the id, a
/// `data:` line sets the data, a blank line dispatches the event. Enough for /sse/count (no `\r`, no
/// multi-line data, no comments), not a full parser.
struct PlainEventSplitter {
    private var pending: [UInt8] = []
    private var data = ""
    private var id = ""
    private(set) var events = 0
    private(set) var lastEventID = ""
    private(set) var lastData = ""
    private(set) var bytes: Int64 = 0

    mutating func feed(_ buffer: ByteBuffer) {
        bytes += Int64(buffer.readableBytes)
        pending.append(contentsOf: buffer.readableBytesView)
        var lineStart = 0
        while let newline = pending[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
            line(pending[lineStart..<newline])
            lineStart = newline + 1
        }
        pending.removeFirst(lineStart)
    }

    private mutating func line(_ line: ArraySlice<UInt8>) {
        if line.isEmpty {
            events += 1
            lastEventID = id
            lastData = data
            data = ""
        } else if line.starts(with: "data:".utf8) {
            data = Self.value(line.dropFirst(5))
        } else if line.starts(with: "id:".utf8) {
            id = Self.value(line.dropFirst(3))
        }
    }

    /// A field's value: the text after the colon, without the one space that may follow it.
    private static func value(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.first == UInt8(ascii: " ") ? bytes.dropFirst() : bytes, as: UTF8.self)
    }
}

let usage = """
    usage: serverapi-stream-bench [--client curl|urlsession|ahc] [--mode sse|bytes] [--url URL] [--expect N]
      sse:   reads the server-sent events of URL (the fixture's /sse/count?n=N&size=S); --expect N checks
             that the last event's id is N and that N events arrived
      bytes: reads the body of URL (the fixture's /stream-bytes?size=N) as chunks and drops them;
             --expect N checks the byte count
    curl and urlsession read through ServerAPIManager.stream(_:); ahc is async-http-client.
    Prints one JSON line of results. scripts/bench-streaming.sh runs every client and prints the table.
    """
if CommandLine.arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
    print(usage)
    exit(0)
}
let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("serverapi-stream-bench: \(error)\n\(usage)\n".utf8))
    exit(1)
}
let client = try makeClient(options.client)
// No warm-up: opening one connection is nothing next to a transfer of seconds.
let clock = ContinuousClock()
let startRSS = procStatusKilobytes("VmRSS")
let cpuStart = cpuSeconds()
let start = clock.now
let tally: Tally
switch options.mode {
case "sse": tally = try await client.readEvents(options.url)
case "bytes": tally = try await client.readBytes(options.url)
default: throw ServerAPIError(.invalidRequest, "unknown mode \(options.mode)")
}
let elapsed = clock.now - start
let cpuUsed = cpuSeconds() - cpuStart
let peakRSS = procStatusKilobytes("VmHWM")
try await client.shutdown()

if let expected = options.expect {
    let problem: String? =
        switch options.mode {
        case "sse":
            tally.events != Int(expected) || tally.lastEventID != String(expected)
                ? "\(tally.events) events, the last with id \"\(tally.lastEventID)\"; expected \(expected)" : nil
        default: tally.bytes != expected ? "\(tally.bytes) bytes; expected \(expected)" : nil
        }
    if let problem {
        FileHandle.standardError.write(
            Data("serverapi-stream-bench: \(options.client) \(options.mode): \(problem)\n".utf8))
        exit(2)
    }
}
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let result = RunResult(
    client: options.client, mode: options.mode,
    events: options.mode == "sse" ? tally.events : nil,
    lastEventID: options.mode == "sse" ? tally.lastEventID : nil,
    bytes: tally.bytes, seconds: seconds,
    eventsPerSecond: options.mode == "sse" ? Double(tally.events) / seconds : nil,
    megabytesPerSecond: Double(tally.bytes) / seconds / 1_048_576,
    cpuSeconds: cpuUsed, peakRSSKilobytes: peakRSS, startRSSKilobytes: startRSS)
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
print(String(decoding: try encoder.encode(result), as: UTF8.self))
