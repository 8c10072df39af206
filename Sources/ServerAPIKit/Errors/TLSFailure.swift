/// Which part of TLS failed, for errors of kind `tls`: `ServerAPIError.tlsFailure`.
///
/// An open vocabulary, like `ServerAPIError.Kind`: switch over the values you handle and keep a
/// `default`, since transports may report new ones.
///
/// ```swift
/// catch let error as ServerAPIError where error.kind == .tls {
///     switch error.tlsFailure {
///     case .pinMismatch?: alertPossibleInterception()
///     case .clientCertificateRejected?: askForAnotherCertificate()
///     default: showGenericTLSError(error.message)
///     }
/// }
/// ```
public struct TLSFailure: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The failure's name, such as `"pin mismatch"`.
    public var rawValue: String
    /// Creates a failure from its name (`expired`, `untrusted`, …), for a kind the library does not list yet.
    /// - Parameter rawValue: The name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The failure's name.
    public var description: String { rawValue }

    /// The server's certificate is valid, but its public key matches none of the pins set for its host.
    public static let pinMismatch = TLSFailure(rawValue: "pin mismatch")
    /// The server's certificate is not trusted: an unknown or untrusted CA, a self-signed certificate, a
    /// broken chain.
    public static let untrustedCertificate = TLSFailure(rawValue: "certificate not trusted")
    /// The server's certificate has expired or is not valid yet.
    public static let expiredCertificate = TLSFailure(rawValue: "certificate expired")
    /// The server's certificate is for another host name (or IP address) than the one called.
    public static let hostnameMismatch = TLSFailure(rawValue: "hostname mismatch")
    /// The server required a client certificate and none was sent, or it rejected the one sent.
    public static let clientCertificateRejected = TLSFailure(rawValue: "client certificate rejected")
    /// The local client certificate or key cannot be used: missing or unreadable file, wrong format,
    /// wrong passphrase, key not matching the certificate.
    public static let clientCertificateProblem = TLSFailure(rawValue: "client certificate problem")
    /// The server offers only a protocol older than the floor, TLS 1.2 (`TLSOptions.legacyProtocolHosts` lowers it
    /// for a host).
    public static let protocolTooOld = TLSFailure(rawValue: "protocol too old")
    /// The handshake failed for another reason (no common cipher, a broken peer).
    public static let handshakeFailed = TLSFailure(rawValue: "handshake failed")
    /// The transport cannot do what its TLS options ask (pinning or a client certificate where the
    /// platform's networking cannot): it refuses when it is created, never silently.
    public static let notSupported = TLSFailure(rawValue: "not supported by this transport")
}

extension TLSFailure {
    /// A sentence that says what failed, for error messages: "pin mismatch: the server's public key
    /// matches none of the keys pinned for this host".
    public var explanation: String {
        switch self {
        case .pinMismatch: "pin mismatch: the server's public key matches none of the keys pinned for this host"
        case .untrustedCertificate: "certificate not trusted: the server's certificate is not signed by a trusted CA"
        case .expiredCertificate: "certificate expired: the server's certificate is expired or not yet valid"
        case .hostnameMismatch: "hostname mismatch: the server's certificate is for another host name"
        case .clientCertificateRejected:
            "client certificate rejected: the server requires a client certificate and did not accept one"
        case .clientCertificateProblem: "client certificate problem: the client certificate or key cannot be used"
        case .protocolTooOld: "protocol too old: the server offers only TLS older than 1.2, the minimum"
        case .notSupported: "TLS options not supported by this transport"
        default: "TLS handshake failed"
        }
    }

    /// Whether a TLS library's message (lower-cased) reports an alert the server sent about the
    /// client's certificate (it has no reason to complain about its own). Both libcurl-based
    /// transports read OpenSSL's alert text this way.
    package static func isClientCertificateAlert(_ lowercasedMessage: String) -> Bool {
        clientCertificateAlerts.contains(where: lowercasedMessage.contains)
    }

    private static let clientCertificateAlerts = [
        "alert certificate required", "alert bad certificate", "alert unknown ca", "alert certificate unknown",
        "alert certificate expired", "alert certificate revoked", "alert unsupported certificate",
        "alert access denied",
    ]
}

extension ServerAPIError {
    /// A TLS error with the failure it was.
    /// - Parameters:
    ///   - failure: Which part of TLS failed.
    ///   - message: A sentence that says what happened (keep the TLS library's own message in it).
    ///   - underlying: The error underneath, when there is one.
    /// - Returns: An error of kind `tls` whose `tlsFailure` is `failure`.
    public static func tls(_ failure: TLSFailure, _ message: String, underlying: (any Error)? = nil) -> ServerAPIError {
        var error = ServerAPIError(.tls, message, underlying: underlying)
        error.tlsFailure = failure
        return error
    }
}
