import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPICurl

/// A transport with several loops, and one host name per loop that reaches `server`: every name resolves
/// to 127.0.0.1 (`Configuration.resolve`), and each is an origin of its own.
private func transportWithOriginPerLoop(
    _ server: CurlTestServer, loops: Int
) -> (transport: CurlTransport, bases: [String]) {
    let names = (0..<200).map { "origin\($0).test" }
    var configuration = CurlTransport.Configuration(loopCount: loops)
    configuration.resolve = names.map { .init(host: $0, port: server.port, addresses: ["127.0.0.1"]) }
    let transport = CurlTransport(configuration: configuration)
    var bases = [String?](repeating: nil, count: loops)
    for name in names {
        let base = "http://\(name):\(server.port)"
        let index = transport.loopIndex(for: URL(string: base + "/")!)
        if bases[index] == nil { bases[index] = base }
    }
    return (transport, bases.compactMap(\.self))
}

/// A call to `base` that stays in flight for 30 s once its one-byte body is sent, when `onTheWire` fires.
private func slowCall(
    _ transport: CurlTransport, _ base: String, onTheWire: EventCounter
) -> Task<TransportResponse, any Error> {
    Task {
        try await transport.perform(
            TransportRequest(
                url: URL(string: base + "/delay?seconds=30")!, method: .post, body: .data(Data("x".utf8)),
                progress: { report in
                    if report.direction == .upload, report.completed == report.total { onTheWire.fire() }
                }))
    }
}

/// Cancels `calls` and checks that each ends with `cancelled` and that no transfer is left on any loop.
private func cancelAll(_ calls: [Task<TransportResponse, any Error>], on transport: CurlTransport) async {
    for call in calls { call.cancel() }
    for call in calls {
        let error = await expectError { try await call.value }
        #expect(error?.kind == .cancelled)
    }
    #expect(transport.activeTransferCount == 0)
}

@Suite("CurlTransport: several loops")
struct CurlLoopsTests {
    @Test("one origin always maps to the same loop, and origins spread over every loop")
    func originsMapToLoops() throws {
        let transport = CurlTransport(configuration: .init(loopCount: 4))
        let url = try #require(URL(string: "https://api.example.com/v1/items?page=2"))
        let index = transport.loopIndex(for: url)
        // Path, query, case and the default port do not change the origin.
        for other in ["https://API.example.com/other", "https://api.example.com:443/", "https://api.example.com"] {
            #expect(transport.loopIndex(for: try #require(URL(string: other))) == index)
        }
        let used = Set((0..<64).map { transport.loopIndex(for: URL(string: "http://host\($0).example:8080/")!) })
        #expect(used == [0, 1, 2, 3])
        #expect(CurlTransport(configuration: .init(loopCount: 1)).loopIndex(for: url) == 0)
        // The documented default: one loop per active processor (at least one).
        let processors = ProcessInfo.processInfo.activeProcessorCount
        #expect(CurlTransport.Configuration().loopCount == max(1, processors))
        #expect(CurlTransport.Configuration.defaultLoopCount == max(1, processors))
    }

    @Test(
        "round-robin gives one origin's calls to every loop in turn; each loop serves and cancels its own",
        .timeLimit(.minutes(1)))
    func roundRobinSpreadsOneOrigin() async throws {
        let unit = CurlTransport(configuration: .init(loopCount: 3, loopAssignment: .roundRobin))
        let url = try #require(URL(string: "https://api.example.com/v1/items"))
        #expect((0..<6).map { _ in unit.loopIndex(for: url) } == [0, 1, 2, 0, 1, 2])
        try await CurlTestServer.with { server in
            let transport = CurlTransport(configuration: .init(loopCount: 2, loopAssignment: .roundRobin))
            let onTheWire = EventCounter()
            let calls = (0..<4).map { _ in slowCall(transport, server.base, onTheWire: onTheWire) }
            await onTheWire.wait(for: calls.count)
            // By origin, all four would be on one loop.
            #expect(transport.activeTransfersPerLoop == [2, 2])
            await cancelAll(calls, on: transport)
            for _ in 0..<4 {
                let response = try await transport.perform(TransportRequest(url: URL(string: server.base + "/echo")!))
                #expect(response.status == 200)
            }
        }
    }

    @Test(
        "by default one origin's calls share its loop until it is busy, then go to the least busy loop",
        .timeLimit(.minutes(1)))
    func adaptiveSpreadsWhenBusy() async throws {
        #expect(CurlTransport.Configuration().loopAssignment == .adaptive)
        try await CurlTestServer.with { server in
            // 4 connections per host over 2 loops: 2 on each, so a loop is busy with 2 calls in flight.
            let transport = CurlTransport(configuration: .init(maxConnectionsPerHost: 4, loopCount: 2))
            let onTheWire = EventCounter()
            var calls = (0..<2).map { _ in slowCall(transport, server.base, onTheWire: onTheWire) }
            await onTheWire.wait(for: 2)
            // Two calls: both on the origin's loop, sharing its connections.
            #expect(transport.activeTransfersPerLoop.sorted() == [0, 2])
            calls += (0..<2).map { _ in slowCall(transport, server.base, onTheWire: onTheWire) }
            await onTheWire.wait(for: 4)
            // That loop is busy: the next two go to the other one.
            #expect(transport.activeTransfersPerLoop == [2, 2])
            await cancelAll(calls, on: transport)
        }
    }

    @Test("calls that may share an HTTP/2 connection stay on their loop up to adaptiveThreshold in flight")
    func adaptiveKeepsHTTP2Streams() throws {
        // 4 connections per host over 2 loops: an HTTP/1.1 origin's loop is busy with 2 calls in flight.
        let transport = CurlTransport(configuration: .init(maxConnectionsPerHost: 4, loopCount: 2))
        let plain = try #require(URL(string: "http://api.example.com/items"))
        let secure = try #require(URL(string: "https://api.example.com/items"))
        let plainHome = transport.loopIndex(for: plain)
        let secureHome = transport.loopIndex(for: secure)
        for _ in 0..<2 { transport.callCounters[plainHome].enter() }
        #expect(transport.loopIndex(for: plain) != plainHome)
        for _ in 0..<2 { transport.callCounters[plainHome].leave() }
        // Streams of one HTTP/2 connection: 5 calls in flight are not enough to open a second connection.
        for _ in 0..<5 { transport.callCounters[secureHome].enter() }
        #expect(transport.loopIndex(for: secure) == secureHome)
        for _ in 5..<CurlTransport.Configuration.adaptiveThreshold { transport.callCounters[secureHome].enter() }
        #expect(transport.loopIndex(for: secure) != secureHome)
        // HTTP/1.1 only: https is one call per connection too.
        let http1 = CurlTransport(configuration: .init(maxConnectionsPerHost: 4, httpVersion: .http1, loopCount: 2))
        let home = http1.loopIndex(for: secure)
        for _ in 0..<2 { http1.callCounters[home].enter() }
        #expect(http1.loopIndex(for: secure) != home)
    }

    @Test("calls claimed at the same moment never overfill a loop while another has room")
    func adaptiveClaimsAreAtomic() throws {
        // An HTTP/2 origin: its loop takes adaptiveThreshold calls, then the least busy loop takes the next.
        let transport = CurlTransport(configuration: .init(maxConnectionsPerHost: 8, loopCount: 2))
        defer { transport.close() }
        let url = try #require(URL(string: "https://api.example.com/items"))
        let threshold = CurlTransport.Configuration.adaptiveThreshold
        for _ in 0..<50 {
            DispatchQueue.concurrentPerform(iterations: 2 * threshold) { _ in _ = transport.claimLoop(for: url) }
            // Choosing a loop and counting the call in as two steps let two calls take its last place.
            #expect(transport.callCounters.map(\.count) == [threshold, threshold])
            for counter in transport.callCounters { for _ in 0..<counter.count { counter.leave() } }
        }
    }

    @Test("a call cancelled on any loop ends there at once with cancelled", .timeLimit(.minutes(1)))
    func cancellationReachesItsLoop() async throws {
        try await CurlTestServer.with { server in
            let (transport, bases) = transportWithOriginPerLoop(server, loops: 3)
            #expect(bases.count == 3)
            let onTheWire = EventCounter()
            let calls = bases.map { slowCall(transport, $0, onTheWire: onTheWire) }
            await onTheWire.wait(for: bases.count)
            #expect(transport.activeTransfersPerLoop == [1, 1, 1])
            // A cancellation handed to another loop than the call's would be ignored, and the call would end
            // with the server's 200 after 30 s.
            await cancelAll(calls, on: transport)
        }
    }

    @Test("cancellations racing completions on every loop end each call once, as a response or as cancelled")
    func cancellationRacesCompletion() async throws {
        try await CurlTestServer.with { server in
            let (transport, bases) = transportWithOriginPerLoop(server, loops: 3)
            let outcomes = await withTaskGroup(of: String.self) { group in
                for index in 0..<300 {
                    let base = bases[index % bases.count]
                    let call = Task { try await transport.perform(TransportRequest(url: URL(string: base + "/echo")!)) }
                    group.addTask {
                        // Cancelled at different points: before the loop took the call, while it is on the
                        // wire, or after it completed.
                        for _ in 0..<(index % 7) { await Task.yield() }
                        call.cancel()
                        switch await call.result {
                        case .success(let response): return response.status == 200 ? "ok" : "status \(response.status)"
                        case .failure(let error as ServerAPIError) where error.kind == .cancelled: return "cancelled"
                        case .failure(let error): return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(outcomes.values.reduce(0, +) == 300)
            #expect(Set(outcomes.keys).isSubset(of: ["ok", "cancelled"]), "\(outcomes)")
            #expect(transport.activeTransferCount == 0)
            // Every loop still serves calls afterwards.
            for base in bases {
                let response = try await transport.perform(TransportRequest(url: URL(string: base + "/echo")!))
                #expect(response.status == 200)
            }
        }
    }

    @Test("a loop keeps as many idle handles as it had calls in flight, and 64 once none is", .timeLimit(.minutes(1)))
    func idleHandlesFollowTheLoad() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport(configuration: .init(maxConnectionsPerHost: 0, loopCount: 1))
            let onTheWire = EventCounter()
            func start(_ count: Int) -> [Task<TransportResponse, any Error>] {
                (0..<count).map { _ in
                    Task {
                        try await transport.perform(
                            TransportRequest(
                                url: server.url("/delay?seconds=30"), method: .post, body: .data(Data("x".utf8)),
                                progress: { report in
                                    if report.direction == .upload, report.completed == report.total {
                                        onTheWire.fire()
                                    }
                                }))
                    }
                }
            }
            func cancel(_ calls: [Task<TransportResponse, any Error>]) async {
                for call in calls { call.cancel() }
                for call in calls { _ = await call.result }
            }
            // One call stays in flight, so the loop is never without one until the end.
            let keeper = start(1)
            await onTheWire.wait(for: 1)
            let first = start(100)
            await onTheWire.wait(for: 101)
            #expect(transport.easyHandleCounts.made == 101)
            await cancel(first)
            // With the old fixed pool of 64, 36 of these handles would have been freed.
            #expect(transport.easyHandleCounts.idle == 100)
            let second = start(100)
            await onTheWire.wait(for: 201)
            #expect(
                transport.easyHandleCounts.made == 101, "the second hundred calls reuse the first hundred's handles")
            #expect(transport.easyHandleCounts.idle == 0)
            await cancel(second + keeper)
            #expect(transport.activeTransferCount == 0)
            #expect(transport.easyHandleCounts.idle == 64, "with nothing in flight, the handles beyond 64 are freed")
            let response = try await transport.perform(TransportRequest(url: server.url("/echo")))
            #expect(response.status == 200)
            #expect(transport.easyHandleCounts.made == 101)
        }
    }

    @Test(
        "closing a transport ends the calls on every loop exactly once, and refuses later calls",
        .timeLimit(.minutes(1)))
    func closeEndsEveryLoop() async throws {
        try await CurlTestServer.with { server in
            let (transport, bases) = transportWithOriginPerLoop(server, loops: 3)
            let onTheWire = EventCounter()
            let ended = EventCounter()
            let perLoop = 2
            let calls = (0..<(bases.count * perLoop)).map { index in
                Task {
                    defer { ended.fire() }
                    return try await transport.perform(
                        TransportRequest(
                            url: URL(string: bases[index % bases.count] + "/delay?seconds=30")!, method: .post,
                            body: .data(Data("x".utf8)),
                            progress: { report in
                                if report.direction == .upload, report.completed == report.total { onTheWire.fire() }
                            }))
                }
            }
            await onTheWire.wait(for: calls.count)
            #expect(transport.activeTransfersPerLoop == [perLoop, perLoop, perLoop])
            transport.close()
            for call in calls {
                let error = await expectError { try await call.value }
                #expect(error?.kind == .cancelled)
                #expect(error?.message.contains("shut down") == true, "\(String(describing: error))")
            }
            // Debug builds check each continuation is resumed once (a second resume traps); each task ended once.
            #expect(ended.count == calls.count)
            #expect(transport.activeTransferCount == 0)
            let late = await expectError {
                try await transport.perform(TransportRequest(url: URL(string: bases[0] + "/echo")!))
            }
            #expect(late?.kind == .shuttingDown)
        }
    }
}
