import Foundation
import HTTPTypes
import OpenAPIRuntime
import ServerAPIKit
import ServerAPIOpenAPI
import Synchronization
import Testing

/// A client that swift-openapi-generator wrote from openapi.yaml calls the local httpbin through
/// `ServerAPIClientTransport`, on every backend.
@Suite struct GeneratedClientTests {
    private func client(_ backend: Backend, plugins: [any ServerAPIPlugin] = []) throws -> (Client, ServerAPIManager) {
        let manager = backend.manager(plugins: plugins)
        return (
            Client(serverURL: try TestServers.httpbin(), transport: ServerAPIClientTransport(manager: manager)), manager
        )
    }

    @Test("a JSON body goes out and a JSON body comes back", arguments: Backend.allCases)
    func json(backend: Backend) async throws {
        let (client, _) = try client(backend)
        let echo = try await client.echoJSON(body: .json(.init(message: "héllo", count: 3))).ok.body.json
        #expect(echo.json == .init(message: "héllo", count: 3))
        #expect(echo.method == "POST")
        #expect(echo.headers.additionalProperties["Content-Type"] == "application/json; charset=utf-8")
    }

    @Test("a query item and a header reach the server", arguments: Backend.allCases)
    func queryAndHeader(backend: Backend) async throws {
        let (client, _) = try client(backend)
        let echo = try await client.getWithQuery(query: .init(name: "a b&c"), headers: .init(xDemo: "on")).ok.body.json
        #expect(echo.args?.additionalProperties["name"] == "a b&c")
        #expect(echo.headers.additionalProperties["X-Demo"] == "on")
    }

    @Test("a path parameter picks the status; an error status is the client's to handle", arguments: Backend.allCases)
    func statuses(backend: Backend) async throws {
        let (client, _) = try client(backend)
        _ = try await client.getStatus(path: .init(code: 200)).ok
        guard case .default(let status, _) = try await client.getStatus(path: .init(code: 418)) else {
            Issue.record("418 is not the default response")
            return
        }
        #expect(status == 418)
        guard case .default(let serverError, _) = try await client.getStatus(path: .init(code: 503)) else {
            Issue.record("503 is not the default response")
            return
        }
        #expect(serverError == 503)
    }

    @Test("a response body streams: read as it arrives, once", arguments: Backend.allCases)
    func streamedResponse(backend: Backend) async throws {
        let (client, manager) = try client(backend)
        let count = 100_000  // httpbin streams at most 100 KiB
        let body = try await client.streamBytes(path: .init(count: count), query: .init(chunkSize: 4096, seed: 7))
            .ok.body.binary
        #expect(body.iterationBehavior == .single)
        var received = 0
        var chunks = 0
        for try await chunk in body {
            received += chunk.count
            chunks += 1
        }
        #expect(received == count)
        #expect(chunks >= 1)
        #expect(await poll { manager.inFlight.isEmpty })
    }

    @Test("a request body streams: an async sequence of unknown length, read once", arguments: Backend.allCases)
    func streamedRequest(backend: Backend) async throws {
        let (client, _) = try client(backend)
        let parts = (0..<200).map { "line \($0) of a streamed upload\n" }
        let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
        let producer = Task {
            for part in parts { continuation.yield(ArraySlice(part.utf8)) }
            continuation.finish()
        }
        defer { producer.cancel() }
        let body = HTTPBody(stream, length: .unknown, iterationBehavior: .single)
        // curl sends it chunked as it is produced; URLSession cannot stream a request body, so the transport
        // collects it first (up to Configuration.maxCollectedRequestBodySize).
        let echo = try await client.upload(body: .binary(body)).ok.body.json
        #expect(echo.data == parts.joined())
        #expect(echo.headers.additionalProperties["Content-Type"] == "application/octet-stream")
    }

    @Test("a request body of known length is sent with Content-Length", arguments: Backend.allCases)
    func knownLengthRequest(backend: Backend) async throws {
        let (client, _) = try client(backend)
        let text = String(repeating: "0123456789", count: 1000)
        let echo = try await client.upload(body: .binary(HTTPBody(text))).ok.body.json
        #expect(echo.data == text)
        #expect(echo.headers.additionalProperties["Content-Length"] == "\(text.utf8.count)")
    }

    @Test("cancel(tag:) with an operation's id cancels that operation's calls", arguments: Backend.allCases)
    func cancelByOperationID(backend: Backend) async throws {
        let (client, manager) = try client(backend)
        let call = Task { try await client.delayed(path: .init(seconds: 5)) }
        #expect(await poll { manager.inFlight.contains { $0.tag == "delayed" } })
        #expect(manager.cancel(tag: "delayed").count == 1)
        let error = await #expect(throws: ClientError.self) { try await call.value }
        #expect((error?.underlyingError as? ServerAPIError)?.kind == .cancelled)
        #expect(error?.operationID == "delayed")
    }

    @Test("the manager's plugins see each operation, tagged with its id", arguments: Backend.allCases)
    func plugins(backend: Backend) async throws {
        let seen = SeenCalls()
        let (client, _) = try client(backend, plugins: [seen])
        _ = try await client.getWithQuery(query: .init(name: "x")).ok
        _ = try await client.getStatus(path: .init(code: 404))
        #expect(await poll { seen.completed.count == 2 })
        #expect(seen.completed.map(\.tag) == ["getWithQuery", "getStatus"])
        #expect(seen.completed.map(\.method) == [.get, .get])
        #expect(seen.statuses == [200, 404])
    }

    @Test("a connection failure reaches the generated client as a typed ServerAPIError", arguments: Backend.allCases)
    func connectionFailure(backend: Backend) async throws {
        let manager = backend.manager()
        let client = Client(
            serverURL: try unusedLoopbackURL(),
            transport: ServerAPIClientTransport(manager: manager))
        let error = await #expect(throws: ClientError.self) { try await client.getStatus(path: .init(code: 200)) }
        #expect((error?.underlyingError as? ServerAPIError)?.kind == .cannotConnect)
    }
}

/// Records what the manager's plugin hooks saw.
final class SeenCalls: ServerAPIPlugin {
    struct Call: Sendable {
        var tag: String?
        var method: HTTPMethod
    }

    private let state = Mutex<(completed: [Call], statuses: [Int])>(([], []))

    var completed: [Call] { state.withLock { $0.completed } }
    var statuses: [Int] { state.withLock { $0.statuses } }

    func didReceive(
        _ result: Result<TransportResponse, ServerAPIError>, for request: TransportRequest, api: ServerAPI
    ) {
        if case .success(let response) = result { state.withLock { $0.statuses.append(response.status) } }
    }

    func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
        state.withLock { $0.completed.append(Call(tag: api.tag, method: api.method)) }
    }
}
