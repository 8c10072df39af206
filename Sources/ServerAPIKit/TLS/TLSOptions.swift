/// What a transport does for TLS beyond verifying the server: public-key pins, a client certificate, and the hosts
/// allowed below the TLS 1.2 floor.
///
/// ```swift
/// let tls = TLSOptions(
///     pins: [.sha256(["Base64OfCurrentKey=", "Base64OfBackupKey="], hosts: ["api.example.com"])],
///     clientCertificate: ClientCertificate(certificateFile: cert, keyFile: key, passphrase: "…"))
/// let transport = CurlTransport(configuration: .init(tls: tls))
/// ```
///
/// - Important: Pinning adds a check, it never replaces verification: the server's certificate chain and
///   host name are still verified. A transport that cannot honour these options refuses them when it is
///   created (`TLSFailure.notSupported`) instead of connecting without them.
public struct TLSOptions: Sendable, Hashable {
    /// The public keys servers must present, per host.
    public var pins: [PublicKeyPins]
    /// The certificate the transport presents when a server asks for one; `nil` for none.
    public var clientCertificate: ClientCertificate?
    /// The hosts (names or addresses, compared case-insensitively) that may speak TLS 1.0 or 1.1: none by default.
    ///
    /// TLS 1.2 is the floor for every other host: a server that offers only an older protocol fails with `tls`
    /// and `TLSFailure.protocolTooOld`. Lower it only for a device you cannot upgrade (an old printer, a
    /// controller on a private network): TLS 1.0 and 1.1 have known weaknesses and are deprecated (RFC 8996).
    /// The certificate is still verified.
    public var legacyProtocolHosts: Set<String>

    /// Creates TLS options.
    /// - Parameters:
    ///   - pins: The public keys servers must present, per host (none by default).
    ///   - clientCertificate: The certificate to present when a server asks for one.
    ///   - legacyProtocolHosts: The hosts that may speak TLS 1.0 or 1.1 (none by default).
    public init(
        pins: [PublicKeyPins] = [], clientCertificate: ClientCertificate? = nil, legacyProtocolHosts: Set<String> = []
    ) {
        self.pins = pins
        self.clientCertificate = clientCertificate
        self.legacyProtocolHosts = legacyProtocolHosts
    }

    /// Whether these options ask for nothing beyond normal verification.
    package var isEmpty: Bool {
        pins.allSatisfy(\.isEmpty) && clientCertificate == nil && legacyProtocolHosts.isEmpty
    }

    /// The pins that apply to `host`: those of every entry that names it; when no entry names it, those
    /// of the entries that name no host; `nil` when none apply (the host is verified normally).
    /// - Parameter host: The host called (compared case-insensitively).
    /// - Returns: The pins the host's public key must match one of, or `nil`.
    package func pins(for host: String) -> PublicKeyPins? {
        let host = host.lowercased()
        var named = pins.filter { entry in !entry.isEmpty && entry.hosts.contains { $0.lowercased() == host } }
        if named.isEmpty { named = pins.filter { !$0.isEmpty && $0.hosts.isEmpty } }
        guard !named.isEmpty else { return nil }
        return PublicKeyPins(
            hosts: [host], sha256: named.flatMap(\.sha256), keyFiles: named.flatMap(\.keyFiles))
    }
}
