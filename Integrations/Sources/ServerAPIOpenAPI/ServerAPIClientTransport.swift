public import Foundation
public import HTTPTypes
public import OpenAPIRuntime
public import ServerAPIKit

/// A swift-openapi-runtime `ClientTransport` that sends every operation of a generated client through a
/// `ServerAPIManager`: its transport (curl, URLSession or a mock), retries, plugins, in-flight registry.
///
/// ```swift
/// let manager = ServerAPIManager(transport: CurlTransport(), plugins: [LoggingPlugin()])
/// let client = Client(serverURL: try Servers.Server1.url(), transport: ServerAPIClientTransport(manager: manager))
/// let user = try await client.getUser(path: .init(id: 42)).ok.body.json
/// manager.cancel(tag: "getUser")   // the operation's id is the call's tag
/// ```
/// Bodies stream both ways. A response body is an `HTTPBody` read once (`iterationBehavior: .single`) as the
/// transport delivers it, with `length` known from `Content-Length` (unknown when the body is content-coded).
/// A request body that can be read more than once and whose length is known up to
/// `Configuration.maxCollectedRequestBodySize` is collected, so that a retry or a 307/308 redirect can send it
/// again; any other is streamed as it is read (`RequestBody.stream`), which a retry cannot resend.
///
/// The call stays in the manager's `inFlight` list, and its plugins' `didComplete` waits, until the response body
/// has ended (the transport delivered all of it, or it was cancelled); a body dropped before it all arrived (an
/// operation whose output ignores it) ends the call as `cancelled`. An empty body (`Content-Length: 0`, `HEAD`,
/// 204, 304) is read at once, so such calls end as they return.
///
/// - Important: `URLSessionTransport` cannot send a streamed request body; with `requestBodies: .automatic` the
///   transport collects every request body for it, up to `maxCollectedRequestBodySize`, and refuses a larger one
///   with `invalidRequest`.
public struct ServerAPIClientTransport: ClientTransport {
    /// How request bodies reach the manager's transport.
    public enum RequestBodyMode: Sendable, Hashable {
        /// Collect bodies that can be read again and whose length is known and small enough; stream the others
        /// (collect them all, up to the limit, for a transport that does not send streamed bodies, such as URLSession's).
        case automatic
        /// Always stream: nothing is held in memory, and a call with a body is not retried once sent.
        case streamed
        /// Always collect, up to `maxCollectedRequestBodySize`.
        case collected
    }

    /// How the transport turns operations into calls.
    public struct Configuration: Sendable {
        /// How request bodies are sent.
        public var requestBodies: RequestBodyMode
        /// The largest request body collected in memory, in bytes.
        public var maxCollectedRequestBodySize: Int
        /// Adjusts each call before it is sent (timeout, retries, headers), given the operation's id.
        public var adjust: @Sendable (ServerAPI, _ operationID: String) -> ServerAPI

        /// Creates a configuration.
        /// - Parameters:
        ///   - requestBodies: How request bodies are sent; `.automatic` by default.
        ///   - maxCollectedRequestBodySize: The largest request body collected in memory; 4 MiB by default.
        ///   - adjust: Adjusts each call before it is sent; unchanged by default.
        public init(
            requestBodies: RequestBodyMode = .automatic,
            maxCollectedRequestBodySize: Int = 4 << 20,
            adjust: @escaping @Sendable (ServerAPI, _ operationID: String) -> ServerAPI = { api, _ in api }
        ) {
            self.requestBodies = requestBodies
            self.maxCollectedRequestBodySize = maxCollectedRequestBodySize
            self.adjust = adjust
        }
    }

    /// The manager every operation is sent through.
    public let manager: ServerAPIManager
    /// How operations become calls.
    public let configuration: Configuration

    /// Creates a transport that sends through `manager`.
    /// - Parameters:
    ///   - manager: The manager; its transport, plugins, retries and registry apply to every operation.
    ///   - configuration: How operations become calls.
    public init(manager: ServerAPIManager, configuration: Configuration = Configuration()) {
        self.manager = manager
        self.configuration = configuration
    }

    /// Sends one operation and returns as soon as the response head has arrived, with the body to read.
    /// - Throws: `ServerAPIError` (the generated client wraps it in `ClientError`); any status is a response.
    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let api = configuration.adjust(
            try await makeCall(request, body: body, baseURL: baseURL, operationID: operationID), operationID)
        let response = try await manager.stream(api)
        var fields = HTTPFields()
        for field in response.headers {
            guard let name = HTTPField.Name(field.name) else { continue }
            fields.append(HTTPField(name: name, value: field.value))
        }
        let head = HTTPResponse(status: .init(code: response.status), headerFields: fields)
        if request.method == .head || response.status == 204 || response.status == 304
            || (100..<200).contains(response.status)
        {
            // No body by definition: end the call now rather than leave it in flight for a reader that never comes.
            _ = try await response.body.collect(upTo: 0)
            return (head, nil)
        }
        let length: HTTPBody.Length
        if response.headers["Content-Encoding"] == nil, let value = response.headers["Content-Length"],
            let count = Int64(value)
        {
            length = .known(count)
        } else {
            length = .unknown
        }
        if length == .known(0) {
            // Read the empty body now, so the call ends as a success even if the client never looks at it.
            _ = try await response.body.collect(upTo: 0)
            return (head, HTTPBody())
        }
        return (head, HTTPBody(response.body, length: length, iterationBehavior: .single))
    }

    /// The call an operation's request describes: URL, method, headers, body, and the operation id as its tag.
    func makeCall(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws
        -> ServerAPI
    {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
            let target = URLComponents(string: request.path ?? "")
        else {
            throw ServerAPIError(
                .invalidRequest, "the operation's path \(request.path ?? "(none)") cannot be added to \(baseURL)")
        }
        let basePath =
            components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        components.percentEncodedPath = basePath + target.percentEncodedPath
        components.percentEncodedQuery = target.percentEncodedQuery
        guard let url = components.url else {
            throw ServerAPIError(.invalidRequest, "the operation's URL cannot be made from \(baseURL)")
        }
        var api = ServerAPI(url: url, method: HTTPMethod(rawValue: request.method.rawValue))
        var headers = HTTPHeaders()
        for field in request.headerFields where field.name != .contentLength {
            headers.add(name: field.name.rawName, value: field.value)
        }
        api.headers = headers
        api.tag = operationID
        // The generated client decides what each status means.
        api.acceptableStatus = .any
        if let body {
            api.body = try await requestBody(body, contentType: request.headerFields[.contentType])
        }
        return api
    }

    private func requestBody(_ body: HTTPBody, contentType: String?) async throws -> RequestBody {
        let length: Int64? = if case .known(let count) = body.length { count } else { nil }
        let collects: Bool
        switch configuration.requestBodies {
        case .streamed: collects = false
        case .collected: collects = true
        case .automatic:
            collects =
                !manager.transport.sendsStreamedRequestBodies
                || (body.iterationBehavior == .multiple
                    && length.map { $0 <= configuration.maxCollectedRequestBodySize }
                        == true)
        }
        guard collects else {
            return .stream(RequestBodyStream(DataChunks(body: body), length: length), contentType: contentType)
        }
        if let length, length > configuration.maxCollectedRequestBodySize {
            throw Self.tooLarge(length, limit: configuration.maxCollectedRequestBodySize)
        }
        let bytes: [UInt8]
        do {
            bytes = try await [UInt8](collecting: body, upTo: configuration.maxCollectedRequestBodySize)
        } catch let error as ServerAPIError {
            throw error
        } catch {
            throw Self.tooLarge(length, limit: configuration.maxCollectedRequestBodySize, underlying: error)
        }
        return .data(Data(bytes), contentType: contentType)
    }

    private static func tooLarge(_ length: Int64?, limit: Int, underlying: (any Error)? = nil) -> ServerAPIError {
        let size = length.map { "\($0) bytes" } ?? "the request body"
        return ServerAPIError(
            .invalidRequest,
            "\(size) cannot be collected in memory (limit \(limit) bytes), and this transport cannot stream a "
                + "request body: raise Configuration.maxCollectedRequestBodySize or use the curl transport",
            underlying: underlying)
    }
}

/// An `HTTPBody`'s chunks as `Data`, for a streamed `RequestBody`.
struct DataChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let body: HTTPBody

    func makeAsyncIterator() -> Iterator { Iterator(base: body.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTPBody.Iterator

        mutating func next() async throws -> Data? {
            guard let chunk = try await base.next() else { return nil }
            return Data(chunk)
        }
    }
}
