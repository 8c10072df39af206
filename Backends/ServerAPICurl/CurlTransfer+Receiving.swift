internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The C callbacks libcurl calls on the loop thread, from inside curl_multi_socket_action (curl_multi_perform
// where there is no epoll). They are global functions (no captures, so they convert to C function pointers)
// and find their transfer through the unretained context pointer; CurlLoopRunner keeps that transfer alive
// meanwhile.

private func transfer(_ context: UnsafeMutableRawPointer) -> CurlTransfer {
    Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
}

/// CURLOPT_WRITEFUNCTION: body bytes (decoded). Returning less than given stops the transfer.
func curlWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let context else { return 0 }
    guard let data, length > 0 else { return length }
    let transfer = transfer(context)
    // Bytes offered while the stream's reader holds the transfer paused stay with libcurl, which delivers
    // them again once receiving resumes (see CurlTransfer+Streaming).
    if transfer.holdsBackBody { return Int(CURL_WRITEFUNC_PAUSE) }
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// CURLOPT_HEADERFUNCTION: one header line at a time, status lines and blank lines included.
func curlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let context, let data else { return 0 }
    return transfer(context).receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// CURLOPT_READFUNCTION: the next bytes of the request body; 0 at its end.
func curlReadCallback(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let context, let buffer else { return Int(CURL_READFUNC_ABORT) }
    return transfer(context).sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
}

/// CURLOPT_TRAILERFUNCTION: the trailer fields after a chunked request body. libcurl frees the list.
func curlTrailerCallback(
    _ list: UnsafeMutablePointer<UnsafeMutablePointer<curl_slist>?>?, _ context: UnsafeMutableRawPointer?
) -> Int32 {
    guard let context, let list else { return Int32(CURL_TRAILERFUNC_ABORT) }
    return transfer(context).sendTrailers(into: list)
}

/// CURLOPT_SEEKFUNCTION: rewinds the request body when libcurl sends it again.
func curlSeekCallback(_ context: UnsafeMutableRawPointer?, _ offset: curl_off_t, _ origin: Int32) -> Int32 {
    guard let context else { return Int32(CURL_SEEKFUNC_FAIL) }
    return transfer(context).rewindBody(to: Int64(offset), origin: origin)
}

/// CURLOPT_XFERINFOFUNCTION: bytes moved so far. Returning non-zero would abort the transfer.
func curlProgressCallback(
    _ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloaded: curl_off_t,
    _ uploadTotal: curl_off_t, _ uploaded: curl_off_t
) -> Int32 {
    guard let context else { return 0 }
    transfer(context).reportProgress(
        downloaded: Int64(downloaded), downloadTotal: Int64(downloadTotal), uploaded: Int64(uploaded),
        uploadTotal: Int64(uploadTotal))
    return 0
}

/// One line of a response head as libcurl hands it to the header callback, read into what it says.
///
/// A pure value: the transfer decides what each line means for the exchange, this only reads the
/// bytes, so the reading is unit-tested and fuzzed apart from libcurl. Its texts are views of the line,
/// valid only while the line is: the header callback keeps them as bytes (`HTTPHeaders.addReceived`), not strings.
enum CurlHeadLine {
    /// A blank line: the end of a head (or of the trailers after the body).
    case end
    /// A status line (`HTTP/1.1 200 OK`, `HTTP/2 200`) with its code; 0 when it has no three-digit code.
    case status(Int)
    /// An obsolete folded line (it starts with a space or a tab): more of the previous field's value, trimmed.
    case continuation(UnsafeRawBufferPointer)
    /// A header field, its value trimmed of surrounding spaces and tabs.
    case field(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    /// A line without a colon, which says nothing.
    case ignored

    /// Reads one line, with or without its line break.
    init(_ line: UnsafeRawBufferPointer) {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\r") || line[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        guard end > 0 else {
            self = .end
            return
        }
        let text = UnsafeRawBufferPointer(rebasing: line[..<end])
        if Self.isStatusLine(text) {
            self = .status(Self.code(ofStatusLine: text))
        } else if text[0] == UInt8(ascii: " ") || text[0] == UInt8(ascii: "\t") {
            self = .continuation(Self.trimmed(text))
        } else if let colon = text.firstIndex(of: UInt8(ascii: ":")) {
            self = .field(
                name: UnsafeRawBufferPointer(rebasing: text[..<colon]),
                value: Self.trimmed(UnsafeRawBufferPointer(rebasing: text[(colon + 1)...])))
        } else {
            self = .ignored
        }
    }

    /// Whether the line starts with `HTTP/`: five byte compares, where `starts(with:)` over the literal's
    /// UTF-8 view walks two generic iterators for every line of every head.
    private static func isStatusLine(_ text: UnsafeRawBufferPointer) -> Bool {
        text.count >= 5 && text[0] == UInt8(ascii: "H") && text[1] == UInt8(ascii: "T") && text[2] == UInt8(ascii: "T")
            && text[3] == UInt8(ascii: "P") && text[4] == UInt8(ascii: "/")
    }

    /// The status code of a status line: the three digits after the first space, or 0.
    private static func code(ofStatusLine statusLine: UnsafeRawBufferPointer) -> Int {
        guard let space = statusLine.firstIndex(of: UInt8(ascii: " ")) else { return 0 }
        var code = 0
        for byte in statusLine[(space + 1)...].prefix(3) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return 0 }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return code
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }
}

extension CurlHeadLine {
    /// The line's reading with its texts as strings, to compare and print.
    enum Text: Equatable {
        case end
        case status(Int)
        case continuation(String)
        case field(name: String, value: String)
        case ignored
    }

    var text: Text {
        switch self {
        case .end: .end
        case .status(let code): .status(code)
        case .continuation(let text): .continuation(String(decoding: text, as: UTF8.self))
        case .field(let name, let value):
            .field(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        case .ignored: .ignored
        }
    }
}

extension CurlTransfer {
    // MARK: Response head

    /// Takes one header line. libcurl passes every head it receives: 1xx heads, then redirects we
    /// follow ourselves, then the final one, and trailers after the body. Each complete head goes to
    /// `exchange`, which keeps the final one.
    /// - Returns: `false` to stop the transfer (`exchange` knows why).
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        let headLine = CurlHeadLine(line)
        switch headLine {
        case .end: return headEnded()
        case .status(let code): return headStarted(code: code)
        case .continuation, .field, .ignored: break
        }
        // Lines after the final head are trailers: the head the caller sees is already decided.
        guard status > 0 else { return true }
        guard exchange.awaitsHead else { return receiveTrailerLine(headLine) }
        switch headLine {
        case .continuation(let text):
            // An obsolete folded line continues the previous field's value.
            headers.continueLastField(with: text)
        case .field(let name, let value):
            headers.addReceived(name: name, value: value)
        case .end, .status, .ignored:
            break
        }
        return true
    }

    /// Keeps a trailer field (libcurl passes trailers through the header callback once the body has ended,
    /// over HTTP/1.1 and HTTP/2 alike), within `TrailerRule`'s limits.
    private func receiveTrailerLine(_ line: CurlHeadLine) -> Bool {
        switch line {
        case .field(let name, let value):
            trailers.addReceived(name: name, value: value)
            trailerSize += name.count + value.count
        case .continuation(let text):
            if trailers.continueLastField(with: text) { trailerSize += text.count + 1 }
        case .end, .status, .ignored:
            return true
        }
        guard !TrailerRule.exceedsLimits(count: trailers.count, size: trailerSize) else {
            exchange.failed(TrailerRule.tooLarge)
            return false
        }
        return true
    }

    private func headStarted(code: Int) -> Bool {
        // The head after a Digest challenge is libcurl's answer to it: the challenge is not the caller's.
        if case .pending = challenge { challenge = .answered }
        guard exchange.awaitsHead else {
            // Another head after the final one: the exchange decides what that means (it fails).
            guard case .fail = exchange.headReceived(status: code, headers: HTTPHeaders(), request: request) else {
                return true
            }
            return false
        }
        status = code
        // Most heads have a handful of fields: room for them at once.
        headers = HTTPHeaders(receiving: 12)
        return true
    }

    func headEnded() -> Bool {
        // A blank line ends a head, and also the trailers after the final head.
        guard status > 0, exchange.awaitsHead else { return true }
        if interceptsChallenge() { return true }
        switch exchange.headReceived(status: status, headers: headers, request: request) {
        case .interim, .dropBody, .ignore:
            return true
        case .fail:
            return false
        case .receiveBody:
            if let streaming = job.streaming { return deliverStreamedHead(streaming) }
            if request.method != .head, let expectedLength = exchange.expectedLength {
                body.reserveCapacity(Int(min(expectedLength, Self.maxReservation)))
            }
            return true
        case .decideDownload:
            return decideDownload()
        }
    }

    /// Asks the writer where the final head's body goes.
    private func decideDownload() -> Bool {
        guard let download else { return true }
        let disposition: DownloadFileWriter.Disposition
        do throws(ServerAPIError) {
            disposition = try download.receiveHead(status: status, headers: headers)
        } catch {
            exchange.failed(error)
            return false
        }
        switch exchange.downloadDecided(disposition) {
        case .writeToFile:
            if let progress = request.progress {
                // A resumed download starts where the partial file ends: say so before any byte arrives.
                reportedDownload = download.bytesOnDisk
                progress(
                    TransferProgress(
                        direction: .download, completed: download.bytesOnDisk, total: download.expectedTotal))
            }
            return true
        case .keepInMemory, .alreadyComplete, .ignore:
            return true
        case .restart, .fail:
            // The body is not wanted: stop now, and `complete` sends the request again (or fails).
            return false
        }
    }

    /// The most memory reserved up front from a `Content-Length`, however large it claims to be.
    static let maxReservation: Int64 = 16 << 20

    // MARK: Response body

    /// Takes the next body bytes: decoded, or a full-duplex call's raw chunks (see `CurlTransfer+Duplex`).
    /// - Returns: `false` to stop the transfer (`exchange` knows why).
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if chunkDecoder != nil { return receiveChunks(bytes) }
        guard receiveDecodedBody(bytes) else { return false }
        if isFullDuplex { checkFullDuplexEnd() }
        return true
    }

    /// Takes the next body bytes, decoded.
    /// - Returns: `false` to stop the transfer (`exchange` knows why).
    func receiveDecodedBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if keepsChallengeBody(bytes) { return true }
        // For a content-coded body, the encoded bytes so far: libcurl counts body bytes as they come off
        // the connection (after chunked framing, before content decoding) and before it decodes them and
        // calls us, so the count includes the bytes this piece was decoded from.
        let encoded = exchange.isContentCoded ? easy.offset(CURLINFO_SIZE_DOWNLOAD_T) : nil
        switch exchange.bodyReceived(count: bytes.count, encoded: encoded) {
        case .keep:
            if let source { return streamBody(bytes, to: source) }
            body.append(bytes.assumingMemoryBound(to: UInt8.self))
            return true
        case .write:
            guard let download else { return true }
            do throws(ServerAPIError) {
                try download.write(bytes)
            } catch {
                exchange.failed(error)
                return false
            }
            reportDownloadProgress()
            return true
        case .drop:
            // A redirect's body, or one that a download does not need: not the caller's.
            return true
        case .fail:
            return false
        }
    }

    // MARK: Request body

    /// Copies the next body bytes into libcurl's buffer.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let pump { return sendStreamedBody(pump, into: buffer) }
        guard let reader else { return 0 }
        do throws(ServerAPIError) {
            return try reader.read(into: buffer)
        } catch {
            exchange.failed(error)
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// Starts the body again from its first byte (libcurl asks for nothing else when it resends).
    func rewindBody(to offset: Int64, origin: Int32) -> Int32 {
        if let pump { return rewindStreamedBody(pump, to: offset, origin: origin) }
        guard offset == 0, origin == SEEK_SET else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        do throws(ServerAPIError) {
            reader = try request.body.makeReader()
            return Int32(CURL_SEEKFUNC_OK)
        } catch {
            exchange.failed(error)
            return Int32(CURL_SEEKFUNC_FAIL)
        }
    }

    // MARK: Progress

    /// Reports what moved since the last report. Download progress counts body bytes after decoding
    /// (libcurl's own count is of the bytes on the wire), with the total when the server announced it.
    func reportProgress(downloaded: Int64, downloadTotal: Int64, uploaded: Int64, uploadTotal: Int64) {
        guard let progress = request.progress else { return }
        if uploaded != reportedUpload, uploaded > 0 || uploadTotal > 0 {
            reportedUpload = uploaded
            progress(
                TransferProgress(direction: .upload, completed: uploaded, total: uploadTotal > 0 ? uploadTotal : nil))
        }
        reportDownloadProgress()
    }

    /// Reports the body bytes received so far, when they changed. Called from libcurl's progress
    /// callback and after every piece of a download's body, which with the large download buffer
    /// can arrive faster than libcurl calls back.
    func reportDownloadProgress() {
        guard let progress = request.progress, exchange.receivesBody else { return }
        let report: TransferProgress
        if let download, exchange.disposition == .file {
            report = TransferProgress(
                direction: .download, completed: download.bytesOnDisk, total: download.expectedTotal)
        } else {
            report = TransferProgress(
                direction: .download, completed: exchange.receivedBytes, total: exchange.expectedLength)
        }
        guard report.completed > 0, report.completed != reportedDownload else { return }
        reportedDownload = report.completed
        progress(report)
    }

    /// Reports the final counts, so the last report a caller sees is the whole transfer.
    func reportFinalProgress(uploaded: Int64) {
        guard let progress = request.progress else { return }
        if uploaded > 0, uploaded != reportedUpload {
            reportedUpload = uploaded
            progress(TransferProgress(direction: .upload, completed: uploaded, total: uploaded))
        }
        let received = exchange.receivedBytes
        let completed =
            download.map {
                exchange.disposition == .file || exchange.disposition == .alreadyComplete ? $0.bytesOnDisk : received
            } ?? received
        if completed > 0, completed != reportedDownload {
            reportedDownload = completed
            progress(TransferProgress(direction: .download, completed: completed, total: completed))
        }
    }
}

extension CurlTransfer {
    // MARK: Completion

    /// Whether a transfer that could not connect had taken an HTTP/3 alternative (`Alt-Svc`) of its origin that
    /// does not answer: libcurl fails such a call rather than falling back. The alternative is marked broken
    /// (`CurlAltSvcFile`) and the transfer goes again, over TCP to the origin, once. Only with `.http3`
    /// (`.http3Only` wants QUIC or nothing), and with a body that can be sent again.
    private func fallsBackFromAlternative(_ code: CURLcode) -> Bool {
        guard !leftAlternative, settings.httpVersion == CURL_HTTP_VERSION_3, let altSvc = settings.altSvc,
            request.body.streamedBody == nil
        else { return false }
        // A connect timeout is the failure of a path that drops UDP; a timeout after connecting is the call's.
        let connectFailed =
            code == CURLE_COULDNT_CONNECT || code == CURLE_QUIC_CONNECT_ERROR
            || (code == CURLE_OPERATION_TIMEDOUT && (easy.offset(CURLINFO_CONNECT_TIME_T) ?? 0) == 0)
        guard connectFailed, altSvc.alternativeFailed(for: request.url) else { return false }
        leftAlternative = true
        return true
    }

    /// Decides what a finished transfer means (its handle has left the multi handle).
    /// - Parameter code: libcurl's result.
    /// - Returns: The response, the failure, or `.again` when `request` must be sent again (a redirect,
    ///   or a download that must start over); the caller then resets the handle and calls `configure`.
    func complete(code: CURLcode) -> Outcome {
        if code != CURLE_OK, fallsBackFromAlternative(code) { return .again }
        // libcurl's own failure, in our words; when a callback stopped the transfer, `exchange` has the reason.
        if code == CURLE_OK { replayUnansweredChallenge() }
        let libraryFailure = code == CURLE_OK ? nil : curlFailure(code)
        let deliveredStatus: Int
        switch exchange.finished(failure: libraryFailure) {
        case .restart:
            _ = download?.prepare(&request)
            return .again
        case .fail(let error):
            return fail(error)
        case .ignore:
            return fail(ServerAPIError(.network, "the transfer completed twice"))
        case .follow(let next):
            earlierBytesSent += easy.offset(CURLINFO_SIZE_UPLOAD_T) ?? 0
            request = next
            return .again
        case .deliver(let status):
            deliveredStatus = status
        }
        if deliveredStatus == 407, let proxy = httpProxyRoute {
            return fail(CurlProxy.proxyRefused(proxy, status: 407))
        }
        var responseBody = ResponseBody.data(body)
        if let download {
            do throws(ServerAPIError) {
                responseBody = try download.finish()
            } catch {
                return fail(error)
            }
        }
        let receivedTrailers: HTTPHeaders
        do throws(ServerAPIError) {
            receivedTrailers = try TrailerRule.received(trailers)
        } catch {
            return fail(error)
        }
        let uploaded = easy.offset(CURLINFO_SIZE_UPLOAD_T) ?? 0
        reportFinalProgress(uploaded: uploaded)
        // A streamed call's caller has the head already: its body's stream ends.
        if headDelivered { return .streamEnded(metrics(uploaded: uploaded), trailers: receivedTrailers) }
        body = Data()
        return .response(
            TransportResponse(
                status: deliveredStatus, headers: headers, body: responseBody, url: request.url,
                metrics: metrics(uploaded: uploaded), trailers: receivedTrailers))
    }

    /// The error for a transfer libcurl ended with `code` (not `CURLE_OK`).
    private func curlFailure(_ code: CURLcode) -> ServerAPIError {
        if let failure = proxyOrStallFailure(code) ?? totalTimeout(code) { return failure }
        var error =
            closedAfterHandshake(code) ?? pausedBomb(code)
            ?? .curl(
                code, detail: easy.errorMessage, status: status,
                verifyResult: CurlTransport.verifyResultIsX509 ? easy.long(CURLINFO_SSL_VERIFYRESULT) : nil)
        // After a redirect, the URL that failed is the hop's, not the caller's (a TLS error names the host it met).
        if exchange.redirects > 0 { error.url = request.url }
        return clientCertificateNamed(error)
    }

    /// A content-coded body that libcurl gave up on: while a reader is behind (the transfer paused), libcurl keeps
    /// what one read decodes to in a buffer of its own, up to 64 MiB, and fails past that (7.x: out of memory; 8.x:
    /// `CURLE_TOO_LARGE`, 100, which 7.x's headers do not name). Only a body that expands that much from one read
    /// does so: a decompression bomb, under a ratio limit turned off.
    private func pausedBomb(_ code: CURLcode) -> ServerAPIError? {
        guard code == CURLE_OUT_OF_MEMORY || code.rawValue == 100, exchange.isContentCoded else { return nil }
        return .decompressionBomb(
            "the response body expands past what libcurl holds for a paused reader (64 MiB from one read of encoded "
                + "bytes)", cause: "libcurl: \(easy.errorMessage ?? String(cString: curl_easy_strerror(code)))",
            status: status)
    }

    /// A connection the server closed right after the TLS handshake, before a byte of its answer: under TLS 1.3 a
    /// server that requires a client certificate checks it after the handshake, and when it gets none or rejects
    /// ours it sends its alert and closes. The request this client wrote meanwhile makes the server's kernel reset
    /// the connection, and the reset often destroys the alert before libcurl reads it ("getpeername() failed",
    /// "Connection reset by peer"): the same failure, which a reading of the alert would have named.
    private func closedAfterHandshake(_ code: CURLcode) -> ServerAPIError? {
        guard code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR || code == CURLE_GOT_NOTHING, status == 0,
            (easy.offset(CURLINFO_APPCONNECT_TIME_T) ?? 0) > 0
        else { return nil }
        let underlying = CurlError(
            code: Int(code.rawValue), summary: String(cString: curl_easy_strerror(code)), detail: easy.errorMessage)
        return .tls(
            .clientCertificateRejected,
            "client certificate rejected: the server closed the connection right after the TLS handshake, before "
                + "answering, as a server that requires a client certificate does when it gets none or rejects "
                + "ours (\(underlying.detail ?? underlying.summary))", underlying: underlying)
    }

    /// Names the client certificate's files in an error about them: libcurl's message does not always.
    private func clientCertificateNamed(_ error: ServerAPIError) -> ServerAPIError {
        guard error.tlsFailure == .clientCertificateProblem || error.tlsFailure == .clientCertificateRejected,
            case .success(let tls) = settings.tls, let certificate = tls.clientCertificate
        else { return error }
        var named = error
        named.message += " [\(certificate)]"
        return named
    }

    private func fail(_ error: ServerAPIError) -> Outcome {
        download?.abandon()
        return .failure(error)
    }

    /// What libcurl measured for the last request, with offsets from the start of the call.
    func metrics(uploaded: Int64) -> TransportMetrics {
        func offset(_ info: CURLINFO) -> Duration? {
            guard let microseconds = easy.offset(info), microseconds > 0 else { return nil }
            return hopStarted + .microseconds(microseconds)
        }
        let tcp = offset(CURLINFO_CONNECT_TIME_T)
        let tls = offset(CURLINFO_APPCONNECT_TIME_T)
        // The later of the two that are known (without an array per call).
        let connected: Duration? =
            switch (tcp, tls) {
            case (let tcp?, let tls?): max(tcp, tls)
            case (let only?, nil), (nil, let only?): only
            case (nil, nil): nil
            }
        return TransportMetrics(
            transport: "curl",
            connected: connected,
            firstByte: offset(CURLINFO_STARTTRANSFER_TIME_T),
            total: ContinuousClock.now - started,
            bytesSent: earlierBytesSent + uploaded,
            // This exchange's body only: a resumed download's bytes already on disk did not come now.
            bytesReceived: exchange.receivedBytes,
            // libcurl counts the connections it had to open for this request: none means one was reused.
            reusedConnection: easy.long(CURLINFO_NUM_CONNECTS).map { $0 == 0 },
            redirects: exchange.redirects,
            httpVersion: easy.long(CURLINFO_HTTP_VERSION).flatMap(Self.versionName))
    }

    private static func versionName(_ version: Int) -> String? {
        switch version {
        case CURL_HTTP_VERSION_1_0: "1.0"
        case CURL_HTTP_VERSION_1_1: "1.1"
        case CURL_HTTP_VERSION_2_0: "2"
        case CURL_HTTP_VERSION_3: "3"
        default: nil
        }
    }

    /// The error for libcurl's timeout when it is the call's total timeout, in the words every transport
    /// uses; `nil` for other failures. libcurl reports the connect and the total timeout with one code:
    /// its total timer is set to what is left of the call's, so the call's time is up only for that one.
    private func totalTimeout(_ code: CURLcode) -> ServerAPIError? {
        // A streamed call has no total timeout in libcurl (the loop enforces its head deadline).
        guard code == CURLE_OPERATION_TIMEDOUT, job.streaming == nil, ContinuousClock.now - started >= request.timeout
        else { return nil }
        let underlying = CurlError(
            code: Int(code.rawValue), summary: String(cString: curl_easy_strerror(code)), detail: easy.errorMessage)
        var error = ServerAPIError.timedOut(after: request.timeout, underlying: underlying)
        if status > 0 { error.status = status }
        return error
    }
}
