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
        /// 64 MiB (`ResponseSizeRule.defaultMemoryLimit`) by default; `nil` for no limit. A body past it ends
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
