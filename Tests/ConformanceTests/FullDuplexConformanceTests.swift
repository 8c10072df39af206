import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Full duplex on `CurlTransport`: a streamed request body and a streamed response at once, in both orders
/// of ending (URLSession refuses streamed request bodies). `PeerConformanceTests` has the peer suite's two
/// cases (`testEchoInterleave`, `testSpeakInterleave`); these check what happens to the other direction.
@Suite("Conformance: full duplex on curl")
struct FullDuplexConformanceTests {
    static let kinds: [TransportKind] = [.curl, .curlHTTP2]

    private func transport(_ kind: TransportKind) -> CurlTransport {
        CurlTransport(configuration: kind.curlConfiguration(.init()))
    }

    @Test(
        "when the response ends first, the request body ends with it and the transfer is over",
        arguments: kinds)
    func responseEndsFirst(kind: TransportKind) async throws {
        let transport = transport(kind)
        let manager = ServerAPIManager(transport: transport)
        let (chunks, writer) = AsyncStream<Data>.makeStream()
        // The producer never ends its sequence: only the response's end can end the request body.
        defer { writer.finish() }
        // The same limitation as the peer suite's testSpeakInterleave, gated the same way: on the loaded
        // libcurl's version (before 8.9, over HTTP/2), and matching only the cancellation it causes.
        let limit = PeerConformanceTests.http2ResponseFirst
        try await withKnownIssue(Comment(rawValue: limit.reason)) {
            let response = try await manager.stream(
                ServerAPI(url: try kind.fixture("/peer/speak")).method(.post).body(.stream(RequestBodyStream(chunks)))
                    .timeout(TestTiming.bound(.seconds(30))))
            let limit = Task {
                try await Task.sleep(for: PeerConformanceTests.speakLimit(kind))
                response.cancel()
            }
            defer { limit.cancel() }
            var received = 0
            for try await chunk in response.body {
                received += chunk.count
                writer.yield(chunk)
            }
            #expect(received == 1000)
            try await poll("the transfer's end") { transport.activeTransferCount == 0 }
        } when: {
            PeerConformanceTests.responseFirstLimits[kind] != nil
        } matching: {
            limit.matches($0)
        }
    }

    @Test("when the request body ends first, the response goes on to its end", arguments: kinds)
    func requestEndsFirst(kind: TransportKind) async throws {
        let manager = ServerAPIManager(transport: transport(kind))
        let (chunks, writer) = AsyncStream<Data>.makeStream()
        writer.yield(Data("one".utf8))
        writer.yield(Data("two".utf8))
        writer.finish()
        let response = try await manager.stream(
            ServerAPI(url: try kind.fixture("/peer/echo")).method(.post).body(.stream(RequestBodyStream(chunks))))
        #expect(try await response.body.collect(upTo: 1 << 10) == Data("onetwo".utf8))
    }
}
