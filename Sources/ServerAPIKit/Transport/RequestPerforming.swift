/// A transport: sends one fully resolved request and returns the server's response.
///
/// The core knows transports only through this protocol. `URLSessionTransport`,
/// `CurlTransport` and `MockTransport` conform; the app picks one when it composes its
/// `ServerAPIManager`.
///
/// To write a conformer:
/// - Send `request.method` to `request.url` with exactly `request.headers` and the bytes of
///   `request.body` (stream `.file` and `.segments` from disk with `BodySource.makeReader()`;
///   never read a whole file into memory). Add `Content-Length` from `BodySource.contentLength()`
///   when the headers have none.
/// - Enforce `timeout`, `connectTimeout`, `maxResponseSize` and `redirects`.
/// - With a `download` target, write the body to disk as it arrives through a `DownloadFileWriter`,
///   which gives every transport the same resume, 404 and 416 semantics.
/// - Report progress through `request.progress`, from any thread, never after returning.
/// - Honour cancellation promptly: tear the connection down and throw `ServerAPIError` of kind
///   `cancelled`, including when cancellation came before the transfer started. Wrap the wait in
///   `request.withCancellationHandler(operation:onCancel:)`: it calls you for the caller's task and
///   for the call's `CancellationToken` (the manager's registry, scopes and handles) alike, and then
///   say so with `observesCancellationToken`. A transport that only honours task cancellation keeps
///   working: the manager then runs each `perform` in a task of its own that the token cancels.
/// - Throw only `ServerAPIError`, with the kind that says what went wrong.
///
/// A test double conforms the same way: see `MockTransport` in `ServerAPITesting`.
public protocol RequestPerforming: Sendable {
    /// A short name for logs and metrics, such as `"urlsession"` or `"curl"`.
    var name: String { get }

    /// Sends a request and returns the response, whatever its status.
    ///
    /// An HTTP error status is a response, not an error: the manager decides what it means.
    /// - Parameter request: The resolved request.
    /// - Returns: Status, headers, body (in memory or in the download file) and metrics.
    /// - Throws: `ServerAPIError` (cancelled, timed out, cannot connect, TLS, network, response too large, …).
    func perform(_ request: TransportRequest) async throws -> TransportResponse

    /// Whether `perform` ends promptly when `request.cancellation` fires, not only when its task is
    /// cancelled. `false` by default: the manager then gives each `perform` a task of its own.
    var observesCancellationToken: Bool { get }
}

extension RequestPerforming {
    /// `false`: the transport is assumed to honour task cancellation only.
    public var observesCancellationToken: Bool { false }
}
