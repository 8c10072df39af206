import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every fault of the fixture server ends in the right `ServerAPIError` kind, and nothing hangs.
@Suite("Conformance: faults")
struct FailureConformanceTests {
    /// One fault: the fixture route, the request's settings, and the kind of error it must end in.
    struct Fault: Sendable, CustomStringConvertible {
        var path: String
        var timeout: Duration = .seconds(20)
        var maxResponseSize: Int64?
        var expected: ServerAPIError.Kind
        var description: String { "\(path) → \(expected)" }
    }

    static let faults: [Fault] = [
        Fault(path: "/close-mid-body?size=100000&after=5000", expected: .network),
        Fault(path: "/wrong-length?size=1000&extra=100", expected: .network),
        // With no limit the short body is what fails; by default (64 MiB for a body in memory) the announced 2 GB does.
        Fault(path: "/huge-length", maxResponseSize: .max, expected: .network),
        Fault(path: "/huge-length", expected: .responseTooLarge),
        Fault(path: "/huge-length", maxResponseSize: 1_000_000, expected: .responseTooLarge),
        Fault(path: "/resource?size=2000000", maxResponseSize: 1000, expected: .responseTooLarge),
        Fault(path: "/resource?size=2000000&chunked=1", maxResponseSize: 100_000, expected: .responseTooLarge),
        Fault(path: "/hang", timeout: .seconds(1), expected: .timedOut),
        Fault(path: "/hang-body?size=100000&after=1000", timeout: .seconds(1), expected: .timedOut),
        Fault(path: "/drip?size=100&interval_ms=50", timeout: .milliseconds(600), expected: .timedOut),
        Fault(path: "/redirect-loop", expected: .tooManyRedirects),
    ]

    @Test("each fixture fault ends in the right error kind", arguments: TransportKind.allCases, faults)
    func fault(kind: TransportKind, fault: Fault) async throws {
        let transport = kind.make()
        let url = try kind.fixture(fault.path)
        let started = ContinuousClock.now
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(url, timeout: fault.timeout) { $0.maxResponseSize = fault.maxResponseSize }
        }
        #expect(error?.kind == fault.expected, "\(String(reflecting: error))")
        #expect(error?.url == url)
        // Generous and scaled (SAPI_TEST_TIME_SCALE): the point is that nothing hangs, not speed.
        #expect(ContinuousClock.now - started < TestTiming.bound(fault.timeout + .seconds(5)))
    }

    @Test("a response larger than allowed fails before its body is read", arguments: TransportKind.allCases)
    func tooLargeFailsFast(kind: TransportKind) async throws {
        let transport = kind.make()
        let recorder = ProgressRecorder()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(try kind.fixture("/resource?size=50000000&rate=10000000")) {
                $0.maxResponseSize = 1000
                $0.progress = recorder.record
            }
        }
        #expect(error?.kind == .responseTooLarge)
        #expect(recorder.reports(.download).allSatisfy { $0.completed <= 1000 })
    }

    @Test("a port nobody listens on is cannotConnect", arguments: TransportKind.allCases)
    func refused(kind: TransportKind) async throws {
        let port = try closedPort()
        let transport = kind.make()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(URL(string: "\(kind.scheme)://127.0.0.1:\(port)/")!, timeout: .seconds(10))
        }
        #expect(error?.kind == .cannotConnect)
        #expect(error?.underlying != nil)
    }

    @Test("a URL that is not http(s) is an invalid request", arguments: TransportKind.allCases)
    func notHTTP(kind: TransportKind) async throws {
        let transport = kind.make()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(URL(string: "ftp://127.0.0.1/file")!)
        }
        #expect(error?.kind == .invalidRequest)
    }

    @Test("a sub-second timeout fires, and a generous one does not", arguments: TransportKind.allCases)
    func timeouts(kind: TransportKind) async throws {
        let transport = kind.make()
        let started = ContinuousClock.now
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(try kind.httpbin("/delay/5"), timeout: .milliseconds(300))
        }
        #expect(error?.kind == .timedOut)
        #expect(ContinuousClock.now - started < TestTiming.bound(.seconds(4)))
        let response = try await transport.send(try kind.httpbin("/delay/1"), timeout: .seconds(15))
        #expect(response.status == 200)
    }
}
