import Foundation
import ServerAPIKit

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

extension URLErrorMapping {
    /// Which TLS failure a task's error is, or `nil` when it is not one.
    ///
    /// On Apple platforms the URLError code says it. On Linux, FoundationNetworking reports every TLS
    /// failure of its libcurl as `URLError.unknown` (-1) whose description is libcurl's message
    /// (swift-corelibs-foundation `_EasyHandle.urlErrorCode(for:)` maps only connection, DNS and
    /// timeout codes), so the message is read, as the curl backend reads the same messages.
    /// - Parameters:
    ///   - code: The URLError code.
    ///   - message: The error's description.
    static func tlsFailure(_ code: URLError.Code, message: String) -> TLSFailure? {
        switch code {
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
            return .untrustedCertificate
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            return .expiredCertificate
        case .clientCertificateRejected, .clientCertificateRequired:
            return .clientCertificateRejected
        case .unknown, .secureConnectionFailed:
            break
        default:
            // Timeouts, cancellation, DNS and the like keep their own kind, whatever the message says.
            return nil
        }
        let text = message.lowercased()
        if text.contains("target host name") || text.contains("common name from peer certificate") {
            return .hostnameMismatch
        }
        if text.contains("pinned public key") { return .pinMismatch }
        if text.contains("certificate has expired") || text.contains("certificate is not yet valid") {
            return .expiredCertificate
        }
        let clientCertificateAlerts = [
            "alert certificate required", "alert bad certificate", "alert unknown ca", "alert certificate unknown",
            "alert certificate expired", "alert certificate revoked", "alert unsupported certificate",
            "alert access denied",
        ]
        if clientCertificateAlerts.contains(where: text.contains) { return .clientCertificateRejected }
        if text.contains("ssl certificate problem") || text.contains("self-signed certificate")
            || text.contains("self signed certificate") || text.contains("unable to get local issuer")
        {
            return .untrustedCertificate
        }
        if code == .secureConnectionFailed || text.contains("ssl") || text.contains("tls") { return .handshakeFailed }
        return nil
    }

    /// The sentence for a TLS failure, with the platform's own message kept.
    static func describe(_ failure: TLSFailure, message: String) -> String {
        let sentence =
            switch failure {
            case .pinMismatch: "pin mismatch: the server's public key matches none of the pinned keys"
            case .untrustedCertificate:
                "certificate not trusted: the server's certificate is not signed by a trusted CA"
            case .expiredCertificate: "certificate expired: the server's certificate is expired or not yet valid"
            case .hostnameMismatch: "hostname mismatch: the server's certificate is for another host name"
            case .clientCertificateRejected:
                "client certificate rejected: the server requires a client certificate and did not accept one"
            default: "TLS handshake failed"
            }
        return message.isEmpty ? sentence : "\(sentence) (\(message))"
    }
}
