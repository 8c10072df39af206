internal import CCurl
import ServerAPIKit

/// A libcurl failure: the `underlying` error of a `ServerAPIError` thrown by `CurlTransport`.
public struct CurlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// libcurl's `CURLcode`, such as 7 (`CURLE_COULDNT_CONNECT`) or 28 (`CURLE_OPERATION_TIMEDOUT`).
    public var code: Int
    /// libcurl's description of the code.
    public var summary: String
    /// libcurl's own message for this transfer (`CURLOPT_ERRORBUFFER`), when it wrote one.
    public var detail: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The `CURLcode`.
    ///   - summary: libcurl's description of the code.
    ///   - detail: libcurl's message for the transfer.
    public init(code: Int, summary: String, detail: String? = nil) {
        self.code = code
        self.summary = summary
        self.detail = detail
    }

    /// "libcurl error CODE (summary): detail", for logs and messages.
    public var description: String { "libcurl error \(code) (\(summary))" + (detail.map { ": \($0)" } ?? "") }
}

extension ServerAPIError {
    /// The error for a libcurl result, with libcurl's message kept in ours.
    /// - Parameter verifyResult: `CURLINFO_SSL_VERIFYRESULT` (OpenSSL's X509 verification code), for TLS failures.
    static func curl(_ code: CURLcode, detail: String?, status: Int = 0, verifyResult: Int? = nil) -> ServerAPIError {
        let underlying = CurlError(
            code: Int(code.rawValue), summary: String(cString: curl_easy_strerror(code)), detail: detail)
        if let failure = tlsFailure(code, message: detail ?? "", verifyResult: verifyResult) {
            return curlTLS(failure, underlying: underlying, status: status)
        }
        // libcurl names an answer that is not HTTP (no status line: HTTP/0.9, or bytes that are no protocol at all)
        // "unsupported protocol", the code it also gives a URL scheme it lacks: the server is at fault here.
        if code == CURLE_UNSUPPORTED_PROTOCOL, detail?.contains("HTTP/0.9") == true {
            return ServerAPIError(
                .network, "the server's answer is not HTTP (\(detail ?? underlying.summary))",
                status: status > 0 ? status : nil, underlying: underlying)
        }
        let (kind, sentence) = classify(code)
        return ServerAPIError(
            kind, "\(sentence) (\(underlying.detail ?? underlying.summary))", status: status > 0 ? status : nil,
            underlying: underlying)
    }

    private static func classify(_ code: CURLcode) -> (Kind, String) {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            (.timedOut, "the request timed out")
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            (.cannotConnect, "could not connect to the server")
        case CURLE_QUIC_CONNECT_ERROR:
            // HTTP/3 only (`HTTPVersion.http3Only`): the QUIC handshake failed, with no TCP to fall back to.
            (.cannotConnect, "could not connect to the server over QUIC")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            (.tls, "the TLS connection could not be established securely")
        case CURLE_TOO_MANY_REDIRECTS:
            (.tooManyRedirects, "the server redirected too many times")
        case CURLE_FILESIZE_EXCEEDED:
            (.responseTooLarge, "the response is larger than allowed")
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT:
            (.invalidRequest, "the request cannot be sent")
        case CURLE_ABORTED_BY_CALLBACK:
            (.cancelled, "the request was cancelled")
        case CURLE_BAD_CONTENT_ENCODING:
            // A coding this libcurl cannot decode (see `CurlTransport.supportedContentCodings`), or a body
            // that is not valid in its coding: never handed over undecoded as if it were decoded.
            (.network, "the response's content coding could not be decoded")
        case CURLE_WRITE_ERROR:
            (.fileSystem, "the response could not be stored")
        case CURLE_READ_ERROR:
            (.fileSystem, "the request body could not be read")
        default:
            // PARTIAL_FILE, RECV_ERROR, SEND_ERROR, GOT_NOTHING, HTTP2, WEIRD_SERVER_REPLY,
            // SEND_FAIL_REWIND, ...: the connection or the server failed.
            (.network, "the connection to the server failed")
        }
    }
}
