import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a hostile server or a careless URL must not get past, on every transport: a body that never ends, a
/// URL's escapes, a caller's `Host` on a redirect, a link planted where a download's part file goes.
@Suite("Conformance: hostile servers and careless URLs")
struct HostileServerConformanceTests {
    /// The transports that talk to the fixture directly (the HTTP/2 front serves one site name only).
    static let kinds: [TransportKind] = [.urlsession, .curl]

    /// The fixture's endless body for `kind`, past `limit` bytes. FoundationNetworking cannot pause a transfer: it
    /// reads on until its task's cancellation is processed, and after this case with a body that never ended,
    /// every URLSession of the test process once stalled for minutes. For URLSession the body ends 16 MiB past
    /// the limit: the case tests the transport's limit, which still stops the call in the middle of the body.
    static func endless(_ kind: TransportKind, past limit: Int64) throws -> URL {
        try kind.fixture(kind == .urlsession ? "/endless?stop_after=\(limit + (16 << 20))" : "/endless")
    }

    @Test("a body that never ends stops at the default limit of a body held in memory", arguments: kinds)
    func endlessBodyDefault(kind: TransportKind) async throws {
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(
                try Self.endless(kind, past: ResponseSizeRule.defaultMemoryLimit), timeout: .seconds(60))
        }
        #expect(error?.kind == .responseTooLarge)
        #expect(error?.message.contains("\(ResponseSizeRule.defaultMemoryLimit)") == true)
    }

    @Test("through a manager, a body that never ends is responseTooLarge at the call's limit", arguments: kinds)
    func endlessBodyThroughManager(kind: TransportKind) async throws {
        let manager = ServerAPIManager(transport: kind.make())
        let error = await #expect(throws: ServerAPIError.self) {
            let api = ServerAPI(url: try Self.endless(kind, past: 1 << 20)).format(.data).maxResponseSize(1 << 20)
            _ = try await manager.send(api.timeout(.seconds(60)))
        }
        #expect(error?.kind == .responseTooLarge)
        #expect(error?.message == "the response body is more than the limit of 1048576 bytes")
    }

    @Test("a URL's escapes reach the server as written, with only what may not appear encoded", arguments: kinds)
    func escapesSentAsWritten(kind: TransportKind) async throws {
        let base = try kind.fixture()
        let api = try #require(ServerAPI(urlString: base + "/anything/a%2Fb c?x=%20 y"))
        let response = try await ServerAPIManager(transport: kind.make()).send(api.format(.data))
        let echo = try JSONDecoder().decode(Echo.self, from: response.data ?? Data())
        #expect(echo.path == "/anything/a%2Fb%20c")
        #expect(echo.query == "x=%20%20y")
    }

    @Test("a caller's Host header is not sent to another host on a redirect", arguments: kinds)
    func hostStaysWithItsOrigin(kind: TransportKind) async throws {
        let transport = kind.make()
        let target = try kind.fixture("/headers")
        var components = try #require(URLComponents(url: target, resolvingAgainstBaseURL: false))
        components.host = "localhost"
        let other = try #require(components.url).absoluteString
        let query = other.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let port = target.port ?? 80
        let response = try await transport.send(
            try kind.fixture("/redirect-to?status=302&url=\(query)"), headers: ["Host": "127.0.0.1:\(port)"])
        #expect(response.status == 200)
        #expect(response.url.host == "localhost")
        let echo = try Echo(response)
        #expect(echo.values("Host") == ["localhost:\(port)"])

        // On the same origin the caller's Host goes on.
        let same = try await transport.send(
            try kind.fixture("/redirect-chain/1"), headers: ["Host": "127.0.0.1:\(port)"])
        #expect(try Echo(same).values("Host") == ["127.0.0.1:\(port)"])
    }

    @Test("a download never writes through a link planted where its part file goes", arguments: kinds)
    func downloadRefusesPlantedLink(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let victim = scratch.file("victim.txt")
        try Data("precious".utf8).write(to: victim)
        let destination = scratch.file("out.bin")
        let part = DownloadTarget(destination: destination).partialURL
        try FileManager.default.createSymbolicLink(at: part, withDestinationURL: victim)
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(try kind.fixture("/resource?size=1000")) {
                $0.download = DownloadTarget(destination: destination)
            }
        }
        #expect(error?.kind == .fileSystem)
        #expect(error?.message.contains(part.path) == true)
        #expect(try Data(contentsOf: victim) == Data("precious".utf8))
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}
