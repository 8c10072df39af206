#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Public keys a server must present one of, for some hosts or for every host: public-key pinning.
///
/// A pin is the SHA-256 digest of the server key's DER SubjectPublicKeyInfo, in base64, as this prints it
/// from the server's certificate:
///
/// ```sh
/// openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der \
///     | openssl dgst -sha256 -binary | base64
/// ```
///
/// List the current key and a backup key, so the server can rotate keys without breaking you.
///
/// - Important: A pin never turns verification off: the certificate must still be trusted and name the host.
public struct PublicKeyPins: Sendable, Hashable {
    /// The hosts these pins apply to (case-insensitive); empty: every host that no other entry names.
    public var hosts: Set<String>
    /// Base64 SHA-256 digests of accepted public keys, with or without libcurl's `sha256//` prefix.
    public var sha256: [String]
    /// Files holding accepted public keys (PEM `PUBLIC KEY` or DER SubjectPublicKeyInfo).
    public var keyFiles: [URL]

    /// Creates pins that accept a host's certificate only when its chain holds one of these public keys.
    /// - Parameters:
    ///   - hosts: The hosts they apply to; empty for every host no other entry names.
    ///   - sha256: Base64 SHA-256 digests of accepted public keys.
    ///   - keyFiles: Files holding accepted public keys.
    public init(hosts: Set<String> = [], sha256: [String] = [], keyFiles: [URL] = []) {
        self.hosts = hosts
        self.sha256 = sha256
        self.keyFiles = keyFiles
    }

    /// Pins given as base64 SHA-256 digests.
    /// - Parameters:
    ///   - digests: Base64 SHA-256 digests of accepted public keys (current and backup).
    ///   - hosts: The hosts they apply to; empty for every host no other entry names.
    /// - Returns: The pins.
    public static func sha256(_ digests: [String], hosts: Set<String> = []) -> PublicKeyPins {
        PublicKeyPins(hosts: hosts, sha256: digests)
    }

    /// Whether no key is listed.
    package var isEmpty: Bool { sha256.isEmpty && keyFiles.isEmpty }
}
