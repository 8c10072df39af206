#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A call's response whose body arrives as it is read: what `ServerAPIManager.stream(_:)` returns as soon
/// as the response head has arrived.
///
/// ```swift
/// let response = try await manager.stream(ServerAPI(host: "https://api.example.com", path: "/events"))
/// for try await event in response.events {
///     print(event.type, event.data)
/// }
/// let metrics = await response.finalMetrics
/// ```
/// Read the body once, through one of its views: `body` (byte chunks), `lines` (UTF-8 text lines) or
/// `events` (server-sent events). Leaving the loop early, cancelling the reading task, `cancel()` or the
/// manager's `cancel(id:)`, `cancel(tag:)`, `cancelFirst()`, `cancelLast()` and `cancelAll()` end the
/// body with a `cancelled` error and stop the transfer; the call stays in the manager's `inFlight` list
/// until its body ends.
public struct StreamedResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, in order.
    public var headers: HTTPHeaders
    /// The URL that answered, after redirects.
    public var url: URL
    /// The call's id.
    public var requestID: RequestID
    /// What was measured up to the response head; `finalMetrics` has the figures for the whole body.
    public var metrics: RequestMetrics
    /// The body, as byte chunks, read once.
    public let body: ResponseBodyStream

    /// The trailer fields that followed the body, once it has been read to its end; empty before, and when
    /// the response had none.
    ///
    /// ```swift
    /// let data = try await response.body.collect(upTo: 1 << 20)
    /// let checksum = response.trailers["X-Checksum"]
    /// ```
    public var trailers: HTTPHeaders { body.trailers }
    let completion: StreamCompletion

    /// The body as lines of UTF-8 text (`\n`, `\r\n` or `\r`), each at most 1 MiB.
    public var lines: ResponseLines { ResponseLines(body) }

    /// The body as lines of UTF-8 text, with a limit on a line's length.
    /// - Parameter maximumLineLength: The longest line accepted, in bytes; a longer one ends the
    ///   sequence with `responseTooLarge`.
    public func lines(maximumLineLength: Int) -> ResponseLines {
        ResponseLines(body, maximumLineLength: maximumLineLength)
    }

    /// The body as server-sent events (`text/event-stream`), parsed as the WHATWG HTML specification says.
    public var events: ServerSentEvents { ServerSentEvents(body) }

    /// The body as server-sent events, with limits.
    /// - Parameters:
    ///   - lastEventID: The last event id of an earlier connection, reported until the server sends one.
    ///   - maximumLineLength: The longest line accepted, in bytes.
    ///   - maximumDataSize: The largest data an event may carry, in bytes.
    public func events(
        lastEventID: String = "", maximumLineLength: Int = LineSplitter.defaultMaximumLineLength,
        maximumDataSize: Int = ServerSentEventParser.defaultMaximumDataSize
    ) -> ServerSentEvents {
        ServerSentEvents(
            body, lastEventID: lastEventID, maximumLineLength: maximumLineLength, maximumDataSize: maximumDataSize)
    }

    /// The call's metrics once its body has ended (read to its end, failed or cancelled): the whole
    /// duration, the bytes received, the transport's final figures. Waits until then.
    public var finalMetrics: RequestMetrics {
        get async { await completion.wait() }
    }

    /// Ends the body with `cancelled` and stops the transfer.
    public func cancel() { body.cancel() }
}

/// The end of a streamed call: its final metrics, for whoever waits on `StreamedResponse.finalMetrics`.
final class StreamCompletion: Sendable {
    private struct State {
        var metrics: RequestMetrics?
        var waiters: [UnsafeContinuation<RequestMetrics, Never>] = []
    }

    private let state = Locked(State())

    func finish(_ metrics: RequestMetrics) {
        let waiters = state.withLock { state -> [UnsafeContinuation<RequestMetrics, Never>] in
            guard state.metrics == nil else { return [] }
            state.metrics = metrics
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: metrics) }
    }

    func wait() async -> RequestMetrics {
        await withUnsafeContinuation { waiter in
            let metrics = state.withLock { state -> RequestMetrics? in
                if let metrics = state.metrics { return metrics }
                state.waiters.append(waiter)
                return nil
            }
            if let metrics { waiter.resume(returning: metrics) }
        }
    }
}
