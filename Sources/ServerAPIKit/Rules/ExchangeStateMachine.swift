/// The lifecycle of one call's exchange with the server, written once for every transport: a value that a
/// backend feeds with what its library reports (a response head, body bytes, the end, a cancellation) and
/// that answers each event with the action to take.
///
/// It applies `RedirectRule`, `ResponseSizeRule` and `DecompressionRule`, ignores 1xx heads, drops the body of a redirect it
/// follows or of a download that must start over, and turns a download that was already complete into a
/// 200. It does no I/O: a download's file is the backend's `DownloadFileWriter`, which the machine asks
/// the backend to consult (`HeadAction.decideDownload`) before the answer comes back (`downloadDecided`).
///
/// ```swift
/// var exchange = ExchangeStateMachine(download: request.download != nil)
/// // for each response head:
/// switch exchange.headReceived(status: status, headers: headers, request: request) {
/// case .interim, .dropBody, .ignore: break
/// case .receiveBody: break                                   // body to memory
/// case .decideDownload: _ = exchange.downloadDecided(try writer.receiveHead(status: status, headers: headers))
/// case .fail: stopTransfer()
/// }
/// // for each piece of the decoded body: switch exchange.bodyReceived(count: bytes.count) { … }
/// // at the end:
/// switch exchange.finished(failure: libraryError) {
/// case .deliver(let status): deliver(status)
/// case .follow(let next): request = next; sendAgain()
/// case .restart: writer.prepare(&request); sendAgain()
/// case .fail(let error): writer.abandon(); fail(error)
/// case .ignore: break
/// }
/// ```
///
/// Events in the wrong order never crash: a late event after the exchange ended is ignored (`.ignore`,
/// `.drop`), and an event that contradicts the exchange (body bytes before a head, a second final head)
/// fails it with a `network` error.
///
/// - Important: A plain value: the backend owns it and feeds it from one thread at a time. Events allocate
///   nothing beyond what the rules they apply allocate for a redirect or an error.
package struct ExchangeStateMachine: Sendable {
    private enum State: Sendable {
        case waitingForHead
        case decidingDownload
        case receivingBody(Sink)
        case followingRedirect(TransportRequest)
        case restartingDownload
        case failed(ServerAPIError)
        case finished
    }

    /// Where the body of the response being received goes.
    private enum Sink: Sendable {
        case memory
        case downloadWriter
        /// A download that was already complete: the body is counted and dropped, the response is a 200.
        case alreadyComplete
    }

    private var state = State.waitingForHead {
        didSet {
            awaitsHead = if case .waitingForHead = state { true } else { false }
            receivesBody = if case .receivingBody = state { true } else { false }
        }
    }
    private let download: Bool
    private let streamed: Bool
    private let redirectSource: Redirects
    /// The current request's size limit (`ResponseSizeRule.limit(for:streamed:)`), for the body as it arrives.
    private var limit: Int64?
    /// The current request's `maxDecompressionRatio`.
    private var ratio: Int?
    /// The `Content-Length` of the current content-coded body: its encoded size.
    private var encodedLength: Int64?

    /// The status of the current final head; 0 before one arrived.
    package private(set) var status = 0
    /// Decoded body bytes of the current response so far, kept or not.
    package private(set) var receivedBytes: Int64 = 0
    /// The decoded body length the current final head announced, when it did (see `ResponseSizeRule`).
    package private(set) var expectedLength: Int64?
    /// Whether the current final head announced a content coding (`Content-Encoding` other than `identity`):
    /// the body is decoded, and `DecompressionRule` applies. A backend that can count the encoded bytes
    /// passes them to `bodyReceived(count:encoded:)` then.
    package private(set) var isContentCoded = false
    /// Where the download writer put the current response's body; `nil` before it decided, or without a download.
    package private(set) var disposition: DownloadFileWriter.Disposition?
    /// Redirects followed so far.
    package private(set) var redirects = 0

    /// Creates the machine for one call.
    /// - Parameters:
    ///   - download: Whether the call downloads to a file (then a final head asks for the writer's decision).
    ///   - streamed: Whether the body is handed over as a stream (`RequestPerforming.stream`): then only the
    ///     request's own `maxResponseSize` applies, not the default limit of a body held in memory.
    ///   - redirects: Where the transport's library reports redirects.
    package init(download: Bool, streamed: Bool = false, redirects: Redirects = .inHeads) {
        self.download = download
        self.streamed = streamed
        self.redirectSource = redirects
    }

    /// Where the exchange is.
    package var phase: Phase {
        switch state {
        case .waitingForHead: .waitingForHead
        case .decidingDownload: .decidingDownload
        case .receivingBody: .receivingBody
        case .followingRedirect: .followingRedirect
        case .restartingDownload: .restartingDownload
        case .failed: .failed
        case .finished: .finished
        }
    }

    /// Whether the next head the library reports is one the machine wants: no final head has arrived yet.
    /// Stored (set with `state`), as `receivesBody` is: a transport asks at every header line and body piece, and
    /// reading a stored field does not copy the machine, where calling a getter from another module does.
    package private(set) var awaitsHead = true

    /// Whether body bytes now are the response's (not a dropped redirect's or restart's, not after the end).
    package private(set) var receivesBody = false

    // MARK: Events

    /// A response head arrived: 1xx, a redirect, or the final one.
    /// - Parameters:
    ///   - status: The head's status.
    ///   - headers: The head's fields.
    ///   - request: The request it answers (the caller's, or the previous redirect's target).
    /// - Returns: What to do with the head and the body that follows it.
    package mutating func headReceived(status: Int, headers: HTTPHeaders, request: TransportRequest) -> HeadAction {
        switch state {
        case .waitingForHead:
            break
        case .restartingDownload, .failed, .finished:
            return .ignore
        case .decidingDownload, .receivingBody, .followingRedirect:
            return .fail(fail(ServerAPIError(.network, "the server sent a second response head for one request")))
        }
        // A 1xx head (100 Continue, 103 Early Hints) is followed by the real one.
        if (100..<200).contains(status) { return .interim }
        guard status >= 200, status < 1000 else {
            return .fail(fail(ServerAPIError(.network, "the server's response has no valid status (\(status))")))
        }
        self.status = status
        receivedBytes = 0
        expectedLength = nil
        isContentCoded = false
        encodedLength = nil
        disposition = nil
        if redirectSource == .inHeads {
            // `Location` is looked up only for a redirect status: most heads are not redirects.
            let location = RedirectRule.redirects(status: status) ? headers["Location"] : nil
            switch RedirectRule.decide(request, status: status, location: location, followed: redirects) {
            case .deliver:
                break
            case .follow(var next):
                RedirectRule.carryCookies(headers, of: request, to: &next)
                state = .followingRedirect(next)
                return .dropBody(thenFollow: next)
            case .fail(let error):
                return .fail(fail(error))
            }
        }
        expectedLength = ResponseSizeRule.decodedLength(of: headers)
        let limit = ResponseSizeRule.limit(for: request, streamed: streamed)
        // Checked before a download's writer is asked, so a response that fails never touches the partial file.
        if let tooLarge = ResponseSizeRule.check(
            announced: expectedLength, status: status, method: request.method, limit: limit)
        {
            return .fail(fail(tooLarge))
        }
        self.limit = limit
        ratio = request.maxDecompressionRatio
        isContentCoded = DecompressionRule.isEncoded(headers)
        if isContentCoded { encodedLength = ResponseSizeRule.contentLength(of: headers) }
        if download {
            state = .decidingDownload
            return .decideDownload
        }
        state = .receivingBody(.memory)
        return .receiveBody
    }

    /// The download writer decided where the body of the final head goes (`DownloadFileWriter.receiveHead`).
    /// When the writer throws instead, report that with `failed(_:)`.
    /// - Parameter disposition: The writer's decision.
    /// - Returns: What to do with the body.
    package mutating func downloadDecided(_ disposition: DownloadFileWriter.Disposition) -> DownloadAction {
        switch state {
        case .decidingDownload:
            break
        case .restartingDownload, .failed, .finished:
            return .ignore
        case .waitingForHead, .receivingBody, .followingRedirect:
            return .fail(fail(ServerAPIError(.network, "a download was decided without a response head to decide")))
        }
        self.disposition = disposition
        switch disposition {
        case .file:
            state = .receivingBody(.downloadWriter)
            return .writeToFile
        case .memory:
            state = .receivingBody(.downloadWriter)
            return .keepInMemory
        case .alreadyComplete:
            state = .receivingBody(.alreadyComplete)
            return .alreadyComplete
        case .restart:
            state = .restartingDownload
            return .restart
        }
    }

    /// The library stopped at a redirect and asks whether to follow it (`Redirects.askedByLibrary` only).
    /// When the backend follows, it says so with `redirectFollowed()`; when it does not, the library then
    /// reports the redirect's head with `headReceived`, which delivers it.
    /// - Parameters:
    ///   - status: The redirect's status.
    ///   - location: Its `Location` header, as the server sent it.
    ///   - request: The request it answers.
    ///   - headers: The redirect's head, for the `Set-Cookie` lines a request with a cookie storage keeps.
    /// - Returns: `RedirectRule`'s decision; after `.fail` the machine has failed, and the library should
    ///   deliver the redirect's head so that the exchange can finish.
    package mutating func redirectReceived(
        status: Int, location: String?, request: TransportRequest, headers: HTTPHeaders = [:]
    ) -> RedirectDecision {
        switch state {
        case .waitingForHead:
            break
        case .failed(let error):
            return .fail(error)
        case .restartingDownload, .finished:
            return .deliver
        case .decidingDownload, .receivingBody, .followingRedirect:
            return .fail(fail(ServerAPIError(.network, "the server redirected in the middle of a response")))
        }
        guard redirectSource == .askedByLibrary else {
            return .fail(fail(ServerAPIError(.network, "a redirect was reported outside a response head")))
        }
        let decision = RedirectRule.decide(request, status: status, location: location, followed: redirects)
        switch decision {
        case .fail(let error):
            state = .failed(error)
        case .follow(var next):
            RedirectRule.carryCookies(headers, of: request, to: &next)
            return .follow(next)
        case .deliver:
            break
        }
        return decision
    }

    /// The encoded bytes a ratio is taken against: the encoded `Content-Length` when the response has one (a body
    /// whose whole stays within the ratio never passes ratio × that length, and a bomb is stopped there), else the
    /// library's running count. libcurl 8.x counts a read's bytes only after it has decoded them and handed them
    /// over, so its count lags by one read (0 during the first).
    private static func encodedSoFar(counted: Int64?, length: Int64?) -> Int64? {
        guard let length else { return counted }
        return max(length, counted ?? 0)
    }

    /// The backend followed the redirect `redirectReceived` decided to follow: one more redirect counts.
    package mutating func redirectFollowed() {
        guard case .waitingForHead = state else { return }
        redirects += 1
    }

    /// The next decoded body bytes arrived.
    /// - Parameters:
    ///   - count: How many.
    ///   - encoded: The encoded body bytes received so far, these included, when the library counts them
    ///     (only consulted when `isContentCoded`, and only without an encoded `Content-Length`).
    /// - Returns: Where they go, or the failure when the body has become too large or expands too much.
    package mutating func bodyReceived(count: Int, encoded: Int64? = nil) -> BodyAction {
        let sink: Sink
        switch state {
        case .receivingBody(let current):
            sink = current
        case .followingRedirect, .restartingDownload, .failed, .finished:
            return .drop
        case .waitingForHead, .decidingDownload:
            return .fail(fail(ServerAPIError(.network, "the server sent body bytes before the response head")))
        }
        receivedBytes += Int64(count)
        if let tooLarge = ResponseSizeRule.check(received: receivedBytes, status: status, limit: limit) {
            return .fail(fail(tooLarge))
        }
        if isContentCoded,
            let bomb = DecompressionRule.check(
                decoded: receivedBytes, encoded: Self.encodedSoFar(counted: encoded, length: encodedLength),
                ratio: ratio, status: status)
        {
            return .fail(fail(bomb))
        }
        switch sink {
        case .memory: return .keep
        case .downloadWriter: return .write
        case .alreadyComplete: return .drop
        }
    }

    /// The backend stopped the exchange itself: its download writer or request body failed, or it could not
    /// build the next request. `finished` then reports `error`; an earlier failure is kept.
    /// - Parameter error: Why.
    package mutating func failed(_ error: ServerAPIError) {
        switch state {
        case .failed, .finished: return
        default: state = .failed(error)
        }
    }

    /// The library says the exchange ended.
    /// - Parameter failure: The library's own failure (connection lost, timeout), or `nil` when the response
    ///   ended normally. A failure the machine decided first wins: the library's is its consequence.
    /// - Returns: What the call does next. After `.follow` and `.restart` the machine waits for the next
    ///   exchange's head.
    package mutating func finished(failure: ServerAPIError? = nil) -> FinishAction {
        switch state {
        case .failed(let error):
            state = .finished
            return .fail(error)
        case .restartingDownload:
            startOver()
            return .restart
        case .finished:
            return .ignore
        case .waitingForHead, .decidingDownload, .receivingBody, .followingRedirect:
            break
        }
        if let failure {
            state = .finished
            return .fail(failure)
        }
        switch state {
        case .followingRedirect(let next):
            redirects += 1
            startOver()
            return .follow(next)
        case .receivingBody(let sink):
            state = .finished
            return .deliver(status: sink == .alreadyComplete ? 200 : status)
        case .decidingDownload:
            state = .finished
            return .fail(ServerAPIError(.network, "the response ended before the download decided where it goes"))
        default:
            state = .finished
            return .fail(ServerAPIError(.network, "the request completed without a response"))
        }
    }

    /// The call was cancelled, or the backend ends the exchange without finishing it (shutdown, a request
    /// that cannot be sent again).
    /// - Returns: `.stop` unless the exchange had already finished.
    package mutating func cancelled() -> CancelAction {
        if case .finished = state { return .ignore }
        state = .finished
        return .stop
    }

    /// Waits for the head of the next exchange (a redirect's target, a restarted download).
    private mutating func startOver() {
        state = .waitingForHead
        status = 0
        receivedBytes = 0
        expectedLength = nil
        isContentCoded = false
        encodedLength = nil
        disposition = nil
    }

    /// Moves to `failed` with `error`, and returns it.
    private mutating func fail(_ error: ServerAPIError) -> ServerAPIError {
        state = .failed(error)
        return error
    }
}

// MARK: - Phases and actions

extension ExchangeStateMachine {
    /// Where an exchange is, for a backend that needs to know (and for tests).
    package enum Phase: Sendable, Hashable {
        /// No final head yet: 1xx heads may come first.
        case waitingForHead
        /// A download's final head arrived: the backend asks its `DownloadFileWriter` where the body goes.
        case decidingDownload
        /// The body of the response the caller gets is arriving.
        case receivingBody
        /// The response is a redirect that will be followed when the exchange finishes: its body is dropped.
        case followingRedirect
        /// The download must be sent again from the start: this response's body is dropped.
        case restartingDownload
        /// An event or the backend stopped the exchange with an error; `finished` reports it.
        case failed
        /// The exchange is over (delivered, failed or cancelled): every further event is ignored.
        case finished
    }

    /// What a backend does with a response head (see `headReceived(status:headers:request:)`).
    package enum HeadAction: Sendable {
        /// A 1xx head: ignore it and wait for the final head.
        case interim
        /// The body is the caller's, kept in memory: feed it to `bodyReceived(count:)`.
        case receiveBody
        /// The call downloads to a file: ask the writer (`DownloadFileWriter.receiveHead`) where the body goes,
        /// then report the answer with `downloadDecided(_:)`.
        case decideDownload
        /// The response is a redirect to follow once the exchange finishes: its body is not the caller's.
        case dropBody(thenFollow: TransportRequest)
        /// Stop the transfer: the exchange failed (too many redirects, a redirect that is not http(s), an
        /// announced body over the limit, a head in the wrong place). `finished` reports the error again.
        case fail(ServerAPIError)
        /// The exchange has already ended or is about to be sent again: nothing to do.
        case ignore
    }

    /// What a backend does once its download writer has decided where the body goes
    /// (see `downloadDecided(_:)`).
    package enum DownloadAction: Sendable {
        /// Write the body to the file (appending for a resume): the writer reports the bytes on disk.
        case writeToFile
        /// An error response: hand the body to the writer, which keeps it in memory.
        case keepInMemory
        /// The partial file already is the whole resource: the body is dropped. The backend may end the
        /// exchange now (`finished`), or let the body drain; either way the response is delivered as a 200.
        case alreadyComplete
        /// The response cannot be used: stop the transfer and call `finished`, which says `.restart`.
        case restart
        /// Stop the transfer: the decision came in the wrong place. `finished` reports the error again.
        case fail(ServerAPIError)
        /// The exchange has already ended: nothing to do.
        case ignore
    }

    /// What a backend does with the next decoded body bytes (see `bodyReceived(count:)`).
    package enum BodyAction: Sendable {
        /// Append them to the body kept in memory.
        case keep
        /// Hand them to the download writer (`DownloadFileWriter.write`).
        case write
        /// They are not the caller's (a redirect's body, a download that restarts or is already complete,
        /// an exchange that has ended): let them go.
        case drop
        /// Stop the transfer: the body is over the limit, or came before its head. `finished` reports it again.
        case fail(ServerAPIError)
    }

    /// What a backend does when its library says the exchange ended (see `finished(failure:)`).
    package enum FinishAction: Sendable {
        /// Deliver the response with this status (200 for a download that was already complete).
        case deliver(status: Int)
        /// Send this request next: the redirect's target, rewritten by `RedirectRule`.
        case follow(TransportRequest)
        /// Send the download's request again, after `DownloadFileWriter.prepare(_:)`.
        case restart
        /// End the call with this error (the download's partial file is kept for a resume).
        case fail(ServerAPIError)
        /// The exchange had already finished: nothing to do.
        case ignore
    }

    /// What a backend does when the exchange is cancelled (see `cancelled()`).
    package enum CancelAction: Sendable, Hashable {
        /// Tear the transfer down, abandon the download (keeping its partial file) and fail the call.
        case stop
        /// The exchange had already finished: nothing to do.
        case ignore
    }

    /// Where the transport's library reports redirects.
    package enum Redirects: Sendable, Hashable {
        /// Every head arrives through `headReceived`, redirects included, and the machine decides there
        /// whether to follow (libcurl without `CURLOPT_FOLLOWLOCATION`).
        case inHeads
        /// The library stops at each redirect and asks first (`redirectReceived`); a head that reaches
        /// `headReceived` is always the caller's (FoundationNetworking's redirect delegate call).
        case askedByLibrary
    }
}
