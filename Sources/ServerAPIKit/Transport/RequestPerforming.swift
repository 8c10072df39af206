#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A transport: sends one fully resolved request and returns the server's response.
///
/// The core knows transports only through this protocol. `URLSessionTransport`,
/// `CurlTransport` and `MockTransport` conform; the app picks one when it composes its
/// `ServerAPIManager`.
///
/// To write a conformer (the helpers this package's transports share for these rules are `package`, not
/// public: a conformer of your own applies the rules itself):
/// - Before sending anything, refuse with `invalidRequest` a URL that is not `http`/`https` with a host, a
///   method that is not an HTTP token, a timeout that is not positive, and header names or values that are
///   not valid HTTP (a line break in one would inject a header).
/// - Send `request.method` to `request.url` with exactly `request.headers` and the bytes of
///   `request.body`: `BodySource.segments` in order, each `.file` segment streamed from disk (never
///   read a whole file into memory), and a `.stream` body read once with
///   `RequestBodyStream.makeChunks()`. Add `Content-Length` from `BodySource.contentLength()` when the
///   headers have none.
/// - Enforce `timeout`, `connectTimeout`, the size limit and `redirects`. The size limit is the request's
///   `maxResponseSize`, else 64 MiB for a body kept in memory (none for a download or a streamed body); a
///   body that announces or delivers more ends with `responseTooLarge`.
/// - With a `download` target, write the body to disk as it arrives, as `DownloadTarget` says: into its
///   partial file, moved onto the destination once complete, an error response kept in memory, a partial
///   file resumed with `Range`.
/// - Report progress through `request.progress`, from any thread, never after returning.
/// - Honour cancellation promptly: tear the connection down and throw `ServerAPIError` of kind
///   `cancelled`, including when cancellation came before the transfer started. Wrap the wait in
///   `request.withCancellationHandler(operation:onCancel:)`: it calls you for the caller's task and
///   for the manager's cancellation of the call (its registry's `cancel(id:)`, `cancel(tag:)`, first, last
///   and all, a `RequestScope`) alike, and then say so with `observesCallCancellation`. A transport that
///   only honours task cancellation keeps working: the manager then runs each `perform` in a task of its
///   own, which cancelling the call cancels.
/// - Throw only `ServerAPIError`, with the kind that says what went wrong.
/// - `stream(_:)` has a default: it sends the request with `perform` and delivers the whole body as one
///   chunk (`ResponseBodyStream(chunks:metrics:trailers:)`). To stream, implement it to return as soon as the
///   response head has arrived, with the body as `ResponseBodyStream(streaming:bufferSize:end:)` over the
///   transfer's chunks: they are read only as far as the caller has room for, and the sequence's task is
///   cancelled when the caller cancels or leaves.
///
/// What only a transport uses (the call's cancellation, a streamed body's chunks, the streamed response's
/// source, WebSocket connections and frames) is in the `Transport` SPI: `@_spi(Transport) import ServerAPIKit`.
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

    /// Sends a request and returns once the response head has arrived, with the body as a
    /// `ResponseBodyStream` (`TransportResponse.body` is `.stream`).
    ///
    /// For a streamed call, `request.timeout` bounds the time until the head; the body then runs as
    /// long as it keeps moving (`request.stallTimeout` applies) and until it is cancelled. Redirects are
    /// followed as in `perform`; `request.download` is never set. `request.maxResponseSize`, when set,
    /// applies to the body as it arrives and ends the stream with `responseTooLarge`.
    /// - Parameter request: The resolved request.
    /// - Returns: Status, headers, the streamed body, and the metrics as of the head (final ones are on
    ///   the body's `metrics` once it ends).
    /// - Throws: `ServerAPIError`, for failures before the head; later ones end the body's stream.
    func stream(_ request: TransportRequest) async throws -> TransportResponse

    /// Opens a WebSocket: sends the handshake for `request` (an `http`/`https` URL, the
    /// `Sec-WebSocket-Protocol` header the call asked for) and returns the server's answer with the open
    /// connection, or its refusal with the response's body.
    ///
    /// `request.timeout` is the core's to enforce (it bounds the handshake only); honour cancellation as
    /// `perform` does until this returns, and then through the connection's `close()`. The default throws
    /// `unsupported`: see `WebSocketConnection` to write one.
    /// - Parameter request: The resolved handshake request.
    /// - Returns: The handshake's response and, when the server switched protocols, the connection.
    /// - Throws: `ServerAPIError` (cannot connect, TLS, cancelled, unsupported, …).
    func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade

    /// Whether `perform` ends promptly when the manager cancels the call (`request.withCancellationHandler`
    /// reports it), not only when its task is cancelled. `false` by default: the manager then gives each
    /// `perform` a task of its own.
    var observesCallCancellation: Bool { get }

    /// Whether the transport sends a `BodySource.stream` body as it is read. `false` by default: a caller
    /// that has a body of unknown origin (a generated client's, say) then collects it before sending.
    var sendsStreamedRequestBodies: Bool { get }

    /// Whether the transport's WebSocket connections carry frames as they are, RSV1 included
    /// (`WebSocketFrame.rsv1`), both ways, and send the handshake's `Sec-WebSocket-Extensions` as the core writes it:
    /// the core then offers permessage-deflate (`WebSocket.Compression`) and does the compression itself. `false` by
    /// default: a transport that deals in whole messages (URLSession's WebSocket task) gets no offer.
    var carriesWebSocketExtensions: Bool { get }

    /// Shuts the transport down: from the call on, new requests fail at once with `shuttingDown`; those in flight
    /// get `gracePeriod` to finish and are then cancelled; returns once every request has ended and whatever the
    /// transport runs on (its threads, its session) is released. Calling it again, or concurrently, is safe.
    ///
    /// `ServerAPIManager.shutdown(gracePeriod:)` calls it (with `.zero`, its own calls having ended) for a
    /// transport the manager owns; the owner of a transport shared by several managers calls it once they are shut
    /// down. The default does nothing: a transport that holds no threads or connections (a test double) needs
    /// nothing more.
    /// - Parameter gracePeriod: How long requests in flight may take to finish before they are cancelled.
    func shutdown(gracePeriod: Duration) async
}

extension RequestPerforming {
    /// `false`: the transport is assumed to honour task cancellation only.
    public var observesCallCancellation: Bool { false }

    /// `false`: a transport says so when it streams request bodies.
    public var sendsStreamedRequestBodies: Bool { false }

    /// `false`: a transport says so when its WebSocket frames carry RSV1 (see `WebSocketFrame.rsv1`).
    public var carriesWebSocketExtensions: Bool { false }

    /// Does nothing: a transport with threads or connections of its own says how it shuts down.
    public func shutdown(gracePeriod: Duration) async {}

    /// Sends the request with `perform` and delivers the whole body as one chunk: what a transport that
    /// cannot stream gives a streamed call.
    public func stream(_ request: TransportRequest) async throws -> TransportResponse {
        var response = try await perform(request)
        let chunk: Data
        switch response.body {
        case .data(let data): chunk = data
        case .file(let url, _):
            do {
                chunk = try Data(contentsOf: url)
            } catch {
                throw ServerAPIError(.fileSystem, "the downloaded body could not be read", underlying: error)
            }
        case .stream: return response
        }
        response.body = .stream(
            ResponseBodyStream(chunks: [chunk], metrics: response.metrics, trailers: response.trailers))
        return response
    }
}
