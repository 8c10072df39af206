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
    /// `CurlTransport` with `httpVersion: .http3Only` talking to the servers through their HTTP/3 front (the HTTP/3
    /// peer relaying to them, see Tests/Fixtures/h3_server.py), trusting its CA, with one loop: a kind only where
    /// the loaded libcurl has HTTP/3 (`CurlTransport.supportsHTTP3`, Debian's GnuTLS flavour). `.http3Only`, so that
    /// a call that fell back to TCP fails instead of passing over another protocol.
    case curlHTTP3

    /// Every kind the loaded libcurl allows, or those `SAPI_CONFORMANCE_KINDS` names (comma-separated).
    /// scripts/test.sh's pass on libcurl's GnuTLS flavour names `curlHTTP2,curlHTTP3`: FoundationNetworking loads the
    /// system's libcurl whichever one the test binary links, so `urlsession` there would repeat the release pass, and
    /// `curl` (HTTP/1.1 in clear) the passes on the OpenSSL flavour. A kind named that the library cannot run is
    /// kept, and its cases fail.
    static var allCases: [TransportKind] {
        let every: [TransportKind] = [.urlsession, .curl, .curlHTTP2, .curlHTTP3]
        guard let names = ProcessInfo.processInfo.environment["SAPI_CONFORMANCE_KINDS"]?.split(separator: ",")
        else { return every.filter { $0 != .curlHTTP3 || CurlTransport.supportsHTTP3 } }
        return every.filter { names.contains(Substring($0.rawValue)) }
    }

    /// The kinds that reach a server over TCP: all but `curlHTTP3`, which speaks QUIC only. The cases about
    /// HTTP/1.1's framing on a server of the test's own (the fault fixture's raw answers) and TLS over TCP take
    /// these; what QUIC's TLS does is in `HTTP3Tests`.
    static var overTCP: [TransportKind] { allCases.filter { $0 != .curlHTTP3 } }

    /// The scheme of the kind's servers: `https` through a front, which speaks TLS only.
    var scheme: String { throughFront ? "https" : "http" }

    /// Whether this kind reaches the servers through a front (nginx for HTTP/2, the HTTP/3 peer for HTTP/3) that
    /// answers for them what it received over HTTP/1.1: the fixture's malformed or cut answers reach the client as
    /// the front turned them (a 502, a reset stream), not as the fixture sent them.
    var throughFront: Bool { self == .curlHTTP2 || self == .curlHTTP3 }

    /// A new transport of this kind.
    func make() -> any RequestPerforming {
        switch self {
        case .urlsession: URLSessionTransport()
        case .curl, .curlHTTP2, .curlHTTP3: CurlTransport(configuration: curlConfiguration(.init()))
        }
    }

    /// A new transport of this kind that keeps at most `maxErrorBodySize` bytes of a download's error body.
    func make(maxErrorBodySize: Int) -> any RequestPerforming {
        switch self {
        case .urlsession: URLSessionTransport(configuration: .init(maxErrorBodySize: maxErrorBodySize))
        case .curl, .curlHTTP2, .curlHTTP3:
            CurlTransport(configuration: curlConfiguration(.init(maxErrorBodySize: maxErrorBodySize)))
        }
    }

    /// `configuration` as this kind changes it: for `curl`, two loops round-robin on the socket interface; for
    /// `curlHTTP2` and `curlHTTP3`, one loop, HTTP/2 or HTTP/3 only, and the fronts' CA.
    func curlConfiguration(_ configuration: CurlTransport.Configuration) -> CurlTransport.Configuration {
        var configuration = configuration
        configuration.loopCount = self == .curl ? 2 : 1
        configuration.socketInterface = self == .curl
        if self == .curl { configuration.loopAssignment = .roundRobin }
        guard throughFront else { return configuration }
        configuration.httpVersion = self == .curlHTTP2 ? .http2 : .http3Only
        // A missing variable leaves the CA unset: calls then fail with an untrusted certificate, and
        // the URL accessors below throw `MissingServer` first anyway.
        configuration.additionalTrustedCAFile = try? TestServers.h2CAFile()
        return configuration
    }

    /// The name its metrics give (`TransportMetrics.transport`).
    var transportName: String { self == .urlsession ? "urlsession" : "curl" }

    /// httpbin's base URL for this kind: its HTTP/2 or HTTP/3 front's for `curlHTTP2` and `curlHTTP3`.
    func httpbin() throws -> String {
        switch self {
        case .urlsession, .curl: try TestServers.httpbin()
        case .curlHTTP2: try TestServers.httpbinH2()
        case .curlHTTP3: try TestServers.httpbinH3()
        }
    }

    /// The fault fixture's base URL for this kind: its HTTP/2 or HTTP/3 front's for `curlHTTP2` and `curlHTTP3`.
    func fixture() throws -> String {
        switch self {
        case .urlsession, .curl: try TestServers.fixture()
        case .curlHTTP2: try TestServers.fixtureH2()
        case .curlHTTP3: try TestServers.fixtureH3()
        }
    }

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
