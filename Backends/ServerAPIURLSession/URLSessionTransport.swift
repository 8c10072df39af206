import Foundation
import ServerAPIKit

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

    /// `true`: a call's `CancellationToken` cancels its `URLSessionTask` as its task's cancellation does.
    public var observesCancellationToken: Bool { true }
    /// The settings this transport was created with.
    public let configuration: Configuration

    let session: URLSession
    let delegate: SessionDelegate
    /// The serial queue every delegate callback of the session runs on.
    let callbackQueue: CallbackQueue
    /// Where tasks are created, resumed and cancelled: those calls wait for FoundationNetworking's
    /// thread, so they never run on the Swift concurrency pool or in a callback (see CallbackQueue).
    let control = DispatchQueue(label: "ServerAPIURLSession.control")

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
        // The transport enforces each request's total timeout itself; the session's limits stay out of the way.
        sessionConfiguration.timeoutIntervalForResource = 7 * 24 * 3600
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

    deinit {
        // The session holds its delegate until it is invalidated; invalidating waits for
        // FoundationNetworking's thread, so it happens on the control queue.
        let session = self.session
        control.async { session.invalidateAndCancel() }
    }

    /// Sends a request through the session and returns the response, whatever its status.
    /// - Parameter request: The resolved request.
    /// - Returns: Status, headers, body (in memory or in the download file) and metrics.
    /// - Throws: `ServerAPIError`: `cancelled`, `timedOut`, `cannotConnect`, `network`, `tls`,
    ///   `tooManyRedirects`, `responseTooLarge`, `fileSystem` or `invalidRequest`.
    public func perform(_ request: TransportRequest) async throws -> TransportResponse {
        let transfer: Transfer
        do {
            try Self.validate(request, defaultStallTimeout: configuration.stallTimeout)
            transfer = try Transfer(request: request, transport: self)
        } catch {
            throw error.with(requestID: request.id, url: request.url)
        }
        return try await request.withCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.start(continuation)
            }
        } onCancel: {
            transfer.fail(.cancelled().with(requestID: request.id, url: request.url))
        }
    }

    /// Why a request body from an `AsyncSequence` is refused: FoundationNetworking on Linux reads a body
    /// stream synchronously on the session's one transfer thread and takes "no bytes available" for the
    /// end of the body, so a body that is produced while it is sent can neither wait for its producer nor
    /// pause the transfer. `CurlTransport` sends one.
    static let streamedBodyRefusal = ServerAPIError(
        .invalidRequest,
        "URLSessionTransport cannot send a streamed request body (FoundationNetworking reads body streams "
            + "synchronously); use CurlTransport, or a file or in-memory body")

    /// Checks what every transport refuses (see `TransportRequest.validate`), then what only this one does.
    static func validate(_ request: TransportRequest, defaultStallTimeout: StallTimeout?) throws(ServerAPIError) {
        try request.validateForSending(defaultStallTimeout: defaultStallTimeout)
        if request.body.streamedBody != nil { throw streamedBodyRefusal }
        if request.method == .get, try request.body.contentLength() > 0 {
            throw ServerAPIError(.invalidRequest, "URLSession cannot send a GET request with a body")
        }
    }
}
