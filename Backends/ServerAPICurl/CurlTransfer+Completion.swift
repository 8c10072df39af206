internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CurlTransfer {
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
