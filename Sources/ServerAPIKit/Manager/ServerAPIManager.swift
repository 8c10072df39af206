#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The composition root: sends `ServerAPI` calls through a transport, a formatter, an optional
/// cache and plugins, with retries and a registry of the calls in flight.
///
/// ```swift
/// let manager = ServerAPIManager(transport: URLSessionTransport(), formatter: .envelope())
/// let result = try await manager.send(ServerAPI(host: "https://api.example.com", path: "/items"))
/// ```
/// - Important: A manager is safe to use from any task or thread. Keep one per configuration
///   and share it; the transport it holds owns the connections. A server app stops it with
///   `shutdown(gracePeriod:)`, which lets the calls in flight finish and stops the transport the manager owns
///   (see `ownsTransport`).
public final class ServerAPIManager: Sendable {
    /// Settings that apply to every call.
    public struct Configuration: Sendable {
        /// Headers added to every call that does not set them itself.
        public var defaultHeaders: HTTPHeaders
        /// How long a stored response stays fresh when the call gives no TTL and, with HTTP cache headers
        /// honoured, its headers give no freshness (no `max-age`, `Expires` or `Last-Modified`), for a 2xx status.
        /// `.zero` stores such responses stale, for the offline modes only.
        public var defaultCacheTTL: Duration
        /// How long past its freshness a stored response is kept: an older one answers nothing (not even offline)
        /// and is removed when the manager finds it. `nil` (the default) keeps it until the cache evicts it.
        public var maxStaleAge: Duration?
        /// The most retries plugins may ask for beyond a call's retry count.
        public var maxPluginRetries: Int
        /// The clock retry waits and minimum intervals are measured on; tests pass a clock they control.
        public var clock: any Clock<Duration>
        /// Whether stored responses are fresh for as long as HTTP caching (RFC 9111) says — `Cache-Control`,
        /// `Expires`, `Age`, heuristics — and requests' own directives count; on by default. Off, a stored response
        /// is fresh for the call's TTL or `defaultCacheTTL`. Either way a response is never stored when it said
        /// `no-store` or is partial, never answers a request its `Vary` does not match, is never served stale
        /// when it said `no-cache` or `must-revalidate`, and unsafe requests invalidate their URL. See the
        /// Caching article.
        public var honorsHTTPCacheHeaders = true
        /// The wall clock the cache's freshness and ages are measured on; tests pass one they control
        /// (`TestClock.dateSource`).
        public var now: @Sendable () -> Date = { Date() }
        /// Whether identical GET and HEAD calls in flight share one transport call unless a call says otherwise.
        public var coalescesIdenticalRequests: Bool
        /// How business codes are shown, silenced and intercepted for every call; a call's own rules override them.
        public var businessRules: BusinessRules
        /// Where cookies are kept between calls; `nil` (the default) keeps none. With a storage, every
        /// request (each redirect a transport follows included) gets the `Cookie` header of the cookies
        /// that match it, and every response's `Set-Cookie` is stored, the same way with every transport.
        public var cookies: (any CookieStorage)?
        /// The retry budget, circuit breaker, hedging and concurrency limit of each origin's calls;
        /// `.none` (the default) applies none. See `ResiliencePolicies`.
        public var resilience = ResiliencePolicies.none
        /// The largest response body a call holds in memory when it sets no `maxResponseSize` of its own:
        /// 64 MiB (67,108,864 bytes) by default; `nil` for no limit. A body past it ends
        /// the call with `responseTooLarge`, and nothing of it is kept. Downloads to disk and streamed bodies
        /// are not bounded by it (a call's own `maxResponseSize` still applies to them).
        /// - Important: The default protects the process from a server that sends more than it should (or
        ///   bytes forever). Raise it, or download to a file, for responses that are legitimately larger.
        public var maxResponseSize: Int64? = ResponseSizeRule.defaultMemoryLimit

        /// Creates a configuration.
        public init(
            defaultHeaders: HTTPHeaders = [:],
            defaultCacheTTL: Duration = .seconds(300),
            maxPluginRetries: Int = 2,
            clock: any Clock<Duration> = ContinuousClock(),
            coalescesIdenticalRequests: Bool = false,
            businessRules: BusinessRules = BusinessRules(),
            cookies: (any CookieStorage)? = nil
        ) {
            self.cookies = cookies
            self.defaultHeaders = defaultHeaders
            self.defaultCacheTTL = defaultCacheTTL
            self.maxPluginRetries = maxPluginRetries
            self.clock = clock
            self.coalescesIdenticalRequests = coalescesIdenticalRequests
            self.businessRules = businessRules
        }
    }

    /// The transport every call goes through.
    public let transport: any RequestPerforming
    /// The formatter that turns responses into results.
    public let formatter: any ResponseFormatting
    /// The cache, if any.
    public let cache: (any CachePolicy)?
    /// The plugins, in the order they run.
    public let plugins: [any ServerAPIPlugin]
    /// The settings.
    public let configuration: Configuration
    /// Whether `shutdown(gracePeriod:)` shuts the transport down too, after the manager's calls have ended: `true`
    /// unless the manager was made with `ownsTransport: false` for a transport that others share.
    public let ownsTransport: Bool

    let registry = InFlightRegistry()
    let controls = RequestControls()
    let resilienceRegistry = ResilienceRegistry()
    /// Whether the configuration sets any resilience policy: without one, only a call's own can apply.
    let configuresResilience: Bool
    /// Whether the manager has a cache: asked several times per call, and reading `cache` copies an existential.
    let hasCache: Bool
    let shutdownState = ShutdownState()

    /// Creates a manager.
    /// - Parameters:
    ///   - transport: The transport (`URLSessionTransport`, `CurlTransport`, `MockTransport`, …).
    ///   - formatter: How responses become results; `.plain` by default, `.envelope()` for business envelopes.
    ///   - cache: The cache the calls' `CacheMode`s use; `nil` for none.
    ///   - plugins: Plugins, run in this order.
    ///   - configuration: Settings for every call.
    ///   - ownsTransport: Whether the manager's `shutdown(gracePeriod:)` shuts the transport down too (its threads,
    ///     its connections); `true` by default. Pass `false` for a transport that other managers share: its owner
    ///     shuts it down, once every manager that uses it has.
    public init(
        transport: some RequestPerforming,
        formatter: some ResponseFormatting = PlainFormatter(),
        cache: (any CachePolicy)? = nil,
        plugins: [any ServerAPIPlugin] = [],
        configuration: Configuration = Configuration(),
        ownsTransport: Bool = true
    ) {
        self.ownsTransport = ownsTransport
        self.transport = transport
        self.formatter = formatter
        self.cache = cache
        self.plugins = plugins
        self.configuration = configuration
        configuresResilience = configuration.resilience != .none
        hasCache = cache != nil
    }

    // MARK: Sending

    /// Sends a call and formats its response as the call's `resultFormat`.
    ///
    /// With `CacheMode.returnCacheThenLoad` this returns the network result (and stores it);
    /// use `updates(_:)` to get the cached result first.
    /// - Parameters:
    ///   - api: The call.
    ///   - progress: Called with upload and download progress, from any thread.
    /// - Returns: The formatted result, with where it came from and what was measured.
    /// - Throws: `ServerAPIError`.
    public func send(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> ServerResult {
        try await run(api, progress: progress, finishing: ResultFinishing(formatter: formatter))
    }

    /// Sends an endpoint's call and decodes its `Response` at its key path.
    /// - Throws: `ServerAPIError`; a model that does not fit is a `decoding` error naming the key path.
    public func send<Request: APIRequest>(_ request: Request) async throws -> Request.Response {
        try await send(request.resolvedAPI, decoding: Request.Response.self)
    }

    /// Sends a call and decodes a model at the call's key path.
    /// - Throws: `ServerAPIError`.
    public func send<Model: Decodable & Sendable>(
        _ api: ServerAPI, decoding type: Model.Type, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> Model {
        try await run(api, progress: progress, finishing: ModelFinishing<Model>(formatter: formatter))
    }

    /// Sends a call and delivers its result to a completion handler.
    ///
    /// The completion is called exactly once, with a result or an error (`cancelled` when the
    /// handle, the registry or the manager cancelled it), on an arbitrary thread.
    /// - Returns: A handle with the call's id and a way to cancel it.
    @discardableResult
    public func send(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<ServerResult, ServerAPIError>) -> Void
    ) -> RequestHandle {
        let task = Task {
            do {
                completion(.success(try await self.send(api, progress: progress)))
            } catch {
                completion(.failure(.wrap(error)))
            }
        }
        return RequestHandle(id: api.id, cancel: { task.cancel() })
    }

    /// Sends a call and streams its results: with `returnCacheThenLoad`, the cached result
    /// (if there is one) and then the network result; with every other mode, the one result.
    ///
    /// Ending the iteration early cancels the call.
    public func updates(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) -> AsyncThrowingStream<ServerResult, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    guard api.cacheMode == .returnCacheThenLoad else {
                        continuation.yield(try await self.send(api, progress: progress))
                        continuation.finish()
                        return
                    }
                    if let cached = try await self.cachedResult(for: api) { continuation.yield(cached) }
                    continuation.yield(try await self.send(api.cache(.storeOnly), progress: progress))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: ServerAPIError.wrap(error))
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: The registry

    /// The calls in flight, oldest first.
    public var inFlight: [InFlightRequest] { registry.all }

    /// Cancels every call in flight with this id.
    /// - Returns: The calls cancelled.
    @discardableResult
    public func cancel(id: RequestID) -> [InFlightRequest] { registry.cancel(.id) { $0.id == id } }

    /// Cancels every call in flight with this tag.
    /// - Returns: The calls cancelled.
    @discardableResult
    public func cancel(tag: String) -> [InFlightRequest] { registry.cancel(.tag) { $0.tag == tag } }

    /// Cancels the oldest call in flight.
    /// - Returns: The call cancelled, if there was one.
    @discardableResult
    public func cancelFirst() -> InFlightRequest? { registry.cancelOne(first: true) }

    /// Cancels the newest call in flight.
    /// - Returns: The call cancelled, if there was one.
    @discardableResult
    public func cancelLast() -> InFlightRequest? { registry.cancelOne(first: false) }

    /// Cancels every call in flight.
    /// - Returns: The calls cancelled.
    @discardableResult
    public func cancelAll() -> [InFlightRequest] { registry.cancel(.all) { _ in true } }
}

/// A call started with a completion handler: its id, and a way to cancel it.
public struct RequestHandle: Sendable {
    /// The call's id.
    public let id: RequestID
    private let cancelAction: @Sendable () -> Void

    init(id: RequestID, cancel: @escaping @Sendable () -> Void) {
        self.id = id
        self.cancelAction = cancel
    }

    /// Cancels the call; its completion is called with `cancelled` unless it already ran.
    public func cancel() { cancelAction() }
}

// MARK: - Streamed calls

extension ServerAPIManager {
    /// Sends a call and returns as soon as the response head has arrived, with the body to read as it
    /// arrives: byte chunks, lines or server-sent events.
    ///
    /// ```swift
    /// let response = try await manager.stream(ServerAPI(url: feedURL))
    /// for try await line in response.lines { print(line) }
    /// ```
    /// The pipeline applies up to the head: plugins prepare and see the request and the head, retries
    /// and an auth refresh happen only before the head is delivered, and a status the call does not
    /// accept throws `httpStatus` with an excerpt of the body (at most 4 KiB read). The call's `timeout`
    /// bounds the time until the head; after it, the body runs until it ends, stalls (the call's stall
    /// timeout) or is cancelled. A streamed call does not use the cache or coalescing and cannot have a
    /// download destination; a throttled one that would replay a previous result fails with `throttled`.
    ///
    /// The call stays in `inFlight` until its body ends, so `cancel(id:)`, `cancel(tag:)`, first, last
    /// and all end its body with `cancelled`. Plugins' `didComplete` runs when the body ends, with the
    /// final metrics.
    /// - Parameters:
    ///   - api: The call.
    ///   - progress: Called with upload and download progress, from any thread.
    /// - Returns: The head and the body.
    /// - Throws: `ServerAPIError`, for failures before the head; later ones end the body.
    public func stream(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> StreamedResponse {
        try await run(api, progress: progress, finishing: StreamFinishing())
    }

    /// After a streamed exchange: hands the head and the body over. The call completes (its final
    /// metrics, `didComplete`, the registry) when the body ends; from now on the registry, a scope or a
    /// handle cancels the body.
    @inline(never)
    func handOver<F: CallFinishing>(
        _ head: TransportResponse, _ call: Call, _ finisher: F, completion: StreamCompletion
    ) throws -> F.Value {
        guard case .stream(let body) = head.body else {
            throw ServerAPIError(.network, "the transport returned no streamed body")
        }
        let api = call.api
        // The body's end, on another thread, works on this copy: the call's own metrics stay with its task.
        let headMetrics = call.metrics
        body.storage.stamp(requestID: api.id, url: head.url)
        call.headReceived()
        body.whenEnded { [self] outcome in
            var final = headMetrics
            final.endedAt = nil
            final.duration = .zero
            switch outcome {
            case .success(let transport): if let transport { final.transport = transport }
            case .failure: if let transport = body.metrics { final.transport = transport }
            }
            final = endMetrics(final, call: call)
            _ = try? end(call, outcome.mapError { $0 as any Error }, metrics: final)
            completion.finish(final)
        }
        // From now on cancelling the call cancels the body; a cancel that came first runs it at once.
        call.bodyStreaming()
        call.onCancel { body.cancel() }
        return try finisher.finish(head, source: .network, metrics: headMetrics, api: api)
    }

    /// The start of an error response's streamed body, for the `httpStatus` error: at most 4 KiB, read
    /// within the request's timeout and until the call is cancelled; the rest of the body is dropped.
    static func excerpt(of body: ResponseBodyStream, for request: TransportRequest) async -> Data {
        let limit = 4096
        let timeout = request.timeout
        let timer = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            body.cancel()
        }
        defer {
            timer.cancel()
            body.cancel()
        }
        return await request.withCancellationHandler {
            var data = Data()
            var chunks = body.makeAsyncIterator()
            while data.count < limit, let chunk = try? await chunks.next() {
                data.append(chunk.prefix(limit - data.count))
            }
            return data
        } onCancel: {
            body.cancel()
        }
    }
}

// MARK: - Event sources

extension ServerAPIManager {
    /// A server-sent event stream that reconnects with `Last-Event-ID` after a dropped connection, as a
    /// browser's `EventSource` does (see `EventSource`).
    /// - Parameters:
    ///   - api: The call; each connection sends it as a streamed call with the event-stream headers.
    ///   - configuration: How it reconnects.
    /// - Returns: The events, across connections.
    public func eventSource(
        _ api: ServerAPI, configuration: EventSource.Configuration = EventSource.Configuration()
    ) -> EventSource {
        EventSource(manager: self, api: api, configuration: configuration)
    }

    /// Sleeps on the manager's clock while registered in the in-flight registry under the call's id and
    /// tag: an event source (or a WebSocket) between connections. The manager's shutdown ends the wait at once: no
    /// new connection could be made.
    func waitRegistered(_ delay: Duration, for api: ServerAPI) async throws {
        let call = Call(api: api, request: try api.transportRequest(), reportsEnd: false, registry: registry)
        let clock = configuration.clock
        try await ending(call, endsLater: false) {
            call.onDrain { call.cancel(.shutdown) }
            try await call.run { try await clock.sleep(for: delay) }
        }
    }
}

// MARK: - Batches and chains

/// Several calls run at the same time, as one unit that can be cancelled by its id or tag.
///
/// Its `failurePolicy` is the one place that says what a failure does; `ServerAPIManager.send(_:)` and
/// `ServerAPIManager.results(of:)` only differ in how the outcome comes back (thrown, or one `Result` per call).
public struct BatchRequest: Sendable, Hashable {
    /// What a batch does when one of its calls fails, whichever method sends it.
    public enum FailurePolicy: Sendable, Hashable {
        /// The first failure cancels the other calls and is thrown.
        case failFast
        /// Every call runs to its end; each result or error is returned.
        case collectAll
    }

    /// The batch's id, for `cancel(id:)`.
    public var id: RequestID
    /// The batch's tag, for `cancel(tag:)`.
    public var tag: String?
    /// The calls, in the order their results are returned.
    public var calls: [ServerAPI]
    /// What a failure does.
    public var failurePolicy: FailurePolicy

    /// Creates a batch.
    public init(_ calls: [ServerAPI], tag: String? = nil, failurePolicy: FailurePolicy = .failFast) {
        self.id = RequestID.next()
        self.tag = tag
        self.calls = calls
        self.failurePolicy = failurePolicy
    }
}

/// Calls run one after the other, each built from the result of the one before.
public struct ChainRequest: Sendable {
    /// Builds the next call from the previous result; `nil` ends the chain.
    public typealias Step = @Sendable (ServerResult) throws -> ServerAPI?

    /// The chain's id, for `cancel(id:)`.
    public var id: RequestID
    /// The chain's tag, for `cancel(tag:)`.
    public var tag: String?
    /// The first call.
    public var first: ServerAPI
    /// The steps that build the following calls.
    public var steps: [Step]

    /// Creates a chain that starts with `first`.
    public init(_ first: ServerAPI, tag: String? = nil) {
        self.id = RequestID.next()
        self.tag = tag
        self.first = first
        self.steps = []
    }

    /// Returns the chain with one more step.
    public func then(_ step: @escaping Step) -> ChainRequest {
        var copy = self
        copy.steps.append(step)
        return copy
    }
}

extension ServerAPIManager {
    /// Runs a batch, every call at once, and returns the results or throws a failure.
    ///
    /// With `.failFast` (the default) the first failure cancels the rest and is thrown; with `.collectAll`
    /// every call runs to its end, then the first failed call's error (in call order) is thrown. To get
    /// every call's outcome instead, use `results(of:)`.
    ///
    /// The batch is in `inFlight` (as well as each of its calls), and `cancel(id:)` /
    /// `cancel(tag:)` with the batch's id or tag cancel all of it.
    /// - Returns: The results, in the order of `batch.calls`.
    /// - Throws: A failure as above; `cancelled` when the batch was cancelled.
    public func send(_ batch: BatchRequest) async throws -> [ServerResult] {
        let results = try await runGroup(id: batch.id, tag: batch.tag, kind: .batch) {
            try await self.runBatch(batch.calls, failFast: batch.failurePolicy == .failFast)
        }
        return try results.map { try $0.get() }
    }

    /// Runs a batch, every call at once, and returns each call's result or error, in order; never throws.
    ///
    /// The batch's `failurePolicy` applies as with `send(_:)`: with `.failFast` the calls still running at the
    /// first failure end with `cancelled`; with `.collectAll` every call runs to its end.
    public func results(of batch: BatchRequest) async -> [Result<ServerResult, ServerAPIError>] {
        do {
            return try await runGroup(id: batch.id, tag: batch.tag, kind: .batch) {
                try await self.runBatch(batch.calls, failFast: batch.failurePolicy == .failFast, throwing: false)
            }
        } catch {
            let failure = ServerAPIError.wrap(error)
            return batch.calls.map { _ in .failure(failure) }
        }
    }

    /// The former name of `results(of:)`.
    @available(*, deprecated, renamed: "results(of:)")
    public func sendAll(_ batch: BatchRequest) async -> [Result<ServerResult, ServerAPIError>] {
        await results(of: batch)
    }

    /// Runs a chain: each call after the first is built by a step from the previous result.
    ///
    /// The chain is in `inFlight` and can be cancelled as a whole by its id or tag.
    /// - Returns: Every call's result, in order.
    /// - Throws: The first failure (a step that throws ends the chain with its error, wrapped).
    public func send(_ chain: ChainRequest) async throws -> [ServerResult] {
        try await runGroup(id: chain.id, tag: chain.tag, kind: .chain) {
            var results = [try await self.send(chain.first)]
            for step in chain.steps {
                guard let next = try step(results[results.count - 1]) else { break }
                results.append(try await self.send(next))
            }
            return results
        }
    }

    private func runBatch(
        _ calls: [ServerAPI], failFast: Bool, throwing: Bool = true
    ) async throws -> [Result<ServerResult, ServerAPIError>] {
        try await withThrowingTaskGroup(of: (Int, Result<ServerResult, ServerAPIError>).self) { group in
            for (index, api) in calls.enumerated() {
                group.addTask {
                    // The tuple is made after the await, never across it: Swift 6.3's optimizer drops the part of an
                    // async tuple result written before a suspension, which made every index 0 (or garbage) in
                    // release builds (swiftlang/swift#91911; reproducer in notes/compiler-async-tuple-result.md).
                    let result: Result<ServerResult, ServerAPIError>
                    do { result = .success(try await self.send(api)) } catch { result = .failure(.wrap(error)) }
                    return (index, result)
                }
            }
            var results = [Result<ServerResult, ServerAPIError>?](repeating: nil, count: calls.count)
            var firstFailure: ServerAPIError?
            for try await (index, result) in group {
                results[index] = result
                if case .failure(let error) = result, failFast, firstFailure == nil {
                    firstFailure = error
                    group.cancelAll()
                }
            }
            if throwing, let firstFailure { throw firstFailure }
            return results.map { $0 ?? .failure(.cancelled()) }
        }
    }

    /// Runs work as one registry entry, so that it can be cancelled by id or tag like a call.
    func runGroup<T: Sendable>(
        id: RequestID, tag: String?, kind: InFlightRequest.Kind, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let call = Call(entry: id, tag: tag, url: nil, kind: kind, registry: registry)
        return try await ending(call, endsLater: false) { try await call.run(body) }
    }
}

// MARK: - Shutting down

extension ServerAPIManager {
    /// Stops the manager as a server app does when it is told to (a deploy, a scale-down): new calls are refused,
    /// the calls in flight get `gracePeriod` to finish, and then the transport the manager owns is shut down.
    ///
    /// ```swift
    /// let manager = ServerAPIManager(transport: CurlTransport())
    /// // … the app runs …
    /// await manager.shutdown(gracePeriod: .seconds(10))  // on SIGTERM
    /// ```
    /// In order:
    /// 1. From the call on, every new call (`send`, `stream`, `webSocket`, a batch, an event source's next connection)
    ///    fails at once with `ServerAPIError.Kind.shuttingDown`, before anything is sent.
    /// 2. The calls in flight go on: whole calls and downloads, streamed bodies being read, retries. Each open
    ///    WebSocket is closed at once with 1001 (going away), its close handshake running in the grace period; an
    ///    event source waiting to reconnect stops waiting.
    /// 3. When the last call has ended, or `gracePeriod` has passed on the manager's clock, whichever comes first,
    ///    the calls still in flight are cancelled: they fail with `cancelled`, a download keeping its partial file
    ///    for a resume (`DownloadTarget.resume`).
    /// 4. Once every call has ended, the transport is shut down (`RequestPerforming.shutdown(gracePeriod:)`) when the
    ///    manager owns it (`ownsTransport`): for `CurlTransport`, that returns once its threads have exited.
    ///
    /// Calling it again, or from several tasks at once, is safe: every caller returns when the first one's shutdown
    /// has completed (the first caller's grace period is the one that counts). Cancelling the calling task ends the
    /// grace period at once; the method still returns only once every call has ended.
    ///
    /// - Important: Who owns what: a manager owns the transport it was made with unless it was made with
    ///   `ownsTransport: false`. A transport shared by several managers is made with that by each of them, and
    ///   shut down by the code that made it, once the managers are: `await manager.shutdown(...)` for each, then
    ///   `await transport.shutdown(gracePeriod: .zero)`. The cache, the cookie storage and the plugins are the
    ///   app's: shutting down does not touch them.
    /// - Parameter gracePeriod: How long the calls in flight may take to finish before they are cancelled;
    ///   `.zero` cancels them at once.
    public func shutdown(gracePeriod: Duration) async {
        guard shutdownState.begin() else { return await shutdownState.waitUntilDone() }
        registry.close()
        if await !drain(within: gracePeriod) {
            registry.cancelAll(.shutdown, andLater: false)
            // Not cancellable: the method returns only once every call has ended, and a cancelled call ends
            // promptly (every transport tears its connection down).
            _ = await Task { await registry.waitUntilEmpty() }.value
        }
        if ownsTransport { await transport.shutdown(gracePeriod: .zero) }
        shutdownState.finish()
    }

    /// Whether `shutdown(gracePeriod:)` was called: the manager takes no new calls.
    public var isShuttingDown: Bool { registry.isClosed }

    /// Waits for the calls in flight to end, for at most `gracePeriod` on the manager's clock, or until the calling
    /// task is cancelled. - Returns: Whether every call ended in time.
    private func drain(within gracePeriod: Duration) async -> Bool {
        let clock = configuration.clock
        let registry = self.registry
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await registry.waitUntilEmpty() }
            group.addTask {
                try? await clock.sleep(for: gracePeriod)
                return false
            }
            let drained = await group.next() ?? false
            group.cancelAll()
            return drained
        }
    }
}

/// Where a shutdown is (the manager's, a transport's): not started, running (with who waits for its end), done.
/// The first caller of `shutdown(gracePeriod:)` runs it; the others wait for it.
package final class ShutdownState: Sendable {
    private enum Phase {
        case running
        case shuttingDown([CheckedContinuation<Void, Never>])
        case shutDown
    }

    private let phase = Locked(Phase.running)

    package init() {}

    /// Starts the shutdown. - Returns: `true` for the first caller, who runs it.
    package func begin() -> Bool {
        phase.withLock { phase in
            guard case .running = phase else { return false }
            phase = .shuttingDown([])
            return true
        }
    }

    /// Returns once the shutdown has completed.
    package func waitUntilDone() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = phase.withLock { phase -> Bool in
                guard case .shuttingDown(var waiters) = phase else { return true }
                waiters.append(continuation)
                phase = .shuttingDown(waiters)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The shutdown has completed: its waiters are resumed.
    package func finish() {
        let waiters = phase.withLock { phase -> [CheckedContinuation<Void, Never>] in
            defer { phase = .shutDown }
            if case .shuttingDown(let waiters) = phase { return waiters }
            return []
        }
        for waiter in waiters { waiter.resume() }
    }
}
