internal import CCurl
import ServerAPIKit

extension ServerAPIError {
    /// Which TLS failure a libcurl result is, or `nil` when it is not one.
    ///
    /// libcurl (OpenSSL) reports a failed verification as one code (60) for an unknown CA, an expired
    /// certificate and a host name mismatch alike; OpenSSL's X509 result tells the first two apart, and
    /// the host name, which libcurl checks itself, shows only in its message. A server that rejects or
    /// requires a client certificate says so with a TLS alert, which under TLS 1.3 arrives after the
    /// handshake, as a receive error (56) whose message names the alert.
    ///
    /// libcurl's GnuTLS flavour words the same failures its own way, and its verification result is GnuTLS's
    /// status bits, not an X509 code: there the message alone tells an expired certificate from an untrusted one, a
    /// key file it cannot read or decrypt from a failed handshake ("error reading X.509 … key file"), and its alert
    /// message does not name the alert.
    /// - Parameters:
    ///   - code: libcurl's result.
    ///   - message: libcurl's message for the transfer.
    ///   - verifyResult: OpenSSL's X509 verification result (`CURLINFO_SSL_VERIFYRESULT`), when known.
    static func tlsFailure(_ code: CURLcode, message: String, verifyResult: Int?) -> TLSFailure? {
        switch code {
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .pinMismatch
        case CURLE_SSL_CERTPROBLEM:
            return .clientCertificateProblem
        case CURLE_SSL_CLIENTCERT:
            return .clientCertificateRejected
        case CURLE_PEER_FAILED_VERIFICATION:
            // libcurl checks the host name after OpenSSL accepted the chain, and then reports an
            // unspecified X509 result (1): its message is what tells.
            if namesHostMismatch(message) { return .hostnameMismatch }
            if namesExpiry(message) { return .expiredCertificate }
            switch verifyResult ?? 0 {
            case X509.certificateNotYetValid, X509.certificateExpired: return .expiredCertificate
            case X509.hostnameMismatch, X509.ipAddressMismatch: return .hostnameMismatch
            default: return .untrustedCertificate
            }
        case CURLE_OPERATION_TIMEDOUT, CURLE_ABORTED_BY_CALLBACK:
            return nil
        default:
            break
        }
        let lowercased = message.lowercased()
        if TLSFailure.isClientCertificateAlert(lowercased) { return .clientCertificateRejected }
        if lowercased.contains("error reading x.509") { return .clientCertificateProblem }
        if code == CURLE_SSL_CONNECT_ERROR, namesOldProtocol(lowercased) { return .protocolTooOld }
        switch code {
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED:
            return .handshakeFailed
        default:
            return nil
        }
    }

    /// Whether libcurl's message for a failed verification is about the host name: "… matches target host
    /// name '…'" as libcurl 7.88 words it for a name and an address alike, "… matches target hostname '…'" or
    /// "… target ipv4 address '…'" as 8.14.1 does (its IPv6 wording taken to match), or "… common name from
    /// peer certificate …".
    static func namesHostMismatch(_ message: String) -> Bool {
        [
            "target host name", "target hostname", "target ipv4 address", "target ipv6 address",
            "common name from peer certificate",
        ].contains { message.contains($0) }
    }

    /// Whether a failed verification's message is libcurl's GnuTLS flavour's for a certificate out of its validity
    /// period: "certificate has expired" (GnuTLS's verdict), "server certificate expired" and "server certificate
    /// not activated yet" (libcurl's own check of the dates).
    static func namesExpiry(_ message: String) -> Bool {
        ["certificate has expired", "certificate expired", "certificate not activated yet"].contains {
            message.contains($0)
        }
    }

    /// Whether a failed handshake's message says that no protocol version was common: OpenSSL's "tlsv1 alert
    /// protocol version" and "unsupported protocol" (the server's alert against our floor, or our refusal of its
    /// hello), GnuTLS's "unsupported version" and, for a server that offers only TLS 1.1 (libcurl 8.14's GnuTLS
    /// flavour), "handshake failed: error in protocol version". libcurl names no code for it.
    static func namesOldProtocol(_ message: String) -> Bool {
        [
            "alert protocol version", "unsupported protocol", "unsupported version", "no protocols available",
            "error in protocol version",
        ].contains { message.contains($0) }
    }

    /// A TLS error: a sentence naming the failure, with libcurl's message kept in it.
    static func curlTLS(_ failure: TLSFailure, underlying: CurlError, status: Int) -> ServerAPIError {
        var error = ServerAPIError.tls(
            failure, "\(failure.explanation) (\(underlying.detail ?? underlying.summary))", underlying: underlying)
        if status > 0 { error.status = status }
        return error
    }
}

/// OpenSSL's X509 verification results that matter here (`X509_V_ERR_*`).
enum X509 {
    static let certificateNotYetValid = 9
    static let certificateExpired = 10
    static let hostnameMismatch = 62
    static let ipAddressMismatch = 64
}
