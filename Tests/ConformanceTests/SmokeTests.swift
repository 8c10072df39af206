import Foundation
import ServerAPIKit
import Testing

@Suite("Smoke")
struct SmokeTests {
    @Test("GET", arguments: TransportKind.allCases)
    func get(kind: TransportKind) async throws {
        let transport = kind.make()
        let response = try await transport.send(try TestServers.httpbin("/get?a=1"))
        #expect(response.status == 200)
        print(String(decoding: response.data ?? Data(), as: UTF8.self))
        print(response.headers)
        print(response.metrics)
    }
}
