import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession

/// The transports the conformance suite holds to one contract. Adding a backend is one case here.
enum TransportKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case urlsession
    /// `CurlTransport` over HTTP/1.1 with two loops (`loopCount`), whatever the machine's cores, taking the
    /// calls in turn (`LoopAssignment.roundRobin`) and driving libcurl's socket interface (`socketInterface`):
    /// consecutive calls run on different loops, and each call's cancellation, pauses and resumptions must
    /// reach its own loop. `curlHTTP2` keeps the default
    /// perform/poll loop, so the suite runs both.
    case curl
    /// `CurlTransport` with `httpVersion: .http2` talking to the servers through their HTTP/2 front
    /// (nginx over TLS, see scripts/test-server.sh), trusting its CA, with one loop (`loopCount` 1).
    ///
    /// There is no URLSession kind over HTTP/2: FoundationNetworking on Linux would negotiate it (its
    /// libcurl's default is HTTP/2 over TLS), but it cannot trust the front's CA: it sets `CURLOPT_CAINFO`
    /// to the system bundle and has no per-session trust (its `URLSessionCertificateAuthorityInfoFile`
    /// variable is read on Android only).
    case curlHTTP2

    /// Every kind, or those `SAPI_CONFORMANCE_KINDS` names (comma-separated). scripts/test.sh's pass on libcurl's
    /// GnuTLS flavour names `curl,curlHTTP2`: FoundationNetworking loads the system's libcurl whichever one the test
    /// binary links, so `urlsession` there would repeat the release pass.
    static var allCases: [TransportKind] {
        let every: [TransportKind] = [.urlsession, .curl, .curlHTTP2]
        guard let names = ProcessInfo.processInfo.environment["SAPI_CONFORMANCE_KINDS"]?.split(separator: ",")
        else { return every }
        return every.filter { names.contains(Substring($0.rawValue)) }
    }

    /// A new transport of this kind.
    func make() -> any RequestPerforming {
        switch self {
        case .urlsession: URLSessionTransport()
        case .curl, .curlHTTP2: CurlTransport(configuration: curlConfiguration(.init()))
        }
    }

    /// A new transport of this kind that keeps at most `maxErrorBodySize` bytes of a download's error body.
    func make(maxErrorBodySize: Int) -> any RequestPerforming {
        switch self {
        case .urlsession: URLSessionTransport(configuration: .init(maxErrorBodySize: maxErrorBodySize))
        case .curl, .curlHTTP2:
            CurlTransport(configuration: curlConfiguration(.init(maxErrorBodySize: maxErrorBodySize)))
        }
    }

    /// `configuration` as this kind changes it: for `curl`, two loops round-robin on the socket interface; for
    /// `curlHTTP2`, one loop, HTTP/2 and the front's CA.
    func curlConfiguration(_ configuration: CurlTransport.Configuration) -> CurlTransport.Configuration {
        var configuration = configuration
        configuration.loopCount = self == .curl ? 2 : 1
        configuration.socketInterface = self == .curl
        if self == .curl { configuration.loopAssignment = .roundRobin }
        guard self == .curlHTTP2 else { return configuration }
        configuration.httpVersion = .http2
        // A missing variable leaves the CA unset: calls then fail with an untrusted certificate, and
        // the URL accessors below throw `MissingServer` first anyway.
        configuration.additionalTrustedCAFile = try? TestServers.h2CAFile()
        return configuration
    }

    /// The name its metrics give (`TransportMetrics.transport`).
    var transportName: String { self == .urlsession ? "urlsession" : "curl" }

    /// httpbin's base URL for this kind: the HTTP/2 front's for `curlHTTP2`.
    func httpbin() throws -> String { self == .curlHTTP2 ? try TestServers.httpbinH2() : try TestServers.httpbin() }

    /// The fault fixture's base URL for this kind: the HTTP/2 front's for `curlHTTP2`.
    func fixture() throws -> String { self == .curlHTTP2 ? try TestServers.fixtureH2() : try TestServers.fixture() }

    /// A URL on httpbin, for this kind.
    /// - Parameter path: The path and query, starting with `/`.
    func httpbin(_ path: String) throws -> URL { try TestServers.url(base: httpbin(), path) }

    /// A URL on the fault fixture, for this kind.
    /// - Parameter path: The path and query, starting with `/`.
    func fixture(_ path: String) throws -> URL { try TestServers.url(base: fixture(), path) }

    /// Whether a streamed response's transfer pauses when its reader stops reading. FoundationNetworking
    /// cannot pause one (`URLSessionTask.suspend()` aborts it), so URLSession streams are not held back.
    var pausesStreams: Bool { self != .urlsession }

    var description: String { rawValue }
}
