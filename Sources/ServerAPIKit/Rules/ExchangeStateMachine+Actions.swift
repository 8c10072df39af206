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
