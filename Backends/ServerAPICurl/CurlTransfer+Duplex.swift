internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
    /// Whether this call sends a streamed request body and streams its response.
    var isFullDuplex: Bool { job.streaming != nil && request.body.streamedBody != nil }

    /// Sets a full-duplex call's easy handle: raw chunks, no content coding offered.
    func configureFullDuplex() throws(ServerAPIError) {
        try easy.set(CURLOPT_HTTP_TRANSFER_DECODING, false)
        try easy.set(CURLOPT_ACCEPT_ENCODING, pointer: nil)
    }

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
