import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Calls to a server on a Unix-domain socket: curl connects through it, URLSession refuses before sending.
@Suite("Conformance: Unix-domain sockets")
struct UnixSocketConformanceTests {
    static func echo(_ result: ServerResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: result.data ?? Data()) as? [String: Any])
    }

    @Test("GET /get through the socket, with unixSocket(_:): the URL's host is the Host header")
    func socketOption() async throws {
        let manager = ServerAPIManager(transport: TransportKind.curl.make())
        let result = try await manager.send(
            ServerAPI(url: URL(string: "http://api.internal/get?x=1")!).unixSocket(try TestServers.httpbinSocket())
                .format(.data))
        #expect(result.status == 200)
        let echo = try Self.echo(result)
        #expect((echo["headers"] as? [String: String])?["Host"] == "api.internal")
        #expect((echo["args"] as? [String: String])?["x"] == "1")
    }

    @Test("a http+unix:// URL names the socket; Host is localhost")
    func unixURL() async throws {
        let url = try #require(UnixSocket.url(socketPath: try TestServers.httpbinSocket(), path: "/get?y=2"))
        #expect(url.absoluteString.hasPrefix("http+unix://%2F"))
        let manager = ServerAPIManager(transport: TransportKind.curl.make())
        let result = try await manager.send(ServerAPI(url: url).query("z", "3").format(.data))
        #expect(result.status == 200)
        let echo = try Self.echo(result)
        #expect((echo["headers"] as? [String: String])?["Host"] == "localhost")
        #expect((echo["args"] as? [String: String]) == ["y": "2", "z": "3"])
    }

    @Test("a missing socket is cannotConnect")
    func missing() async throws {
        let manager = ServerAPIManager(transport: TransportKind.curl.make())
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await manager.send(
                ServerAPI(url: URL(string: "http://localhost/get")!).unixSocket("/nonexistent/sapi-\(UUID()).sock"))
        }
        #expect(error?.kind == .cannotConnect)
    }

    @Test("URLSession refuses a socket with invalidRequest, before sending")
    func urlSessionRefuses() async throws {
        let manager = ServerAPIManager(transport: TransportKind.urlsession.make())
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await manager.send(
                ServerAPI(url: URL(string: "http://localhost/get")!).unixSocket(try TestServers.httpbinSocket()))
        }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("Unix-domain socket") == true)
    }
}
