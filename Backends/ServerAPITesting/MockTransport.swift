import Foundation
import ServerAPIKit

/// A transport for unit tests: answers from stubs, records every request, never touches the network.
///
/// ```swift
/// let mock = MockTransport()
/// mock.stub(.get, "/users/1", .json(#"{"id":1,"name":"Ada"}"#))
/// let manager = ServerAPIManager(transport: mock)
/// _ = try await manager.send(ServerAPI(host: "https://api.test", path: "/users/1"))
/// #expect(mock.requests.first?.url.path == "/users/1")
/// ```
/// Stubs match by method and path; stubs for the same route answer in turn, the last one
/// repeating (so `[.status(503), .json("{}")]` fails once, then succeeds). A request with no
/// stub gets a 404. Delays honour task cancellation (`cancelled`) and the request's timeout
/// (`timedOut`), as a real transport would.
public final class MockTransport: RequestPerforming {
    /// Answers a request; return `nil` to fall through to route stubs.
    public typealias Handler = @Sendable (TransportRequest) async throws -> MockStub?

    private struct Route {
        var method: HTTPMethod?
        var path: String
        var stubs: [MockStub]
        var served = 0
    }

    private struct State {
        var routes: [Route] = []
        var handler: Handler?
        var requests: [RecordedRequest] = []
        var recording = true
    }

    private let state = Locked(State())

    /// The transport's name in metrics.
    public let name: String

    /// `true`: a delay or a handler ends with `cancelled` when the call's token fires.
    public var observesCancellationToken: Bool { true }

    /// Creates a mock with no stubs.
    /// - Parameter name: The name reported in metrics.
    public init(name: String = "mock") { self.name = name }

    /// Answers `method` + `path` with `stubs`, in turn, the last one repeating.
    /// - Parameters:
    ///   - method: The method to match; `nil` matches any.
    ///   - path: The URL path to match, exactly (no query).
    ///   - stubs: The answers.
    public func stub(_ method: HTTPMethod?, _ path: String, _ stubs: MockStub...) {
        state.withLock { $0.routes.append(Route(method: method, path: path, stubs: stubs)) }
    }

    /// Answers every request whose route has no stub with a closure.
    public func stub(handler: @escaping Handler) { state.withLock { $0.handler = handler } }

    /// Removes every stub and recorded request.
    public func reset() { state.withLock { $0 = State() } }

    /// Turns request recording on or off (off for benchmarks).
    public func setRecording(_ on: Bool) { state.withLock { $0.recording = on } }

    /// Every request sent so far, in order.
    public var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// How many requests were sent so far.
    public var requestCount: Int { state.withLock { $0.requests.count } }

    public func perform(_ request: TransportRequest) async throws -> TransportResponse {
        let start = ContinuousClock.now
        if request.isCancelled { throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url) }
        let (stub, handler) = try state.withLock { state throws(ServerAPIError) -> (MockStub?, Handler?) in
            if state.recording { state.requests.append(try RecordedRequest(request)) }
            let path = request.url.path
            if let index = state.routes.lastIndex(where: {
                $0.path == path && ($0.method == nil || $0.method == request.method)
            }) {
                let route = state.routes[index]
                state.routes[index].served += 1
                return (route.stubs[min(route.served, route.stubs.count - 1)], nil)
            }
            return (nil, state.handler)
        }
        var answer = stub
        if answer == nil, let handler {
            do {
                answer = try await Self.cancellable(request) { try await handler(request) }
            } catch {
                throw ServerAPIError.wrap(error).with(requestID: request.id, url: request.url)
            }
        }
        let chosen = answer ?? .text("no stub for \(request.method) \(request.url.path)", status: 404)
        if chosen.delay > .zero {
            let wait = min(chosen.delay, request.timeout)
            do {
                try await Self.cancellable(request) { try await Task.sleep(for: wait) }
            } catch {
                throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url)
            }
            if chosen.delay > request.timeout {
                throw ServerAPIError.timedOut(after: request.timeout).with(requestID: request.id, url: request.url)
            }
        }
        if request.isCancelled { throw ServerAPIError.cancelled().with(requestID: request.id, url: request.url) }
        switch chosen.outcome {
        case .failure(let error):
            throw error.with(requestID: request.id, url: request.url)
        case .response(let status, let headers, let body):
            if let tooLarge = ResponseSizeRule.check(
                received: Int64(body.count), status: status, limit: request.maxResponseSize)
            {
                throw tooLarge.with(requestID: request.id, url: request.url)
            }
            let sent = (try? request.body.contentLength()) ?? 0
            if sent > 0 { request.progress?(TransferProgress(direction: .upload, completed: sent, total: sent)) }
            request.progress?(
                TransferProgress(direction: .download, completed: Int64(body.count), total: Int64(body.count)))
            var responseBody = ResponseBody.data(body)
            if let download = request.download, (200..<300).contains(status) {
                responseBody = try Self.write(body, to: download, request: request)
            }
            return TransportResponse(
                status: status, headers: headers, body: responseBody, url: request.url,
                metrics: TransportMetrics(
                    transport: name, total: ContinuousClock.now - start, bytesSent: sent,
                    bytesReceived: Int64(body.count), reusedConnection: false))
        }
    }

    /// Runs a stub's wait or a handler; in a task of its own when the call has a token, so that the token
    /// (the manager's registry) ends what it awaits, as the caller's task would.
    private static func cancellable<T: Sendable>(
        _ request: TransportRequest, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let cancellation = request.cancellation else { return try await work() }
        return try await cancellation.run(work)
    }

    /// Writes a stubbed body to a download target as a real transport would: via the partial file.
    private static func write(_ body: Data, to target: DownloadTarget, request: TransportRequest) throws
        -> ResponseBody
    {
        do {
            let manager = FileManager.default
            try? manager.removeItem(at: target.partialURL)
            try body.write(to: target.partialURL)
            if manager.fileExists(atPath: target.destination.path) { try manager.removeItem(at: target.destination) }
            try manager.moveItem(at: target.partialURL, to: target.destination)
            return .file(target.destination, bytes: Int64(body.count))
        } catch {
            throw ServerAPIError(
                .fileSystem, "cannot write the download to \(target.destination.path)", requestID: request.id,
                url: request.url, underlying: error)
        }
    }
}

/// A request as `MockTransport` received it, with its body bytes read out.
public struct RecordedRequest: Sendable, Hashable {
    /// The id of the call.
    public var id: RequestID
    /// The URL.
    public var url: URL
    /// The method.
    public var method: HTTPMethod
    /// The headers, exactly as the transport would send them.
    public var headers: HTTPHeaders
    /// The body bytes (files read in full: this is for tests).
    public var body: Data
    /// The attempt number.
    public var attempt: Int

    init(_ request: TransportRequest) throws(ServerAPIError) {
        id = request.id
        url = request.url
        method = request.method
        headers = request.headers
        attempt = request.attempt
        if let bytes = request.body.inMemoryBytes {
            body = bytes
        } else {
            let reader = try request.body.makeReader()
            var data = Data()
            while true {
                let chunk = try reader.read(maxLength: 64 * 1024)
                if chunk.isEmpty { break }
                data.append(chunk)
            }
            body = data
        }
    }

    /// The query items, decoded.
    public var queryItems: [URLQueryItem] {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
