import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession
import Testing

/// Stall timeouts: a transfer slower than N bytes/s for T seconds fails as a stall, a faster one runs
/// on, and a stalled download keeps its partial file.
@Suite("Conformance: stall timeout")
struct StallConformanceTests {
    static let limit = StallTimeout(bytesPerSecond: 1000, duration: .seconds(1))

    /// A transport of `kind` whose default stall limit is `stall`.
    func make(_ kind: TransportKind, stall: StallTimeout?) -> any RequestPerforming {
        switch kind {
        case .curl, .curlHTTP2, .curlHTTP3:
            CurlTransport(configuration: kind.curlConfiguration(.init(stallTimeout: stall)))
        case .urlsession: URLSessionTransport(configuration: .init(stallTimeout: stall))
        }
    }

    @Test(
        "a drip slower than the limit fails as a stall, long before the total timeout",
        arguments: TransportKind.allCases)
    func slowDrip(kind: TransportKind) async throws {
        // 4 bytes a second for 50 seconds.
        let url = try kind.fixture("/drip?size=200&interval_ms=250&chunk=1")
        let started = ContinuousClock.now
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(url, timeout: .seconds(60)) { $0.stallTimeout = Self.limit }
        }
        #expect(error?.kind == .timedOut)
        #expect(error?.isStalled == true)
        #expect(error?.stallTimeout == Self.limit)
        #expect(error?.message.contains("stalled") == true)
        #expect(error?.message.contains("below 1000 B/s for 1 s") == true)
        #expect(error?.url == url)
        // Generous: the point is that it ends near the stall limit, not at the 60 s timeout.
        #expect(ContinuousClock.now - started < TestTiming.bound(.seconds(20)))
    }

    @Test("the transport's default stall limit applies to requests that set none", arguments: TransportKind.allCases)
    func transportDefault(kind: TransportKind) async throws {
        let url = try kind.fixture("/drip?size=200&interval_ms=250&chunk=1")
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await make(kind, stall: Self.limit).send(url, timeout: .seconds(60))
        }
        #expect(error?.kind == .timedOut)
        #expect(error?.isStalled == true)
        #expect(error?.stallTimeout == Self.limit)
    }

    @Test(
        "a steady transfer faster than the limit succeeds, and the request's limit wins over the transport's",
        arguments: TransportKind.allCases)
    func steady(kind: TransportKind) async throws {
        // About 50 KB/s for 3 seconds: three windows of the 1 s limit.
        let url = try kind.fixture("/drip?size=150000&interval_ms=30&chunk=1500")
        // The transport's own default (1 MB/s) would fail this transfer; the request's limit replaces it.
        let transport = make(kind, stall: StallTimeout(bytesPerSecond: 1_000_000, duration: .seconds(1)))
        // The window is scaled under ThreadSanitizer: on two busy cores an instrumented FoundationNetworking
        // once delivered nothing for a whole second of this 50 KB/s transfer.
        let limit = StallTimeout(
            bytesPerSecond: Self.limit.bytesPerSecond, duration: TestTiming.bound(Self.limit.duration))
        let response = try await transport.send(url, timeout: .seconds(60)) { $0.stallTimeout = limit }
        #expect(response.status == 200)
        #expect(response.data == FixturePayload().bytes(0..<150_000))
    }

    @Test("a total timeout is not reported as a stall", arguments: TransportKind.allCases)
    func totalTimeout(kind: TransportKind) async throws {
        // Fast enough for the stall limit, too long for the total timeout.
        let url = try kind.fixture("/drip?size=100000&interval_ms=20&chunk=1000")
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(url, timeout: .milliseconds(700)) {
                $0.stallTimeout = StallTimeout(bytesPerSecond: 100, duration: .seconds(5))
            }
        }
        #expect(error?.kind == .timedOut)
        #expect(error?.isStalled == false)
    }

    @Test(
        "a download that stalls keeps its partial file, and the next call resumes it", arguments: TransportKind.allCases
    )
    func stalledDownload(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let transport = kind.make()
        let target = DownloadTarget(destination: scratch.file("stalled.bin"), resume: true)
        // 100,000 bytes at once, then nothing; a response that starts past that is sent whole.
        let url = try kind.fixture("/resource?size=300000&seed=9&stall_after=100000")
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(url, timeout: .seconds(60)) {
                $0.download = target
                $0.stallTimeout = Self.limit
            }
        }
        #expect(error?.kind == .timedOut)
        #expect(error?.isStalled == true)
        #expect(!scratch.exists(target.destination))
        let kept = scratch.size(target.partialURL) ?? 0
        #expect(kept > 0 && kept <= 100_000)

        let response = try await transport.send(url, timeout: .seconds(60)) {
            $0.download = target
            $0.stallTimeout = Self.limit
        }
        #expect(response.status == 206)
        #expect(response.body == .file(target.destination, bytes: 300_000))
        #expect(try await FixturePayload(seed: 9).verify(fileAt: target.destination, size: 300_000))
        #expect(!scratch.exists(target.partialURL))
    }

    @Test("a stall limit of zero is an invalid request", arguments: TransportKind.allCases)
    func invalid(kind: TransportKind) async throws {
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(try kind.fixture("/health")) {
                $0.stallTimeout = StallTimeout(bytesPerSecond: 0, duration: .seconds(1))
            }
        }
        #expect(error?.kind == .invalidRequest)
    }
}
