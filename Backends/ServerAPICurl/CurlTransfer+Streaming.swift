internal import CCurl
@_spi(Transport) import ServerAPIKit
import Synchronization

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

// Streaming, both ways (loop thread only, like the rest of the transfer).
//
// Responses (`CurlTransport.stream`): when the final head has arrived (the exchange says so: 1xx and
// followed redirects never get here), the job's continuation is resumed with a `.stream` body whose
// source the write callback feeds. When the source answers `.pause`, the chunk was kept: the callback
// accepts it whole and pauses receiving with `curl_easy_pause(CURLPAUSE_RECV)` (allowed from inside a
// callback). That chunk is not refused with `CURL_WRITEFUNC_PAUSE`, with which libcurl would deliver the
// same bytes again later. Bytes offered while receiving is paused are refused with it, before they are
// counted, so libcurl keeps them and delivers them again on resumption: the buffer runs over by at most
// one of libcurl's deliveries. libcurl 7.88 offers only what it already decoded from the same read; 8.14
// goes on delivering a paused HTTP/2 stream's data while another transfer on its connection is served
// (kept, it grew without bound and the server was never held back). The reader's
// `onResume` hops to the loop (inbox + wake-up) and unpauses there; `onTermination` cancels the
// transfer by the same path as a cancelled task.
//
// While receiving is paused, libcurl does not run its low-speed check ("a paused transfer is not
// qualified for speed checks", libcurl 7.x and 8.x), so a reader that takes its time never trips the
// stall timeout; the stall timeout still ends a body that stops arriving while the reader waits for it.
// A paused *upload* (a request body whose producer is slow) is not exempt in libcurl 7.x: a producer
// slower than the stall limit fails the call as stalled, which is what the limit is for.
//
// Request bodies (`BodySource.stream`): a `RequestBodyPump` reads the sequence one chunk ahead on a
// task; the read callback copies from that chunk and answers `CURL_READFUNC_PAUSE` when none is ready.
// The pump's `onReady` hops to the loop, which unpauses sending.
extension CurlTransfer {
    /// Whether the caller has the final head and reads the body from a stream.
    var headDelivered: Bool { source != nil }

    /// Whether body bytes must stay with libcurl for now: the stream's reader has paused receiving.
    var holdsBackBody: Bool { receivePaused && source != nil }

    // MARK: Response head and body

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

    // MARK: Ending

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

    // MARK: Request body

    /// Sends a body from an `AsyncSequence`: `Content-Length` when its length is known, else chunked
    /// (libcurl chooses chunked itself for a POST of unknown size over HTTP/1.1; HTTP/2 frames the body).
    func configureStreamedBody(
        _ body: RequestBodyStream, method: String, context: UnsafeMutableRawPointer
    ) throws(ServerAPIError) {
        if method == "HEAD" { throw ServerAPIError(.invalidRequest, "a HEAD request cannot have a body") }
        if exchange.redirects > 0 {
            throw ServerAPIError(
                .invalidRequest,
                "the server redirected to \(request.url.absoluteString) keeping the method and body (307 or 308), "
                    + "and a streamed request body can be sent only once")
        }
        try easy.set(CURLOPT_POST, true)
        try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: body.length ?? -1)
        let loop = self.loop
        let id = job.id
        let pump = try RequestBodyPump(body, onReady: { loop.resume(.sending(id)) })
        self.pump = pump
        try easy.check(ccurl_easy_setopt_read_function(easy.raw, curlReadCallback), CURLOPT_READFUNCTION)
        try easy.set(CURLOPT_READDATA, pointer: context)
        try easy.check(ccurl_easy_setopt_seek_function(easy.raw, curlSeekCallback), CURLOPT_SEEKFUNCTION)
        try easy.set(CURLOPT_SEEKDATA, pointer: context)
        if method != "POST" { try easy.set(CURLOPT_CUSTOMREQUEST, method) }
        if body.hasTrailers {
            // libcurl asks for them before the last CRLF of a chunked upload (HTTP/1.1 only: over HTTP/2 it
            // never calls back, and the body goes without them; so in 7.88 and still in 8.19, whose HTTP/2
            // code has no request trailers).
            try easy.check(ccurl_easy_setopt_trailer_function(easy.raw, curlTrailerCallback), CURLOPT_TRAILERFUNCTION)
            try easy.set(CURLOPT_TRAILERDATA, pointer: context)
        }
        pump.start()
    }

    /// Appends the request body's trailer fields to libcurl's list (from the trailer callback).
    /// - Returns: `CURL_TRAILERFUNC_OK`, or `CURL_TRAILERFUNC_ABORT` when the fields are not valid trailers.
    func sendTrailers(into list: UnsafeMutablePointer<UnsafeMutablePointer<curl_slist>?>) -> Int32 {
        guard let body = request.body.streamedBody else { return Int32(CURL_TRAILERFUNC_OK) }
        do throws(ServerAPIError) {
            for field in try body.trailers() {
                // On failure curl_slist_append returns NULL and leaves the list as it was (libcurl frees it).
                guard let appended = curl_slist_append(list.pointee, "\(field.name): \(field.value)") else {
                    throw ServerAPIError(.invalidRequest, "libcurl could not allocate the request's trailer fields")
                }
                list.pointee = appended
            }
            return Int32(CURL_TRAILERFUNC_OK)
        } catch {
            exchange.failed(error)
            return Int32(CURL_TRAILERFUNC_ABORT)
        }
    }

    /// Copies the next bytes the pump holds (from the read callback); pauses sending when it holds none.
    func sendStreamedBody(_ pump: RequestBodyPump, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        // The response ended first: the request body ends here (what the sequence had not given is not sent).
        if responseEndedFirst { return 0 }
        switch pump.read(into: buffer) {
        case .bytes(let count):
            return count
        case .end:
            return 0
        case .wouldBlock:
            // The pump's onReady resumes sending once it has the next chunk.
            sendPaused = true
            return Int(CURL_READFUNC_PAUSE)
        case .failed(let error):
            exchange.failed(error)
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// libcurl asks to send the body again from its start (a reused connection that turned out dead):
    /// fine while nothing was sent, impossible after that.
    func rewindStreamedBody(_ pump: RequestBodyPump, to offset: Int64, origin: Int32) -> Int32 {
        if offset == 0, origin == SEEK_SET, pump.bytesDelivered == 0 { return Int32(CURL_SEEKFUNC_OK) }
        exchange.failed(
            ServerAPIError(
                .invalidRequest,
                "libcurl had to send the request again, and its streamed body can be sent only once"))
        return Int32(CURL_SEEKFUNC_FAIL)
    }
}
