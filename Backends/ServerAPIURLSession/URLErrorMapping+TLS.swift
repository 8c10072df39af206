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
        if TLSFailure.isClientCertificateAlert(text) { return .clientCertificateRejected }
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
        let sentence = failure.explanation
        return message.isEmpty ? sentence : "\(sentence) (\(message))"
    }
}
