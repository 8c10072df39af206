import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// The parts of the contract `MockTransport` keeps too, checked on every transport and the mock.
@Suite("Conformance: shared with MockTransport")
struct MockJoinedConformanceTests {
    @Test("an HTTP error status is a response", arguments: ContractTransport.allCases, [200, 404, 500])
    func status(transport: ContractTransport, status: Int) async throws {
        let response = try await transport.make().send(URL(string: "\(try transport.base())/status/\(status)")!)
        #expect(response.status == status)
    }

    @Test("a download of an error status writes no file", arguments: ContractTransport.allCases)
    func errorDownload(transport: ContractTransport) async throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("never.bin"))
        let response = try await transport.make().send(
            URL(string: "\(try transport.base(server: .fixture))/resource/error/404")!
        ) { $0.download = target }
        #expect(response.status == 404)
        #expect(!scratch.exists(target.destination))
        #expect(!scratch.exists(target.partialURL))
    }

    @Test("the timeout ends a call with timedOut", arguments: ContractTransport.allCases)
    func timeout(transport: ContractTransport) async throws {
        let client = transport.make()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await client.send(URL(string: "\(try transport.base())/delay/10")!, timeout: .milliseconds(500))
        }
        #expect(error?.kind == .timedOut)
    }

    @Test("a body over the size limit is responseTooLarge", arguments: ContractTransport.allCases)
    func tooLarge(transport: ContractTransport) async throws {
        let client = transport.make()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await client.send(URL(string: "\(try transport.base(server: .fixture))/resource?size=5000")!) {
                $0.maxResponseSize = 100
            }
        }
        #expect(error?.kind == .responseTooLarge)
    }

    @Test(
        "a call whose task is already cancelled is cancelled before it is sent", arguments: ContractTransport.allCases)
    func cancelledBeforeStart(transport: ContractTransport) async throws {
        let client = transport.make()
        let url = URL(string: "\(try transport.base())/status/200")!
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(url)
        }
        let error = await #expect(throws: ServerAPIError.self) { _ = try await task.value }
        #expect(error?.kind == .cancelled)
    }
}
