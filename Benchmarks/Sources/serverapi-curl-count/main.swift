// A fixed number of small GETs through CurlTransport on one loop, bare or through the manager, for counting
// the instructions a request costs with callgrind: `scripts/bench-transports.sh --instructions` runs it twice
// with different counts and divides the difference, so that start-up and shut-down cancel out. Its own binary,
// without SwiftNIO: valgrind 3.19 (Debian 12) cannot read serverapi-transport-bench's debug information.
//
//   serverapi-curl-count --url URL --requests N [--concurrency C] [--manager]
//
// Prints one JSON line: the client, the concurrency, the requests made and how many failed.
import Foundation
import ServerAPICurl
import ServerAPIKit
import Synchronization

var url: URL?
var requests = 1000
var concurrency = 64
var manager = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--manager": manager = true
    case "--url": url = arguments.next().flatMap(URL.init(string:))
    case "--requests": requests = arguments.next().flatMap(Int.init) ?? requests
    case "--concurrency": concurrency = arguments.next().flatMap(Int.init) ?? concurrency
    default:
        FileHandle.standardError.write(
            Data("usage: serverapi-curl-count --url URL --requests N [--concurrency C] [--manager]\n".utf8))
        exit(1)
    }
}
guard let url else {
    FileHandle.standardError.write(Data("serverapi-curl-count: --url is needed\n".utf8))
    exit(1)
}

let transport = CurlTransport(
    configuration: .init(maxConnectionsPerHost: concurrency, httpVersion: .http1, loopCount: 1))
let client = ServerAPIManager(transport: transport)
let api = ServerAPI(url: url).format(.data)
let total = requests
let throughManager = manager
let started = Atomic<Int>(0)
let failed = Atomic<Int>(0)

await withTaskGroup(of: Void.self) { group in
    for _ in 0..<concurrency {
        group.addTask {
            while started.add(1, ordering: .relaxed).newValue <= total {
                do {
                    if throughManager {
                        _ = try await client.send(api)
                    } else {
                        let response = try await transport.perform(TransportRequest(url: url))
                        if !response.isSuccess { failed.add(1, ordering: .relaxed) }
                    }
                } catch {
                    failed.add(1, ordering: .relaxed)
                }
            }
        }
    }
}
await client.shutdown(gracePeriod: .zero)
let name = manager ? "curl-manager" : "curl"
print(
    "{\"client\":\"\(name)\",\"concurrency\":\(concurrency),\"requests\":\(requests),"
        + "\"failures\":\(failed.load(ordering: .relaxed))}")
