import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// HTTP/2 against a real server (nginx in front of the fault fixture, see scripts/test-server.sh):
/// calls to one host share its connections as streams, a cancelled stream leaves its neighbours
/// alone, and a server's limit on concurrent streams makes the client open more connections rather
/// than queue calls forever (async-http-client issue #567).
///
/// Every call waits at the fixture's barrier until all of them have arrived: the barrier answers
/// 504 to a call that waited 30 s in vain, so 200 for every call proves they were all in flight at
/// once. How many connections were opened comes from the client's metrics (`reusedConnection`: libcurl
/// opened none for the call), not from the fixture, which sees nginx's connections, not the client's.
@Suite("HTTP/2: multiplexing")
struct HTTP2Tests {
    static let calls = 64

    /// A manager over `CurlTransport` speaking HTTP/2 and trusting the front's CA.
    private func manager() throws -> ServerAPIManager {
        let configuration = CurlTransport.Configuration(
            httpVersion: .http2, additionalTrustedCAFile: try TestServers.h2CAFile())
        return ServerAPIManager(transport: CurlTransport(configuration: configuration))
    }

    /// Sends `count` calls to the barrier at `base` at once; their statuses and metrics.
    private func barrier(
        _ manager: ServerAPIManager, base: String, count: Int, key: String = UUID().uuidString
    ) async throws -> [(status: Int, metrics: TransportMetrics?)] {
        let url = try TestServers.url(base: base, "/barrier?n=\(count)&key=\(key)")
        return try await withThrowingTaskGroup(of: (status: Int, metrics: TransportMetrics?).self) { group in
            for _ in 0..<count {
                group.addTask {
                    let result = try await manager.send(ServerAPI(url: url).format(.data))
                    return (result.status, result.metrics.transport)
                }
            }
            var results: [(status: Int, metrics: TransportMetrics?)] = []
            for try await result in group { results.append(result) }
            return results
        }
    }

    /// The calls for which libcurl opened a connection.
    private func opened(_ results: [(status: Int, metrics: TransportMetrics?)]) -> Int {
        results.filter { $0.metrics?.reusedConnection == false }.count
    }

    @Test("64 concurrent calls to one host share one HTTP/2 connection")
    func multiplexed() async throws {
        let manager = try manager()
        let results = try await barrier(manager, base: try TestServers.fixtureH2(), count: Self.calls)
        #expect(results.count == Self.calls)
        #expect(results.allSatisfy { $0.status == 200 }, "\(results.map(\.status))")
        #expect(results.allSatisfy { $0.metrics?.httpVersion == "2" }, "\(results.map { $0.metrics?.httpVersion })")
        #expect(results.allSatisfy { $0.metrics?.reusedConnection != nil })
        // CURLOPT_PIPEWAIT: every call waits for the first connection to say it multiplexes. Over
        // HTTP/1.1, 64 calls held at once would need 64 connections (and 8 per host would 504).
        let opened = opened(results)
        print("HTTP/2, 64 concurrent calls: \(opened) connection(s) opened")
        #expect(opened >= 1 && opened <= 2, "\(opened) connections opened")
    }

    @Test("cancelling one stream leaves the others on its connection alive")
    func cancelOne() async throws {
        let manager = try manager()
        let base = try TestServers.fixtureH2()
        // A first call opens the connection every later call shares.
        let first = try await manager.send(ServerAPI(url: try TestServers.url(base: base, "/health")).format(.data))
        #expect(first.metrics.transport?.httpVersion == "2")
        let key = UUID().uuidString
        let survivors = 4
        let barrier = try TestServers.url(base: base, "/barrier?n=\(survivors + 1)&key=\(key)")
        // The survivors wait at the barrier, which opens only when one more call arrives after the cancellation.
        let waiting = Task {
            try await withThrowingTaskGroup(of: ServerResult.self) { group in
                for _ in 0..<survivors {
                    group.addTask { try await manager.send(ServerAPI(url: barrier).format(.data)) }
                }
                var results: [ServerResult] = []
                for try await result in group { results.append(result) }
                return results
            }
        }
        // The victim's head has arrived, so its stream is open; then it is cancelled (RST_STREAM).
        let victim = try await manager.stream(
            ServerAPI(url: try TestServers.url(base: base, "/hang-body?size=100000&after=10")))
        #expect(victim.metrics.transport?.httpVersion == "2")
        var chunks = victim.body.makeAsyncIterator()
        _ = try await chunks.next()
        victim.cancel()
        let error = await #expect(throws: ServerAPIError.self) {
            while try await chunks.next() != nil {}
        }
        #expect(error?.kind == .cancelled)
        // The last call opens the barrier: every survivor answers 200 on the connection they share.
        let last = try await manager.send(ServerAPI(url: barrier).format(.data))
        let results = try await waiting.value + [last]
        #expect(results.map(\.status) == Array(repeating: 200, count: survivors + 1))
        #expect(results.allSatisfy { $0.metrics.transport?.httpVersion == "2" })
        #expect(last.metrics.transport?.reusedConnection == true)
        #expect(opened(results.map { ($0.status, $0.metrics.transport) }) <= 1)
    }

    @Test("with 8 streams per connection allowed, 64 concurrent calls all succeed on several connections")
    func streamLimit() async throws {
        let manager = try manager()
        // 64 calls held at once, 8 per connection: at least 8 connections (the default per-host limit).
        let results = try await barrier(manager, base: try TestServers.h2Limited(), count: Self.calls)
        #expect(results.count == Self.calls)
        #expect(results.allSatisfy { $0.status == 200 }, "\(results.map(\.status))")
        #expect(results.allSatisfy { $0.metrics?.httpVersion == "2" })
        let opened = opened(results)
        print("HTTP/2, 8 streams per connection, 64 concurrent calls: \(opened) connection(s) opened")
        #expect(opened > 1)
        #expect(opened >= Self.calls / 8, "\(opened) connections opened")
    }
}
