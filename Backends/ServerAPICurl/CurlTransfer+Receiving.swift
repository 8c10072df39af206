internal import CCurl
@_spi(Transport) import ServerAPIKit
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
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
    // them again once receiving resumes (see the streamed response, below).
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

    /// Takes the next body bytes: decoded, or a full-duplex call's raw chunks (see full duplex, below).
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

/// Where a hop is with a Digest challenge: libcurl answers a `401` carrying `WWW-Authenticate: Digest`
/// itself, by sending the request again with the credentials, within one transfer. The challenge's head
/// and body are not the caller's: they are kept aside until the answer's head arrives, and handed to the
/// exchange as the response only when libcurl did not answer (a challenge it cannot read).
enum DigestChallenge {
    case none
    /// The challenge arrived; its body so far (up to `CurlTransfer.maxChallengeBody` bytes).
    case pending(status: Int, headers: HTTPHeaders, body: Data)
    /// libcurl answered it: every further head is the exchange's.
    case answered
}

extension CurlTransfer {
    /// The most of a challenge's body kept for the case where it turns out to be the response.
    static let maxChallengeBody = 64 << 10

    /// Whether the head that just ended is a Digest challenge libcurl will answer: the first `401` of
    /// the hop with a Digest `WWW-Authenticate`, for a request with Digest credentials.
    func interceptsChallenge() -> Bool {
        guard case .none = challenge, status == 401, request.credentials?.scheme == .digest,
            headers.values(for: "WWW-Authenticate").contains(where: {
                $0.drop(while: { $0 == " " || $0 == "\t" }).lowercased().hasPrefix("digest")
            })
        else { return false }
        challenge = .pending(status: status, headers: headers, body: Data())
        return true
    }

    /// Keeps the bytes of a pending challenge's body aside; `false` when they belong to the exchange.
    func keepsChallengeBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard case .pending(let status, let headers, var body) = challenge else { return false }
        if body.count < Self.maxChallengeBody {
            body.append(contentsOf: bytes.prefix(Self.maxChallengeBody - body.count))
        }
        challenge = .pending(status: status, headers: headers, body: body)
        return true
    }

    /// A transfer that ended on a challenge libcurl did not answer: the challenge is the response, as
    /// for a request without credentials.
    func replayUnansweredChallenge() {
        guard case .pending(let challengeStatus, let challengeHeaders, let challengeBody) = challenge else { return }
        challenge = .answered
        status = challengeStatus
        headers = challengeHeaders
        guard headEnded(), !challengeBody.isEmpty else { return }
        _ = challengeBody.withUnsafeBytes { receiveBody($0) }
    }
}

// Streamed responses (`CurlTransport.stream`): when the final head has arrived (the exchange says so: 1xx and
// followed redirects never get here), the job's continuation is resumed with a `.stream` body whose
// source the write callback feeds. When the source answers `.pause`, the chunk was kept: the callback
// accepts it whole and pauses receiving with `curl_easy_pause(CURLPAUSE_RECV)` (allowed from inside a
// callback). That chunk is not refused with `CURL_WRITEFUNC_PAUSE`, with which libcurl would deliver the
// same bytes again later. Bytes offered while receiving is paused are refused with it, before they are
// counted, so libcurl keeps them and delivers them again on resumption: the buffer runs over by at most
// one of libcurl's deliveries. libcurl 7.88 offers only what it already decoded from the same read; 8.14
// goes on delivering a paused HTTP/2 stream's data while another transfer on its connection is served
// (kept, they would grow without bound, and the server would never be held back). The reader's
// `onResume` hops to the loop (inbox + wake-up) and unpauses there; `onTermination` cancels the
// transfer by the same path as a cancelled task.
//
// While receiving is paused, libcurl does not run its low-speed check ("a paused transfer is not
// qualified for speed checks", libcurl 7.x and 8.x), so a reader that takes its time never trips the
// stall timeout; the stall timeout still ends a body that stops arriving while the reader waits for it.
// A paused *upload* (a request body whose producer is slow) is not exempt in libcurl 7.x: a producer
// slower than the stall limit fails the call as stalled, which is what the limit is for.
extension CurlTransfer {
    /// Whether the caller has the final head and reads the body from a stream.
    var headDelivered: Bool { source != nil }

    /// Whether body bytes must stay with libcurl for now: the stream's reader has paused receiving.
    var holdsBackBody: Bool { receivePaused && source != nil }

    /// Hands the caller the final head with a streamed body (from the header callback).
    /// - Returns: `false` to stop the transfer (`exchange` knows why).
    func deliverStreamedHead(_ streaming: CurlStreaming) -> Bool {
        if status == 407, let proxy = httpProxyRoute {
            exchange.failed(CurlProxy.proxyRefused(proxy, status: 407))
            return false
        }
        let loop = self.loop
        let id = job.id
        let owner = streaming.owner
        let (stream, source) = ResponseBodyStream.makeStream(
            bufferSize: streaming.bufferSize,
            onResume: { loop.resume(.receiving(id)) },
            onTermination: {
                // The stream keeps its transport (and so the loop) alive while it is read.
                withExtendedLifetime(owner) { loop.cancel(id) }
            })
        self.source = source
        startFullDuplexBody()
        let response = TransportResponse(
            status: status, headers: headers, body: .stream(stream), url: request.url,
            metrics: metrics(uploaded: easy.offset(CURLINFO_SIZE_UPLOAD_T) ?? 0))
        job.continuation.resume(returning: response)
        return true
    }

    /// Hands body bytes to the stream's reader (from the write callback).
    /// - Returns: `false` to stop the transfer: the reader is gone.
    func streamBody(_ bytes: UnsafeRawBufferPointer, to source: ResponseBodyStream.Source) -> Bool {
        switch source.yield(Data(bytes)) {
        case .more:
            return true
        case .pause:
            if !receivePaused {
                receivePaused = true
                loop.receivePauses.add(1, ordering: .relaxed)
                _ = applyPause()
            }
            return true
        case .stopped:
            exchange.failed(.cancelled("the streamed response's reader went away"))
            return false
        }
    }

    /// Resumes a paused direction (loop thread, outside libcurl's callbacks).
    /// - Returns: libcurl's answer; not `CURLE_OK` when the transfer failed while resuming (a callback
    ///   stopped it as libcurl delivered what it held back): the caller then ends it.
    func resume(receiving: Bool) -> CURLcode {
        if receiving {
            guard receivePaused else { return CURLE_OK }
            receivePaused = false
            loop.receiveResumes.add(1, ordering: .relaxed)
        } else {
            guard sendPaused else { return CURLE_OK }
            sendPaused = false
        }
        return applyPause()
    }

    /// Tells libcurl both directions' pause state (`curl_easy_pause` sets them together). Unpausing
    /// receiving may call the write callback before it returns.
    private func applyPause() -> CURLcode {
        // CURLPAUSE_RECV and CURLPAUSE_SEND.
        let bits: Int32 = (receivePaused ? 1 << 0 : 0) | (sendPaused ? 1 << 2 : 0)
        return curl_easy_pause(easy.raw, bits)
    }

    /// The metrics to end a streamed body with, taken while the handle still has them; `nil` before the head.
    var streamMetrics: TransportMetrics? {
        guard headDelivered else { return nil }
        return metrics(uploaded: easy.offset(CURLINFO_SIZE_UPLOAD_T) ?? 0)
    }

    /// Tells the caller the call failed: before the head by throwing, after it by ending the body's stream.
    func report(_ error: ServerAPIError, metrics: TransportMetrics?) {
        guard let source else { return job.fail(error) }
        source.finish(throwing: error.with(requestID: job.request.id, url: request.url), metrics: metrics)
    }
}

// Full duplex: a streamed request body with a streamed response (`CurlTransport.stream` of a call whose
// body is a `RequestBodyStream`), where the server may answer as it reads and end its response while the
// request body is still open.
//
// libcurl does not end a transfer before both directions are done, and says nothing when the response
// alone is over: the reader would wait for an end that comes only after the upload, which may itself wait
// for the reader. So such a call reads the end itself. Over HTTP/1.1 it turns libcurl's transfer decoding
// off (`CURLOPT_HTTP_TRANSFER_DECODING` 0) and reads the raw chunks with the core's `ChunkedDecoder`; a
// body with a `Content-Length` ends at its length. It offers no content coding (libcurl would not decode
// raw chunks). When the response ends first, its stream ends at once (with its trailers), and the request
// body ends at its next read, as RFC 9113 §8.1 lets a server ask: what the sequence had not given yet is
// not sent. Over HTTP/2 libcurl's API shows neither the end of the response stream nor its chunks, so the
// end is libcurl's to act on: 8.9 and later stop the upload themselves when the response stream ends, a
// paused one too ("transfer: conn close on paused upload", curl #13740), and the transfer completes, which
// ends the response's stream. libcurl 7.88 (Debian 12's) does not: it leaves the transfer
// waiting for the upload and calls back nothing when the stream ends (the end clears only its internal
// receive bit), so nothing on this side can see it, and the response's end reaches the reader when the
// request body ends (a known limitation, in the README).
extension CurlTransfer {
    /// At the final head of a full-duplex call: reads its raw chunks when the body is chunked.
    func startFullDuplexBody() {
        guard isFullDuplex,
            headers.values(for: "Transfer-Encoding").contains(where: { $0.lowercased().contains("chunked") })
        else { return }
        chunkDecoder = ChunkedDecoder()
    }

    /// Takes raw chunks: their data goes on as body bytes; the last chunk ends the response.
    /// - Returns: `false` to stop the transfer (`exchange` knows why).
    func receiveChunks(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var decoder = chunkDecoder else { return receiveDecodedBody(bytes) }
        var accepted = true
        do throws(ServerAPIError) {
            try decoder.decode(bytes) { piece in
                if accepted, !piece.isEmpty { accepted = receiveDecodedBody(piece) }
            }
        } catch {
            chunkDecoder = decoder
            exchange.failed(error)
            return false
        }
        chunkDecoder = decoder
        guard accepted else { return false }
        if decoder.isEnded { endResponseFirst(trailers: decoder.trailers) }
        return true
    }

    /// Ends the response of a full-duplex call whose body has a `Content-Length`, once it is all here.
    func checkFullDuplexEnd() {
        guard let expected = exchange.expectedLength, exchange.receivedBytes >= expected else { return }
        endResponseFirst(trailers: [:])
    }

    /// The response is over while the request body may still be open: its stream ends now, and the
    /// request body ends at its next read.
    private func endResponseFirst(trailers raw: HTTPHeaders) {
        guard let source, !responseEndedFirst else { return }
        responseEndedFirst = true
        do throws(ServerAPIError) {
            source.finish(metrics: streamMetrics, trailers: try TrailerRule.received(raw))
        } catch {
            source.finish(throwing: error.with(requestID: job.request.id, url: request.url), metrics: streamMetrics)
        }
        // Sending may be paused waiting for the sequence: the loop resumes it, and the read ends the body.
        if sendPaused { loop.resume(.sending(job.id)) }
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

    /// The error for a failure the proxy or the stall limit explains; `nil` for any other failure.
    func proxyOrStallFailure(_ code: CURLcode) -> ServerAPIError? {
        let detail = easy.errorMessage
        if code == CURLE_OPERATION_TIMEDOUT, let stall = stallTimeout,
            detail?.lowercased().contains("too slow") == true
        {
            // libcurl reports both timeouts with one code; only the stall check says "Operation too slow".
            var error = stall.error(
                underlying: CurlError(
                    code: Int(code.rawValue), summary: String(cString: curl_easy_strerror(code)), detail: detail))
            if status > 0 { error.status = status }
            return error
        }
        return CurlProxy.failure(code, easy: easy, route: proxyRoute, url: request.url)
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
