import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession
import Testing

/// The transports' count of active transfers (a `package` API the soak run checks after each round):
/// it counts a call in flight and returns to 0 once calls have completed, failed or been cancelled
/// (on URLSession, with each call's timeout timer cancelled, not left scheduled until its deadline).
@Suite("Conformance: active transfers")
struct ActiveTransfersTests {
    /// A transport and its count of transfers still running, whatever its kind.
    struct Counted: Sendable {
        var manager: ServerAPIManager
        var active: @Sendable () async -> Int
    }

    static func counted(_ kind: TransportKind) -> Counted {
        switch kind {
        case .urlsession:
            let transport = URLSessionTransport()
            return Counted(manager: ServerAPIManager(transport: transport)) {
                let tasks = await transport.sessionTaskCount()
                return transport.activeTransfers + tasks
            }
        case .curl, .curlHTTP2, .curlHTTP3:
            let transport = CurlTransport(configuration: kind.curlConfiguration(.init()))
            return Counted(manager: ServerAPIManager(transport: transport)) { transport.activeTransferCount }
        }
    }

    @Test(
        "a call in flight is counted; completed, failed and cancelled calls leave none",
        arguments: [
            TransportKind.curl, .urlsession,
        ])
    func returnsToZero(kind: TransportKind) async throws {
        let counted = Self.counted(kind)
        let manager = counted.manager
        #expect(await counted.active() == 0)

        let hang = ServerAPI(url: try TestServers.fixture("/hang")).timeout(.seconds(30))
        let waiting = Task { try await manager.send(hang) }
        try await poll("the hanging call to be counted") { await counted.active() > 0 }

        _ = try await manager.send(ServerAPI(url: try TestServers.fixture("/health")).format(.data))
        let refused = await #expect(throws: ServerAPIError.self) {
            _ = try await manager.send(ServerAPI(url: URL(string: "http://127.0.0.1:\(try closedPort())/")!))
        }
        #expect(refused?.kind == .cannotConnect)
        let dropped = await #expect(throws: ServerAPIError.self) {
            _ = try await manager.send(ServerAPI(url: try TestServers.fixture("/close-mid-body?size=2000&after=1000")))
        }
        #expect(dropped?.kind == .network)
        #expect(manager.cancel(id: hang.id).count == 1)
        let ending = await waiting.result
        #expect((ending.error as? ServerAPIError)?.kind == .cancelled)

        try await poll("no active transfers") { await counted.active() == 0 }
    }
}

extension Result {
    fileprivate var error: Failure? { if case .failure(let error) = self { error } else { nil } }
}
