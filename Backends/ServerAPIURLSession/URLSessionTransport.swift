import Foundation
@_spi(Backend) @_spi(Transport) import ServerAPIKit

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// A transport built on `URLSession` (FoundationNetworking on Linux).
///
/// ```swift
/// let manager = ServerAPIManager(transport: URLSessionTransport())
/// let result = try await manager.send(ServerAPI(host: "https://api.example.com", path: "/items"))
/// ```
/// Each transport owns one `URLSession` with its own connection pool. Request bodies from files
/// are streamed from disk, downloads are written to disk as they arrive (with resume), progress
/// is reported in both directions, and cancelling the Swift task tears the connection down.
///
/// - Important: Keep one transport per configuration and share it: it is safe to use from any
///   task. Keep `progress` closures short: on Linux they hold up FoundationNetworking's one
///   thread when data piles up. Also on Linux: repeated response headers arrive joined into one
///   field; a redirect that keeps a request's body (307, 308, or 301/302 of a method other than
///   POST) is not followed (the 3xx response is returned) because FoundationNetworking would drop
///   the body; a GET with a body is refused.
public final class URLSessionTransport: RequestPerforming {
    /// `"urlsession"`.
    public let name = "urlsession"

    /// `true`: the manager's cancellation of a call cancels its `URLSessionTask` as its task's cancellation does.
    public var observesCallCancellation: Bool { true }
    /// The settings this transport was created with.
    public let configuration: Configuration

    let session: URLSession
    let delegate: SessionDelegate
    /// The serial queue every delegate callback of the session runs on.
    let callbackQueue: CallbackQueue
    /// Where tasks are created, resumed and cancelled: those calls wait for FoundationNetworking's
    /// thread, so they never run on the Swift concurrency pool or in a callback (see CallbackQueue).
    let control = DispatchQueue(label: "ServerAPIURLSession.control")
    /// Set by `shutdown(gracePeriod:)`: new calls are refused.
    private let refusing = Locked(false)
    private let shutdownState = ShutdownState()

    /// Creates a transport with its own session.
    /// - Parameter configuration: The session's settings.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // Set only by init(configuration:proxy:), which refused any proxy this platform cannot honour.
        if let proxy = try? Self.proxyDictionary(for: configuration.proxy) {
            sessionConfiguration.connectionProxyDictionary = proxy
        }
        sessionConfiguration.httpMaximumConnectionsPerHost = max(1, configuration.maxConnectionsPerHost)
        // The manager owns caching: the session must neither answer from nor fill a cache of its own.
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpShouldSetCookies = configuration.handlesCookies
        sessionConfiguration.httpCookieAcceptPolicy = configuration.handlesCookies ? .always : .never
        if !configuration.handlesCookies { sessionConfiguration.httpCookieStorage = nil }
        // TLS 1.2 is the floor (TLSOptions.legacyProtocolHosts, which this transport refuses, would lower it).
        // FoundationNetworking has no such setting: there the floor is the system libcurl's and OpenSSL's (the
        // Choosing a transport article says what that lets through).
        #if !canImport(FoundationNetworking)
            sessionConfiguration.tlsMinimumSupportedProtocolVersion = .TLSv12
        #endif
        // The transport enforces each request's total timeout itself; the session's limits stay out of the way.
        sessionConfiguration.timeoutIntervalForResource = TimeInterval(Self.resourceTimeout)
        if !configuration.additionalHeaders.isEmpty {
            var headers: [AnyHashable: Any] = [:]
            for field in configuration.additionalHeaders where headers[field.name] == nil {
                headers[field.name] = configuration.additionalHeaders.values(for: field.name).joined(separator: ", ")
            }
            sessionConfiguration.httpAdditionalHeaders = headers
        }
        callbackQueue = CallbackQueue(name: "ServerAPIURLSession.callbacks")
        delegate = SessionDelegate(control: control)
        session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: callbackQueue)
    }

    /// Calls whose task is registered with the delegate, or whose timeout timer is still scheduled:
    /// 0 once every call has ended (for tests and the soak run).
    package var activeTransfers: Int { delegate.registeredCount + delegate.pendingTimerCount }

    /// Tasks FoundationNetworking was given for a call and that are still routed to it (for tests).
    package var registeredTasks: Int { delegate.registeredCount }

    /// The session's tasks that FoundationNetworking still runs (for tests): those it has not reported complete.
    /// Counted by the delegate, not with `getAllTasks`, which reads FoundationNetworking's registry on the delegate
    /// queue while tasks end and crashed the conformance suite (see `deinit`).
    package func sessionTaskCount() async -> Int { delegate.unfinishedCount }

    deinit {
        // The session holds its delegate until it is invalidated. Invalidating happens on the control queue,
        // after the tasks it was already asked to create (a task created on an invalidated session traps).
        let session = self.session
        #if canImport(FoundationNetworking)
            // FoundationNetworking's `invalidateAndCancel()`, and `getAllTasks` too, read its task registry off its
            // work queue (`getAllTasks` on the delegate queue), racing a task that ends at that moment: the
            // conformance suite crashed in their `map`, once each. The tasks to cancel come from the delegate's own
            // table instead; cancelling a task that has just ended does nothing.
            let delegate = self.delegate
            control.async {
                guard delegate.markInvalidated() else { return }
                for task in delegate.registeredTasks { task.cancel() }
                session.finishTasksAndInvalidate()
            }
        #else
            let delegate = self.delegate
            control.async { if delegate.markInvalidated() { session.invalidateAndCancel() } }
        #endif
    }

    /// Shuts the transport down: new calls fail at once with `shuttingDown`; the calls in flight (streamed bodies and
    /// WebSockets included) get `gracePeriod` to end; then the session is invalidated, its tasks cancelled (calls
    /// still in flight fail with `cancelled`), and this returns once every call has ended.
    ///
    /// Calling it again, or from several tasks at once, is safe: each returns once the first has completed.
    /// Cancelling the calling task ends the grace period at once.
    ///
    /// - Important: What differs from `CurlTransport`: the transport has no threads of its own to wait for.
    ///   FoundationNetworking runs every session of the process on its own work thread and queues, which stay. On
    ///   Linux the session is invalidated as `deinit` does it (each task cancelled, then `finishTasksAndInvalidate`),
    ///   because FoundationNetworking's `invalidateAndCancel` reads its task registry off its work queue and can
    ///   crash on a task that ends at that moment; elsewhere with `invalidateAndCancel`. A WebSocket still open at
    ///   the end of the grace period is cancelled by URLSession without the close handshake; shut the
    ///   `ServerAPIManager` down first (it closes its WebSockets with 1001, going away).
    /// - Parameter gracePeriod: How long the calls in flight may take to end before they are cancelled.
    public func shutdown(gracePeriod: Duration) async {
        guard shutdownState.begin() else { return await shutdownState.waitUntilDone() }
        refusing.withLock { $0 = true }
        let (control, delegate, session) = (self.control, self.delegate, self.session)
        // Calls admitted before the refusal make their tasks on the control queue: past it, every one is counted.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in control.async { done.resume() } }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await delegate.waitUntilIdle() }
            group.addTask { try? await Task.sleep(for: gracePeriod) }
            await group.next()
            group.cancelAll()
            // What is left is cancelled; this ends the wait for idleness too.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                control.async {
                    if delegate.markInvalidated() {
                        for socket in delegate.registeredWebSockets { socket.close() }
                        #if canImport(FoundationNetworking)
                            for task in delegate.registeredTasks { task.cancel() }
                            session.finishTasksAndInvalidate()
                        #else
                            session.invalidateAndCancel()
                        #endif
                    }
                    done.resume()
                }
            }
        }
        await delegate.waitUntilIdle()
        shutdownState.finish()
    }

    /// Whether `shutdown(gracePeriod:)` was called: new calls are refused.
    var isShuttingDown: Bool { refusing.withLock { $0 } }

    /// Why a call is refused once the transport is shutting down.
    static let shutDownRefusal = ServerAPIError(
        .shuttingDown, "the transport is shutting down: it takes no new requests")

    /// Sends a request through the session and returns the response, whatever its status.
    /// - Parameter request: The resolved request.
    /// - Returns: Status, headers, body (in memory or in the download file) and metrics.
    /// - Throws: `ServerAPIError`: `cancelled`, `timedOut`, `cannotConnect`, `network`, `tls`,
    ///   `tooManyRedirects`, `responseTooLarge`, `fileSystem` or `invalidRequest`.
    public func perform(_ request: TransportRequest) async throws -> TransportResponse {
        try await run(request, streamed: false)
    }

    /// Sends a request and returns as soon as the final response head has arrived (after redirects),
    /// with the body as a `ResponseBodyStream` fed as FoundationNetworking receives it.
    ///
    /// `request.timeout` bounds the time until the head; the body then runs until it ends, stalls
    /// (`request.stallTimeout`, or the configuration's), stays silent for the configuration's
    /// `idleTimeout` when one is set, or is cancelled (`ResponseBodyStream.cancel()`, or its reader
    /// leaving early), which cancels the task.
    ///
    /// - Important: On Linux FoundationNetworking cannot pause a transfer: `URLSessionTask.suspend()`
    ///   takes the task's libcurl handle out of the session's multi handle, which aborts the transfer,
    ///   and `resume()` sends the request again from the start. So a reader slower than the network
    ///   does not slow the server down: what it has not read yet is held in memory, up to the whole
    ///   body. Read promptly, or use `CurlTransport`, which pauses its transfer when the stream's buffer
    ///   (`Configuration.streamBufferSize`) is full.
    /// - Parameter request: The resolved request.
    /// - Returns: Status, headers, the streamed body, and the metrics as of the head.
    /// - Throws: `ServerAPIError`, for failures before the head (as `perform`); later ones end the body.
    public func stream(_ request: TransportRequest) async throws -> TransportResponse {
        try await run(request, streamed: true)
    }

    private func run(_ request: TransportRequest, streamed: Bool) async throws -> TransportResponse {
        let transfer: Transfer
        do throws(ServerAPIError) {
            if isShuttingDown { throw Self.shutDownRefusal }
            try Self.validate(request, defaultStallTimeout: configuration.stallTimeout)
            if let refusal = Self.refusal(configuration.httpVersion) { throw refusal }
            if streamed, request.download != nil {
                throw ServerAPIError(.invalidRequest, "a streamed call cannot have a download destination")
            }
            transfer = try Transfer(request: request, transport: self, streamed: streamed)
        } catch {
            throw error.with(requestID: request.id, url: request.url)
        }
        let response = try await request.withCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.start(continuation)
            }
        } onCancel: {
            transfer.fail(.cancelled().with(requestID: request.id, url: request.url))
        }
        // The response (a streamed body's state with it) was made under the transfer's lock on
        // FoundationNetworking's thread; taking that lock here orders it before the caller's reads by an edge
        // ThreadSanitizer sees, which the continuation resumed from that thread did not always give it.
        transfer.synchronize()
        return response
    }

    /// The session's resource timeout, in seconds: a week, out of every transfer's way.
    static let resourceTimeout: Int64 = 7 * 24 * 3600

    /// Why a request body from an `AsyncSequence` is refused: FoundationNetworking on Linux reads a body
    /// stream synchronously, from libcurl's read callback, on the one serial queue every session of the
    /// process runs its transfers on, and takes "no bytes available" (or a read of 0) for the end of the
    /// body: `_BodyStreamSource.getNextChunk` never answers `.retryLater`, the one answer that would pause
    /// the upload. So a body that is produced while it is sent can neither wait for its producer (a
    /// blocking read would stall every transfer of the process) nor pause the transfer. `CurlTransport`
    /// sends one. On Apple platforms a bound stream pair could carry one; it is not implemented, so the
    /// refusal holds on every platform.
    static let streamedBodyRefusal = ServerAPIError(
        .invalidRequest,
        "URLSessionTransport cannot send a streamed request body: not supported by this transport "
            + "(FoundationNetworking reads body streams synchronously); use CurlTransport, or a file or in-memory body")

    /// Why challenge credentials are refused, on every platform (not supported by this transport):
    /// FoundationNetworking on Linux does not answer Digest challenges (its `_HTTPURLProtocol` says "doesn't
    /// currently handle digest authentication"), and the session delegate cancels every `401` challenge there,
    /// since one left unanswered hangs the task (swift-corelibs-foundation#5456). On Apple platforms the
    /// delegate could answer with a `URLCredential`; the transport does not implement it.
    /// - Parameter credentials: The request's challenge credentials.
    /// - Returns: The `invalidRequest` error a call with them fails with.
    public static func refusal(_ credentials: HTTPCredentials) -> ServerAPIError {
        ServerAPIError(
            .invalidRequest,
            "URLSessionTransport cannot answer \(credentials.scheme.rawValue) authentication challenges: not "
                + "supported by this transport (FoundationNetworking does not handle them); use CurlTransport")
    }

    /// Why this transport refuses `version`, or `nil` for `.http2`, what FoundationNetworking negotiates
    /// (see `Configuration.httpVersion`).
    /// - Parameter version: The configured HTTP versions.
    /// - Returns: The `invalidRequest` error every call fails with, or `nil`.
    public static func refusal(_ version: HTTPVersion) -> ServerAPIError? {
        guard version != .http2 else { return nil }
        return ServerAPIError(
            .invalidRequest,
            "URLSessionTransport cannot use HTTP version \(version): not supported by this transport (URLSession "
                + "has no setting for it; FoundationNetworking negotiates HTTP/2 over TLS, HTTP/1.1 for plain http); "
                + "use CurlTransport")
    }

    /// Checks what every transport refuses (see `TransportRequest.validate`), then what only this one does.
    static func validate(_ request: TransportRequest, defaultStallTimeout: StallTimeout?) throws(ServerAPIError) {
        try request.validateForSending(defaultStallTimeout: defaultStallTimeout)
        if request.unixSocketPath != nil {
            // FoundationNetworking has no way to connect a task to a Unix-domain socket.
            throw ServerAPIError(
                .invalidRequest, "URLSession cannot connect to a Unix-domain socket: use the curl transport")
        }
        if request.body.streamedBody != nil { throw streamedBodyRefusal }
        if let credentials = request.credentials { throw refusal(credentials) }
        // FoundationNetworking on Linux fails such URLs with NSURLErrorBadURL before sending anything;
        // Apple's loader requests them.
        #if canImport(FoundationNetworking)
            if request.url.host?.contains(":") == true {
                throw ServerAPIError(
                    .invalidRequest,
                    "URLSessionTransport cannot request an IPv6 address literal on Linux (FoundationNetworking "
                        + "refuses the URL); use a host name, or CurlTransport")
            }
        #endif
        if request.method == .get, try request.body.contentLength() > 0 {
            throw ServerAPIError(.invalidRequest, "URLSession cannot send a GET request with a body")
        }
    }
}
