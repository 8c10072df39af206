import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Header injection through every entry point, on every transport: a line break or NUL never reaches the
/// wire as one. Header names and values are refused (ExchangeConformanceTests, and plugins through the
/// manager in PreparedRequestTests); a method is refused; a path and a query are percent-encoded.
@Suite("Injection conformance")
struct InjectionConformanceTests {
    static let breaks = ["a\r\nInjected: yes", "a\nInjected: yes", "a\u{0}b"]

    @Test(
        "a method with a line break, a NUL or a space is refused before anything is sent",
        arguments: TransportKind.allCases, ["GET\r\nInjected: yes", "GET\u{0}", "GET /x", ""])
    func method(kind: TransportKind, method: String) async throws {
        // Port 1 answers nothing: a transport that tried to send would fail to connect instead.
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(URL(string: "http://127.0.0.1:1/")!, method: HTTPMethod(rawValue: method))
        }
        #expect(error?.kind == .invalidRequest, "\(String(describing: error))")
    }

    @Test(
        "a path and a query value with line breaks arrive percent-encoded, and inject no header",
        arguments: TransportKind.allCases)
    func pathAndQuery(kind: TransportKind) async throws {
        let base = try kind.fixture("/headers")
        for value in Self.breaks {
            let api = ServerAPI(url: base).query("q", value).format(.data)
            let request = try api.transportRequest()
            #expect(!request.url.absoluteString.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 })
            let echo = try Echo(try await kind.make().perform(request))
            #expect(echo.query.contains("%0A") || echo.query.contains("%00"), "\(echo.query)")
            #expect(!echo.headers.contains { $0.first?.lowercased() == "injected" })
        }
        for value in Self.breaks {
            let api = ServerAPI(
                host: base.absoluteString.replacingOccurrences(of: "/headers", with: ""), path: "/x/" + value)
            let url = try api.transportRequest().url.absoluteString
            #expect(!url.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }, "\(url.debugDescription)")
        }
    }

    @Test("a plugin that sets a bad method is refused before the transport sends", arguments: TransportKind.allCases)
    func pluginMethod(kind: TransportKind) async throws {
        struct BadMethod: ServerAPIPlugin {
            func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
                var request = request
                request.method = HTTPMethod(rawValue: "GET\r\nInjected: yes")
                return request
            }
        }
        let manager = ServerAPIManager(transport: kind.make(), plugins: [BadMethod()])
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await manager.send(ServerAPI(url: URL(string: "http://127.0.0.1:1/")!))
        }
        #expect(error?.kind == .invalidRequest)
    }
}
