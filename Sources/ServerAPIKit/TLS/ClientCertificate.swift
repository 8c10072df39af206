#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate and private key a transport presents when a server asks for one (mutual TLS).
///
/// ```swift
/// let identity = ClientCertificate(
///     certificateFile: URL(fileURLWithPath: "/etc/app/client.pem"),
///     keyFile: URL(fileURLWithPath: "/etc/app/client.key"), passphrase: secret)
/// ```
///
/// - Important: The passphrase is kept in memory for the transport's lifetime; `description` never shows it.
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible {
    /// How the certificate and key files are encoded.
    public struct Format: RawRepresentable, Hashable, Sendable {
        /// libcurl's name of the format (`"PEM"`, `"DER"`, `"P12"`).
        public var rawValue: String
        /// Creates a format from its name as the TLS library spells it (`PEM`, `DER`, `P12`).
        /// - Parameter rawValue: The name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// PEM text files (`-----BEGIN CERTIFICATE-----`): the default.
        public static let pem = Format(rawValue: "PEM")
        /// Binary DER files.
        public static let der = Format(rawValue: "DER")
        /// One PKCS#12 file holding certificate and key (`keyFile` stays `nil`).
        public static let pkcs12 = Format(rawValue: "P12")
    }

    /// The certificate file (PEM by default; it may also hold the key).
    public var certificateFile: URL
    /// The private key file; `nil` when the key is in `certificateFile`.
    public var keyFile: URL?
    /// The passphrase of an encrypted key (or PKCS#12 file); `nil` for an unencrypted one.
    public var passphrase: String?
    /// How the files are encoded.
    public var format: Format

    /// Creates a certificate the transport presents when a server asks for one (mutual TLS).
    /// - Parameters:
    ///   - certificateFile: The certificate file.
    ///   - keyFile: The private key file; `nil` when the key is in the certificate file.
    ///   - passphrase: The key's passphrase, when it is encrypted.
    ///   - format: How the files are encoded (`.pem`).
    public init(certificateFile: URL, keyFile: URL? = nil, passphrase: String? = nil, format: Format = .pem) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.passphrase = passphrase
        self.format = format
    }

    /// The files, and whether there is a passphrase (never the passphrase itself).
    public var description: String {
        var text = "client certificate \(certificateFile.path)"
        if let keyFile { text += ", key \(keyFile.path)" }
        if passphrase != nil { text += " (with passphrase)" }
        return text
    }
}
