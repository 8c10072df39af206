import Foundation
import HTTPTypes
import OpenAPIRuntime
import ServerAPIKit
import ServerAPIOpenAPI
import ServerAPITesting
import Synchronization
import Testing

/// How `ServerAPIClientTransport` hands an `HTTPBody` to the manager: streamed or collected.
@Suite struct RequestBodyModeTests {
    /// Records whether each attempt's body was streamed.
    final class BodyKinds: ServerAPIPlugin {
        private let kinds = Mutex<[Bool]>([])
        var streamed: [Bool] { kinds.withLock { $0 } }

        func willSend(_ request: TransportRequest, for api: ServerAPI) {
            kinds.withLock { $0.append(request.body.streamedBody != nil) }
        }
    }

    /// The mock, as a transport that does not send streamed request bodies (as URLSession's).
    struct CollectingOnly: RequestPerforming {
        var mock: MockTransport
        var name: String { "collecting" }
        var sendsStreamedRequestBodies: Bool { false }
        func perform(_ request: TransportRequest) async throws -> TransportResponse {
            try await mock.perform(request)
        }
    }

    private func send(
        _ body: HTTPBody, streamsBodies: Bool = true,
        configuration: ServerAPIClientTransport.Configuration = .init()
    ) async throws -> (streamed: [Bool], received: [String]) {
        let mock = MockTransport()
        mock.stub(.put, "/upload", .text("ok"))
        let kinds = BodyKinds()
        let manager =
            streamsBodies
            ? ServerAPIManager(transport: mock, plugins: [kinds])
            : ServerAPIManager(transport: CollectingOnly(mock: mock), plugins: [kinds])
        let transport = ServerAPIClientTransport(manager: manager, configuration: configuration)
        let (response, responseBody) = try await transport.send(
            HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/upload"), body: body,
            baseURL: try #require(URL(string: "https://api.example.com")), operationID: "upload")
        #expect(response.status == .ok)
        _ = try await String(collecting: try #require(responseBody), upTo: 1024)
        return (kinds.streamed, mock.requests.map(\.bodyText))
    }

    private func singlePass(_ text: String) -> HTTPBody {
        let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
        continuation.yield(ArraySlice(text.utf8))
        continuation.finish()
        return HTTPBody(stream, length: .unknown, iterationBehavior: .single)
    }

    @Test("a body read once is streamed; one that can be read again, of known length, is collected")
    func automatic() async throws {
        #expect(try await send(singlePass("once")) == ([true], ["once"]))
        #expect(try await send(HTTPBody("again")) == ([false], ["again"]))
    }

    @Test("for a transport that does not send streamed bodies (URLSession's), every body is collected")
    func urlSession() async throws {
        #expect(try await send(singlePass("once"), streamsBodies: false) == ([false], ["once"]))
    }

    @Test("the configuration forces streaming or collecting")
    func forced() async throws {
        #expect(
            try await send(HTTPBody("again"), configuration: .init(requestBodies: .streamed)) == ([true], ["again"]))
        #expect(
            try await send(singlePass("once"), configuration: .init(requestBodies: .collected)) == ([false], ["once"]))
    }

    @Test("a body larger than the collection limit is refused with invalidRequest")
    func tooLarge() async throws {
        let configuration = ServerAPIClientTransport.Configuration(
            requestBodies: .collected, maxCollectedRequestBodySize: 4)
        let error = await #expect(throws: ServerAPIError.self) {
            try await send(singlePass("too long"), configuration: configuration)
        }
        #expect(error?.kind == .invalidRequest)
        let known = await #expect(throws: ServerAPIError.self) {
            try await send(HTTPBody("too long"), configuration: configuration)
        }
        #expect(known?.message.contains("8 bytes") == true)
    }
}
