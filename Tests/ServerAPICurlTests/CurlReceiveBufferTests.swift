import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPICurl

@Suite("CurlTransport: the receive buffer follows a loop's responses")
struct CurlReceiveBufferTests {
    @Test("twice the largest recent response, a power of two between 4 and 16 KB")
    func sizes() {
        #expect(CurlReceiveBufferSizer.size(for: 0) == 4096)
        #expect(CurlReceiveBufferSizer.size(for: 1300) == 4096)
        #expect(CurlReceiveBufferSizer.size(for: 2048) == 4096)
        #expect(CurlReceiveBufferSizer.size(for: 2049) == 8192)
        #expect(CurlReceiveBufferSizer.size(for: 5000) == 16384)
        #expect(CurlReceiveBufferSizer.size(for: 8192) == 16384)
        #expect(CurlReceiveBufferSizer.size(for: 10 << 20) == 16384)
    }

    @Test("starts at libcurl's 16 KB, shrinks after a window of small responses, grows back at once")
    func window() {
        var sizer = CurlReceiveBufferSizer()
        let window = CurlReceiveBufferSizer.window
        for _ in 0..<(window - 1) { sizer.record(responseBytes: 1300) }
        #expect(sizer.size == 16384, "nothing is known until a whole window was seen")
        sizer.record(responseBytes: 1300)
        #expect(sizer.size == 4096)
        sizer.record(responseBytes: 100_000)
        #expect(sizer.size == 16384, "a large response raises the size for the next call")
        // The large response stays in view for the rest of its window and the whole next one.
        for _ in 0..<(2 * window - 2) { sizer.record(responseBytes: 1300) }
        #expect(sizer.size == 16384)
        sizer.record(responseBytes: 1300)
        #expect(sizer.size == 4096)
        for _ in 0..<window { sizer.record(responseBytes: 3000) }
        #expect(sizer.size == 8192)
    }

    @Test("a loop of small responses reads with a 4 KB buffer, and a large body after them arrives intact",
          .timeLimit(.minutes(1)))
    func smallThenLarge() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport(configuration: .init(maxConnectionsPerHost: 32, loopCount: 1))
            // A window of small responses, 32 calls at a time (the test server answers each in a few ms).
            let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        var statuses: [Int] = []
                        for _ in 0..<(CurlReceiveBufferSizer.window / 32) {
                            statuses.append(try await transport.perform(TransportRequest(url: server.url("/bytes/1000"))).status)
                        }
                        return statuses
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(statuses == Array(repeating: 200, count: CurlReceiveBufferSizer.window))
            #expect(transport.ordinaryReceiveBufferSizes == [4096])
            // 1 MiB through the 4 KB buffer, in pieces; byte i is i % 251.
            let count = 1 << 20
            let large = try await transport.perform(TransportRequest(url: server.url("/bytes/\(count)")))
            let body = try #require(large.data)
            #expect(body.count == count)
            #expect(body.elementsEqual((0..<count).lazy.map { UInt8($0 % 251) }))
            #expect(transport.ordinaryReceiveBufferSizes == [16384])
            let chunked = try await transport.perform(TransportRequest(url: server.url("/bytes/\(count)?chunked=1")))
            #expect(chunked.data?.count == count)
        }
    }
}
