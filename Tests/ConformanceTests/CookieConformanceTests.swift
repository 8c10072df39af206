import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Cookies through the manager's jar: the same with every transport, redirects included.
@Suite("Conformance: cookies")
struct CookieConformanceTests {
    static func manager(_ kind: TransportKind, _ storage: any CookieStorage) -> ServerAPIManager {
        ServerAPIManager(transport: kind.make(), configuration: .init(cookies: storage))
    }

    /// httpbin's `/cookies` answer: the cookies it received.
    static func received(_ manager: ServerAPIManager, _ kind: TransportKind) async throws -> [String: String] {
        let result = try await manager.send(ServerAPI(url: try kind.httpbin("/cookies")).format(.data))
        let object = try JSONSerialization.jsonObject(with: result.data ?? Data()) as? [String: Any]
        return object?["cookies"] as? [String: String] ?? [:]
    }

    @Test("a 302 that sets a cookie: the redirected request and later calls send it", arguments: TransportKind.allCases)
    func setByRedirect(kind: TransportKind) async throws {
        let storage = MemoryCookieStorage()
        let manager = Self.manager(kind, storage)
        let result = try await manager.send(
            ServerAPI(url: try kind.httpbin("/cookies/set?flavour=oat&size=2")).format(.data))
        #expect(result.status == 200)
        #expect(result.url.path == "/cookies")
        let shown = try JSONSerialization.jsonObject(with: result.data ?? Data()) as? [String: Any]
        #expect(shown?["cookies"] as? [String: String] == ["flavour": "oat", "size": "2"])
        #expect(Set(storage.allCookies.map(\.name)) == ["flavour", "size"])
        #expect(try await Self.received(manager, kind) == ["flavour": "oat", "size": "2"])
    }

    @Test("a deleted cookie is no longer sent", arguments: TransportKind.allCases)
    func deleted(kind: TransportKind) async throws {
        let storage = MemoryCookieStorage()
        let manager = Self.manager(kind, storage)
        _ = try await manager.send(ServerAPI(url: try kind.httpbin("/cookies/set?a=1&b=2")))
        _ = try await manager.send(ServerAPI(url: try kind.httpbin("/cookies/delete?a")))
        #expect(try await Self.received(manager, kind) == ["b": "2"])
        #expect(storage.allCookies.map(\.name) == ["b"])
    }

    @Test("a caller's Cookie header goes with the jar's", arguments: TransportKind.allCases)
    func callerHeader(kind: TransportKind) async throws {
        let manager = Self.manager(kind, MemoryCookieStorage())
        _ = try await manager.send(ServerAPI(url: try kind.httpbin("/cookies/set?jar=1")))
        let result = try await manager.send(
            ServerAPI(url: try kind.httpbin("/cookies")).header("Cookie", "own=2").format(.data))
        let shown = try JSONSerialization.jsonObject(with: result.data ?? Data()) as? [String: Any]
        #expect(shown?["cookies"] as? [String: String] == ["own": "2", "jar": "1"])
    }

    @Test("cookies do not follow a redirect to another host", arguments: TransportKind.allCases)
    func otherHost(kind: TransportKind) async throws {
        let manager = Self.manager(kind, MemoryCookieStorage())
        _ = try await manager.send(ServerAPI(url: try kind.httpbin("/cookies/set?secret=1")))
        // The same server under another name: 127.0.0.1's cookies are not localhost's.
        var other = URLComponents(url: try kind.httpbin("/cookies"), resolvingAgainstBaseURL: false)!
        other.host = "localhost"
        let target = other.url!.absoluteString
        let result = try await manager.send(
            ServerAPI(url: try kind.httpbin("/redirect-to"))
                .query("url", target).format(.data))
        #expect(result.url.host == "localhost")
        let shown = try JSONSerialization.jsonObject(with: result.data ?? Data()) as? [String: Any]
        #expect(shown?["cookies"] as? [String: String] == [:])
    }

    @Test("without a jar nothing is kept", arguments: TransportKind.allCases)
    func noJar(kind: TransportKind) async throws {
        let manager = ServerAPIManager(transport: kind.make())
        _ = try await manager.send(ServerAPI(url: try kind.httpbin("/cookies/set?a=1")))
        #expect(try await Self.received(manager, kind) == [:])
    }
}
