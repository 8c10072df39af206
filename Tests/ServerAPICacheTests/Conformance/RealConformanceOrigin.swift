import Foundation
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession

#if canImport(ServerAPICurl)
    import ServerAPICurl
#endif

/// A real transport the conformance cases run through, against the fault fixture's scripted origin
/// (Tests/Fixtures/cache_origin.py) on loopback.
enum RealTransportKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `CurlTransport` over HTTP/1.1, straight to the fixture.
    case curl
    /// `CurlTransport` over HTTP/2 through the servers' nginx front (TLS, lower-case field names, nginx's own
    /// answer when the origin drops the connection).
    case curlHTTP2
    /// `URLSessionTransport` over HTTP/1.1, straight to the fixture. There is no URLSession kind over HTTP/2:
    /// FoundationNetworking cannot trust the front's CA (ConformanceTests' `TransportKind` says why).
    case urlsession

    var description: String { rawValue }

    /// The transport of this kind, one per test process: the cases share its connections as a user's calls do.
    var transport: any RequestPerforming {
        switch self {
        case .curl: Self.curlTransport
        case .curlHTTP2: Self.curlHTTP2Transport
        case .urlsession: Self.urlSessionTransport
        }
    }

    private static let urlSessionTransport = URLSessionTransport()
    #if canImport(ServerAPICurl)
        private static let curlTransport = CurlTransport()
        private static let curlHTTP2Transport = CurlTransport(
            configuration: .init(httpVersion: .http2, additionalTrustedCAFile: try? TestServers.h2CAFile()))
    #else
        private static var curlTransport: any RequestPerforming { urlSessionTransport }
        private static var curlHTTP2Transport: any RequestPerforming { urlSessionTransport }
    #endif

    /// The fixture's base URL for this kind.
    /// - Throws: `MissingServer` when the test servers are not running.
    func fixture() throws -> String {
        self == .curlHTTP2 ? try TestServers.fixtureH2() : try TestServers.fixture()
    }
}

/// One run of a conformance case on the fixture's scripted origin: puts the case's script there, and reads back
/// the requests that reached it.
struct RealConformanceOrigin: Sendable {
    let testCase: ConformanceCase
    /// The fixture's base URL.
    let host: String
    /// The run's key: the origin keeps each run's script and requests apart.
    let key: String
    /// A manager without a cache on the same transport, to talk to the fixture itself.
    let control: ServerAPIManager

    init(_ testCase: ConformanceCase, kind: RealTransportKind) throws {
        self.testCase = testCase
        host = try kind.fixture()
        key = "\(testCase.id)-\(UUID().uuidString)"
        control = ServerAPIManager(transport: kind.transport)
    }

    /// The path of the case's URL.
    var path: String { "/cache/case/\(key)" }

    /// Puts the case's script on the origin.
    func install() async throws {
        let steps: [[String: Any]] = testCase.steps.enumerated().map { index, step in
            var headers: [[Any]] = []
            for (field, checked) in step.responseHeaders {
                var value: [String: Any]
                switch field.value {
                case .text(var text):
                    let lowered = field.name.lowercased()
                    if step.relativeLocations, lowered == "location" || lowered == "content-location" {
                        text = text.isEmpty ? host + path : "\(host + path)/\(text)"
                    }
                    value = ["text": text]
                case .date(let offset):
                    value = ["date": offset, "rfc850": step.rfc850Dates.contains(field.name.lowercased())]
                }
                headers.append([field.name, value, checked])
            }
            var script: [String: Any] = [
                "status": step.status ?? 200, "headers": headers, "id": testCase.id, "delay": step.originDelay,
                "disconnect": step.disconnect,
                "validated": step.outcome == .etagValidated || step.outcome == .lmValidated,
            ]
            if let body = step.responseBody { script["body"] = body }
            if index > 0 {
                let previous = ConformanceOrigin.scripted(testCase.steps[index - 1])
                script["previous"] = Dictionary(
                    previous.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            }
            return script
        }
        let body = try JSONSerialization.data(withJSONObject: ["steps": steps])
        let result = try await control.send(
            ServerAPI(host: host, path: "/cache/script").query("key", key).method(.put).body(.data(body))
                .format(.data))
        guard result.status == 200 else { throw OriginError(description: "the origin refused the script") }
    }

    /// Forgets the run on the origin.
    func remove() async {
        _ = try? await control.send(
            ServerAPI(host: host, path: "/cache/script").query("key", key).method(.delete).format(.data))
    }

    /// Every request that reached the origin in this run, in order.
    func received() async throws -> [ConformanceOrigin.Received] {
        let result = try await control.send(
            ServerAPI(host: host, path: "/cache/log").query("key", key).format(.data))
        guard let data = result.data,
            let records = try JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { throw OriginError(description: "the origin's log is not a JSON list") }
        return try records.map { record in
            guard let step = record["step"] as? Int, let method = record["method"] as? String,
                let headers = record["headers"] as? [[String]], let sent = record["sent"] as? [[String]]
            else { throw OriginError(description: "a request in the origin's log is not readable: \(record)") }
            var received: HTTPHeaders = [:]
            for pair in headers where pair.count == 2 { received.add(name: pair[0], value: pair[1]) }
            return ConformanceOrigin.Received(
                step: step, method: method, headers: received,
                sentHeaders: sent.filter { $0.count == 2 }.map { ($0[0], $0[1]) })
        }
    }

    struct OriginError: Error, CustomStringConvertible {
        var description: String
    }
}

extension ConformanceRunner {
    /// Runs `testCase` through `kind`'s transport and a fresh cache of `cacheKind`, against the fixture's
    /// scripted origin, in real time: a `pause` step waits `pause`, an origin's `delay=N` is N real seconds.
    static func run(
        _ testCase: ConformanceCase, through kind: RealTransportKind, on cacheKind: CacheKind
    ) async throws -> [ConformanceFailure] {
        let origin = try RealConformanceOrigin(testCase, kind: kind)
        try await origin.install()
        let failures: [ConformanceFailure]
        do {
            failures = try await run(testCase, origin: origin, transport: kind.transport, on: cacheKind)
        } catch {
            await origin.remove()
            throw error
        }
        await origin.remove()
        return failures
    }

    private static func run(
        _ testCase: ConformanceCase, origin: RealConformanceOrigin, transport: any RequestPerforming,
        on cacheKind: CacheKind
    ) async throws -> [ConformanceFailure] {
        try await cacheKind.with { cache async throws in
            var configuration = ServerAPIManager.Configuration()
            configuration.honorsHTTPCacheHeaders = true
            configuration.defaultCacheTTL = .zero
            let manager = ServerAPIManager(transport: transport, cache: cache, configuration: configuration)
            return try await run(
                testCase, manager: manager, host: origin.host, path: origin.path,
                begin: { _ in },
                received: { try await origin.received() },
                pause: { try await Task.sleep(for: pause) })
        }
    }
}
