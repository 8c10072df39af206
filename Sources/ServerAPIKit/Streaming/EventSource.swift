#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A server-sent event stream that reconnects, as a browser's `EventSource` does: what
/// `ServerAPIManager.eventSource(_:configuration:)` returns.
///
/// ```swift
/// for try await event in manager.eventSource(ServerAPI(host: "https://api.example.com", path: "/prices")) {
///     print(event.type, event.data)
/// }
/// ```
/// Each connection is a streamed call through the manager (plugins, auth, retries before the head) with
/// `Accept: text/event-stream`, `Cache-Control: no-cache` and, once the server has sent an id,
/// `Last-Event-ID`. When a connection ends — the server closed it, or it dropped — the source waits the
/// server's `retry:` time (or `Configuration.retry`) and connects again; connections that fail in a row
/// wait longer each time (`backoffMultiplier`, up to `maximumRetry`). It stops:
/// - with `nil` when the server answers `204 No Content`;
/// - with an error for a status the call does not accept, a response that is not `text/event-stream`
///   (`decoding`), a failure that reconnecting cannot fix (TLS, an invalid request, a body over a limit),
///   or `maximumReconnects` connection failures in a row;
/// - with `cancelled` when it is cancelled: by the task iterating it, by leaving the loop, or by the
///   manager's `cancel(id:)`, `cancel(tag:)`, first, last and all — while connected or while waiting
///   to reconnect (it stays in `inFlight` under the call's id and tag throughout).
public struct EventSource: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = ServerAPIError

    /// How an event source reconnects.
    public struct Configuration: Sendable, Hashable {
        /// The wait before reconnecting when the server has not sent `retry:`; 3 seconds, as browsers.
        public var retry: Duration
        /// The longest wait: the server's `retry:` and the backoff are capped at it.
        public var maximumRetry: Duration
        /// How much longer each wait is after a connection that failed or ended without an event.
        public var backoffMultiplier: Double
        /// The most connection failures in a row (without an event in between) before the source gives
        /// up with the last error; `nil` never gives up.
        public var maximumReconnects: Int?
        /// The id to send as `Last-Event-ID` on the first connection; empty for none.
        public var lastEventID: String

        /// Creates reconnection settings: the first delay, its growth and cap, the most reconnects, the last event id.
        public init(
            retry: Duration = .seconds(3), maximumRetry: Duration = .seconds(60), backoffMultiplier: Double = 2,
            maximumReconnects: Int? = nil, lastEventID: String = ""
        ) {
            self.retry = retry
            self.maximumRetry = maximumRetry
            self.backoffMultiplier = backoffMultiplier
            self.maximumReconnects = maximumReconnects
            self.lastEventID = lastEventID
        }
    }

    let manager: ServerAPIManager
    let api: ServerAPI
    /// How it reconnects.
    public let configuration: Configuration

    public func makeAsyncIterator() -> Iterator {
        Iterator(manager: manager, api: api, configuration: configuration)
    }

    /// Reads events across connections.
    public struct Iterator: AsyncIteratorProtocol {
        let manager: ServerAPIManager
        let api: ServerAPI
        let configuration: Configuration
        var events: ServerSentEvents.Iterator?
        /// The id sent as `Last-Event-ID` on the next connection.
        public private(set) var lastEventID: String
        /// The server's reconnection time, once it sent one.
        public private(set) var serverRetry: Duration?
        var failures = 0
        var connections = 0
        var receivedSinceConnect = false
        var ended = false

        init(manager: ServerAPIManager, api: ServerAPI, configuration: Configuration) {
            self.manager = manager
            self.api = api
            self.configuration = configuration
            self.lastEventID = configuration.lastEventID
        }

        public mutating func next() async throws(ServerAPIError) -> ServerSentEvent? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ServerAPIError)
            -> ServerSentEvent?
        {
            while !ended {
                if var current = events {
                    do {
                        let event = try await current.next(isolation: actor)
                        serverRetry = current.parser.retry ?? serverRetry
                        events = current
                        if let event {
                            lastEventID = event.id
                            failures = 0
                            receivedSinceConnect = true
                            return event
                        }
                        // The server ended the body: connect again, as a browser does.
                        events = nil
                        lastEventID = current.parser.lastEventID
                        if !receivedSinceConnect { failures += 1 }
                    } catch {
                        events = nil
                        lastEventID = current.parser.lastEventID
                        serverRetry = current.parser.retry ?? serverRetry
                        guard Self.reconnects(after: error) else { throw end(error) }
                        if !receivedSinceConnect { failures += 1 }
                    }
                    try await waitToReconnect(isolation: actor)
                    continue
                }
                do {
                    try await connect(isolation: actor)
                } catch let error where Self.reconnects(after: error) {
                    failures += 1
                    if let limit = configuration.maximumReconnects, failures > limit { throw end(error) }
                    try await waitToReconnect(isolation: actor)
                }
            }
            return nil
        }

        private mutating func connect(isolation actor: isolated (any Actor)?) async throws(ServerAPIError) {
            var call = api
            call.headers.replaceOrAdd(name: "Accept", value: "text/event-stream")
            call.headers.replaceOrAdd(name: "Cache-Control", value: "no-cache")
            if !lastEventID.isEmpty { call.headers.replaceOrAdd(name: "Last-Event-ID", value: lastEventID) }
            let response: StreamedResponse
            do {
                response = try await manager.stream(call)
            } catch {
                throw ServerAPIError.wrap(error)
            }
            connections += 1
            receivedSinceConnect = false
            if response.status == 204 {
                response.cancel()
                ended = true
                return
            }
            let type = response.headers["Content-Type"]?.split(separator: ";").first
                .map { HTTPSyntax.trimmed($0).lowercased() }
            guard type == "text/event-stream" else {
                response.cancel()
                throw end(
                    ServerAPIError(
                        .decoding,
                        "the response is not an event stream: Content-Type is \(response.headers["Content-Type"] ?? "missing")",
                        requestID: response.requestID, url: response.url, status: response.status))
            }
            events = response.events(lastEventID: lastEventID).makeAsyncIterator()
        }

        /// Waits before the next connection: the server's `retry:` or the default, longer after each
        /// failure in a row, capped. Registered under the call's id and tag, so the registry cancels it.
        private mutating func waitToReconnect(isolation actor: isolated (any Actor)?) async throws(ServerAPIError) {
            let delay = Backoff(
                initial: serverRetry ?? configuration.retry, multiplier: configuration.backoffMultiplier,
                maximum: configuration.maximumRetry
            ).nominal(afterSteps: failures - 1)
            do {
                try await manager.waitRegistered(delay, for: api)
            } catch {
                throw end(ServerAPIError(.cancelled, "the event source was cancelled while waiting to reconnect"))
            }
        }

        private mutating func end(_ error: ServerAPIError) -> ServerAPIError {
            ended = true
            events = nil
            return error.with(requestID: api.id, url: error.url)
        }

        /// Whether a failure is one that reconnecting may fix: the connection could not be made, dropped,
        /// timed out or stalled. A status, TLS, decoding, size or cancellation failure is final.
        static func reconnects(after error: ServerAPIError) -> Bool {
            [.network, .cannotConnect, .timedOut].contains(error.kind)
        }
    }
}
