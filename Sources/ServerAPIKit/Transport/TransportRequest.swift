#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A fully resolved request, ready for a transport: every default applied, every value validated.
public struct TransportRequest: Sendable {
    // Every field is in one copy-on-write box: a request is copied into every step of the pipeline and into
    // the transport's job, and each async frame that holds a copy stays allocated while the call is in flight.
    // Writing what `prepare()` checks makes the request unprepared again: the URL, the method and the
    // headers here, the transfer's limits in `transfer`'s accessor (which compares only those).
    private struct Fields: Sendable {
        var id: RequestID
        var url: URL { didSet { isPrepared = false } }
        var method: HTTPMethod { didSet { isPrepared = false } }
        var headers: HTTPHeaders { didSet { isPrepared = false } }
        var body: BodySource
        var transfer: ServerAPI.Transfer
        var progress: (@Sendable (TransferProgress) -> Void)?
        var cookies: RequestCookies?
        var credentials: HTTPCredentials?
        var isPrepared = false
    }

    private var fields: CopyOnWrite<Fields>
    // Outside the box: each attempt sets them on a copy of the call's request, which then shares the box.
    private var _attempt: Int
    private var _call: Call?

    /// The id of the call this request belongs to.
    public var id: RequestID {
        get { fields.value.id }
        _modify { yield &fields.value.id }
    }
    /// The absolute URL, with the query already encoded.
    public var url: URL {
        get { fields.value.url }
        _modify { yield &fields.value.url }
    }
    /// The HTTP method, sent as it is (checked to be a token by `prepare()`).
    public var method: HTTPMethod {
        get { fields.value.method }
        _modify { yield &fields.value.method }
    }
    /// The headers to send, exactly (including `Content-Type` when there is a body).
    public var headers: HTTPHeaders {
        get { fields.value.headers }
        _modify { yield &fields.value.headers }
    }
    /// The body's source: empty, bytes in memory, a file, or a stream.
    public var body: BodySource {
        get { fields.value.body }
        _modify { yield &fields.value.body }
    }
    /// The call's limits, redirect policy, Unix socket and download file, as the call set them
    /// (`ServerAPI.transfer`, with the socket a `http+unix://` URL names): what a transport enforces.
    /// Its fields are also read and written as properties of the request (`timeout`, `redirects`, …).
    package var transfer: ServerAPI.Transfer {
        get { fields.value.transfer }
        _modify {
            let checked = (
                fields.value.transfer.timeout, fields.value.transfer.stallTimeout, fields.value.transfer.unixSocketPath
            )
            yield &fields.value.transfer
            // Only what `prepare()` checks makes the request unprepared again.
            if checked != (
                fields.value.transfer.timeout, fields.value.transfer.stallTimeout, fields.value.transfer.unixSocketPath
            ) {
                fields.value.isPrepared = false
            }
        }
    }
    /// Called with upload and download progress, from any thread.
    public var progress: (@Sendable (TransferProgress) -> Void)? {
        get { fields.value.progress }
        _modify { yield &fields.value.progress }
    }
    /// The attempt number, from 1.
    public var attempt: Int {
        get { _attempt }
        set { _attempt = newValue }
    }
    /// The manager's call this request is an attempt of: what its in-flight registry and scopes cancel.
    /// `nil` when the request is not the manager's. A transport observes it, and the caller's task, through
    /// `withCancellationHandler(operation:onCancel:)` and `isCancelled`.
    var call: Call? {
        get { _call }
        set { _call = newValue }
    }
    /// The cookie storage the call uses, if any: each redirect's `Set-Cookie` is stored in it and the
    /// next hop's `Cookie` header comes from it (see `RequestCookies`, `RedirectRule.carryCookies`).
    package var cookies: RequestCookies? {
        get { fields.value.cookies }
        _modify { yield &fields.value.cookies }
    }
    /// Credentials the transport answers an authentication challenge with (Digest); `nil` for none.
    /// Dropped on a redirect to another origin. A transport that cannot answer the scheme refuses the call.
    public var credentials: HTTPCredentials? {
        get { fields.value.credentials }
        _modify { yield &fields.value.credentials }
    }
    /// Whether `prepare()` checked the request and nothing it checks (URL, method, headers, timeout,
    /// stall timeout, Unix socket) changed since: a transport then sends it without checking again.
    package internal(set) var isPrepared: Bool {
        get { fields.value.isPrepared }
        set { fields.value.isPrepared = newValue }
    }

    /// Creates a request from its parts, with every limit given one by one.
    public init(
        id: RequestID = RequestID.next(),
        url: URL,
        method: HTTPMethod = .get,
        headers: HTTPHeaders = [:],
        body: BodySource = .empty,
        timeout: Duration = .seconds(60),
        connectTimeout: Duration? = nil,
        stallTimeout: StallTimeout? = nil,
        download: DownloadTarget? = nil,
        maxResponseSize: Int64? = nil,
        maxDecompressionRatio: Int? = DecompressionRule.defaultRatio,
        redirects: RedirectPolicy = .follow(max: 10),
        progress: (@Sendable (TransferProgress) -> Void)? = nil,
        attempt: Int = 1
    ) {
        fields = CopyOnWrite(
            Fields(
                id: id, url: url, method: method, headers: headers, body: body,
                transfer: ServerAPI.Transfer(
                    timeout: timeout, connectTimeout: connectTimeout, stallTimeout: stallTimeout, download: download,
                    maxResponseSize: maxResponseSize, maxDecompressionRatio: maxDecompressionRatio,
                    redirects: redirects),
                progress: progress))
        _attempt = attempt
    }

    /// Creates a request that carries a call's transfer settings as they are: how `ServerAPI` makes its
    /// transport request, so that a limit added to `ServerAPI.Transfer` reaches every transport unchanged.
    /// - Parameters:
    ///   - id: The id of the call.
    ///   - url: The absolute URL, with the query encoded.
    ///   - method: The method.
    ///   - headers: The headers to send, exactly.
    ///   - body: The body's source.
    ///   - transfer: The limits, redirect policy, socket and download file.
    ///   - attempt: The attempt number, from 1.
    package init(
        id: RequestID = RequestID.next(),
        url: URL,
        method: HTTPMethod = .get,
        headers: HTTPHeaders = [:],
        body: BodySource = .empty,
        transfer: ServerAPI.Transfer,
        attempt: Int = 1
    ) {
        fields = CopyOnWrite(
            Fields(
                id: id, url: url, method: method, headers: headers, body: body, transfer: transfer, progress: nil))
        _attempt = attempt
    }

    /// Runs a transport's work for this request, calling `onCancel` once when the call is cancelled:
    /// by its caller's task, or through the manager (its registry's `cancel(id:)`, `cancel(tag:)`, first, last
    /// and all, a `RequestScope`).
    ///
    /// In the `Transport` SPI, with `isCancelled` (`@_spi(Transport) import ServerAPIKit`): for writing a transport.
    ///
    /// ```swift
    /// try await request.withCancellationHandler {
    ///     try await withCheckedThrowingContinuation { continuation in transfer.start(continuation) }
    /// } onCancel: {
    ///     transfer.cancel()
    /// }
    /// ```
    /// - Parameters:
    ///   - isolation: The actor `operation` runs on: the caller's, by default.
    ///   - operation: The transfer.
    ///   - onCancel: Tears the transfer down; runs on any thread, at once if the call is already cancelled.
    /// - Returns: What `operation` returns.
    @_spi(Transport) public func withCancellationHandler<T, E: Error>(
        isolation: isolated (any Actor)? = #isolation,
        operation: () async throws(E) -> T,
        onCancel: @escaping @Sendable () -> Void
    ) async throws(E) -> T {
        if let call {
            return try await call.withCancellationHandler(operation: operation, onCancel: onCancel)
        }
        let result: Result<T, E> = await withTaskCancellationHandler {
            do throws(E) { return .success(try await operation()) } catch { return .failure(error) }
        } onCancel: {
            onCancel()
        }
        return try result.get()
    }

    /// Runs work that honours only task cancellation (a sleep, a plugin's wait) so that cancelling the call ends
    /// it too: in a task of its own for a request of the manager's, directly otherwise.
    package func runCancellable<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let call else { return try await work() }
        return try await call.run(work)
    }

    /// Whether the call was cancelled, through the manager or by its caller's task.
    @_spi(Transport) public var isCancelled: Bool { call?.isCancelled ?? Task.isCancelled }
}

// The transfer settings (`ServerAPI.Transfer`), read and written as the request's own properties, as on `ServerAPI`.
extension TransportRequest {
    /// The call's ``ServerAPI/timeout`` (`transfer.timeout`).
    public var timeout: Duration {
        get { transfer.timeout }
        set { transfer.timeout = newValue }
    }

    /// The call's ``ServerAPI/connectTimeout`` (`transfer.connectTimeout`).
    public var connectTimeout: Duration? {
        get { transfer.connectTimeout }
        set { transfer.connectTimeout = newValue }
    }

    /// The call's ``ServerAPI/stallTimeout`` (`transfer.stallTimeout`).
    public var stallTimeout: StallTimeout? {
        get { transfer.stallTimeout }
        set { transfer.stallTimeout = newValue }
    }

    /// The call's ``ServerAPI/download`` (`transfer.download`).
    public var download: DownloadTarget? {
        get { transfer.download }
        set { transfer.download = newValue }
    }

    /// The call's ``ServerAPI/maxResponseSize`` (`transfer.maxResponseSize`).
    public var maxResponseSize: Int64? {
        get { transfer.maxResponseSize }
        set { transfer.maxResponseSize = newValue }
    }

    /// The call's ``ServerAPI/maxDecompressionRatio`` (`transfer.maxDecompressionRatio`).
    public var maxDecompressionRatio: Int? {
        get { transfer.maxDecompressionRatio }
        set { transfer.maxDecompressionRatio = newValue }
    }

    /// The call's ``ServerAPI/redirects`` (`transfer.redirects`).
    public var redirects: RedirectPolicy {
        get { transfer.redirects }
        set { transfer.redirects = newValue }
    }

    /// The call's ``ServerAPI/unixSocketPath`` (`transfer.unixSocketPath`).
    public var unixSocketPath: String? {
        get { transfer.unixSocketPath }
        set { transfer.unixSocketPath = newValue }
    }
}

// MARK: - Validation

extension TransportRequest {
    /// Checks what every transport refuses the same way before it sends anything: a URL that is not
    /// http(s) with a host, a method that is not an HTTP token (a line break in it would inject a header),
    /// a timeout that is not positive, a stall limit that cannot be enforced, and header names or values
    /// that are not valid HTTP.
    ///
    /// Checked by the transport rather than trusted: a header with a line break would inject another
    /// header, and a transport may be handed requests that did not come through `ServerAPIManager`.
    /// - Parameter stallTimeout: The stall limit in force: the request's own, else the transport's default.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` that says what is wrong.
    package func validate(stallTimeout: StallTimeout?) throws(ServerAPIError) {
        guard let scheme = url.scheme, ServerOrigin.isHTTP(scheme), url.host?.isEmpty == false else {
            throw .notHTTPURL(url)
        }
        guard HTTPMethod.isToken(method) else { throw .notTokenMethod(method) }
        try validateTransfer(stallTimeout: stallTimeout)
    }

    /// What `validate(stallTimeout:)` checks after the URL and the method.
    private func validateTransfer(stallTimeout: StallTimeout?) throws(ServerAPIError) {
        guard timeout > .zero else {
            throw ServerAPIError(.invalidRequest, "the timeout must be positive, not \(timeout)")
        }
        if let stallTimeout, !stallTimeout.isValid {
            throw ServerAPIError(.invalidRequest, "the stall timeout must be positive, not \(stallTimeout)")
        }
        try headers.validate()
        if let unixSocketPath { try UnixSocket.validate(unixSocketPath) }
    }

    /// Checks the request (see `validate(stallTimeout:)`) and marks it prepared, so that the transport
    /// does not check it again. The manager prepares each request once, after the plugins' `prepare`.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` that says what is wrong.
    package mutating func prepare() throws(ServerAPIError) {
        try validate(stallTimeout: stallTimeout)
        isPrepared = true
    }

    /// `prepare()` for a request made from a description's resolution (`ServerAPI.transportRequest`): its URL was
    /// checked when the description was resolved, and whether its method is a token was kept with it, so that a
    /// description sent again does not parse its URL's host and scheme again.
    /// - Parameter methodIsToken: The resolution's check of the method.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` that says what is wrong, as `prepare()` would.
    package mutating func prepare(resolvedMethodIsToken methodIsToken: Bool) throws(ServerAPIError) {
        guard methodIsToken else { throw .notTokenMethod(method) }
        try validateTransfer(stallTimeout: stallTimeout)
        isPrepared = true
    }

    /// What a transport calls before it sends: the whole check for a request that was not prepared
    /// (or changed since), and for a prepared one only the transport's own default stall limit.
    /// - Parameter defaultStallTimeout: The transport's stall limit for requests that set none.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` that says what is wrong.
    package func validateForSending(defaultStallTimeout: StallTimeout?) throws(ServerAPIError) {
        guard isPrepared else { return try validate(stallTimeout: stallTimeout ?? defaultStallTimeout) }
        if stallTimeout == nil, let defaultStallTimeout, !defaultStallTimeout.isValid {
            throw ServerAPIError(.invalidRequest, "the stall timeout must be positive, not \(defaultStallTimeout)")
        }
    }
}

extension HTTPMethod {
    /// Whether the method is an RFC 9110 token: what every transport sends, and nothing that could end the line.
    static func isToken(_ method: HTTPMethod) -> Bool {
        !method.rawValue.isEmpty && method.rawValue.utf8.allSatisfy(HTTPHeaders.isTokenByte)
    }
}

extension ServerAPIError {
    /// A method that is not an HTTP token.
    static func notTokenMethod(_ method: HTTPMethod) -> ServerAPIError {
        ServerAPIError(.invalidRequest, "the method \"\(method.rawValue)\" is not a valid HTTP token")
    }
}

// MARK: - What a transfer is made of

/// Whether redirects are followed.
public enum RedirectPolicy: Sendable, Hashable {
    /// Redirects are returned as responses (3xx with `Location`).
    case none
    /// Up to `max` redirects are followed; one more fails with `tooManyRedirects`.
    /// `Authorization`, `Cookie`, `Proxy-Authorization` and a caller's `Host` are never forwarded to another origin
    /// (see `RedirectRule`).
    case follow(max: Int)

    /// The most redirects to follow (0 for `.none`).
    public var maxRedirects: Int {
        switch self {
        case .none: 0
        case .follow(let max): max
        }
    }
}

/// Where a download goes, and whether to resume a partial one.
///
/// A download is written to `partialURL` (the destination plus `.part`) as it arrives and
/// moved onto `destination` only once it is complete, so `destination` never holds a half
/// file or an error body. With `resume`, an existing partial file is continued with
/// `Range: bytes=N-` (and `If-Range` when a validator was recorded).
public struct DownloadTarget: Sendable, Hashable {
    /// The file the complete download is moved to.
    public var destination: URL
    /// Whether to continue an existing partial file.
    public var resume: Bool

    /// Creates a target: the body goes to `destination`, through a `.part` file, continued when `resume` is true.
    public init(destination: URL, resume: Bool = false) {
        self.destination = destination
        self.resume = resume
    }

    /// Where the download is written while it is in progress.
    public var partialURL: URL { URL(fileURLWithPath: destination.path + ".part") }

    /// Where the partial file's validator (ETag or Last-Modified) is kept for `If-Range`.
    public var validatorURL: URL { URL(fileURLWithPath: destination.path + ".part.validator") }
}

/// Bytes moved so far in one direction.
public struct TransferProgress: Sendable, Hashable {
    /// Which way the bytes go.
    public enum Direction: Sendable, Hashable {
        /// The request body, on its way to the server.
        case upload
        /// The response body, on its way from the server.
        case download
    }

    /// Which way the bytes go.
    public var direction: Direction
    /// Bytes moved so far (for a resumed download, including what was already on disk).
    public var completed: Int64
    /// The expected total, when known.
    public var total: Int64?

    /// Creates a report of bytes moved so far in one direction; transports make them.
    public init(direction: Direction, completed: Int64, total: Int64?) {
        self.direction = direction
        self.completed = completed
        self.total = total
    }

    /// The fraction done, when the total is known.
    public var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return Double(completed) / Double(total)
    }
}
