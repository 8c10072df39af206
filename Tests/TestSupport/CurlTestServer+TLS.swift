extension CurlTestServer {
    /// Runs `body` with an HTTPS server and a fresh set of test certificates, both gone afterwards.
    /// - Parameters:
    ///   - certificate: The certificate the server presents, by name in the set: `"server"` (signed by the
    ///     test CA for 127.0.0.1), `"wrong-host"`, `"expired"`.
    ///   - requiresClientCertificate: Whether the server demands a client certificate signed by the set's
    ///     client CA (`client-ca.pem`).
    ///   - onlyTLS11: Whether the server offers TLS 1.1 alone (an old device).
    ///   - resetAfterHandshake: Whether the server resets each connection right after the handshake.
    ///   - body: Work that gets the running server and the certificates (the CA to trust, pins, client
    ///     identities).
    /// - Returns: What `body` returns.
    /// - Throws: When the certificates cannot be made or the server does not start, or what `body` throws.
    public static func withTLS<T>(
        certificate: String = "server", requiresClientCertificate: Bool = false, onlyTLS11: Bool = false,
        resetAfterHandshake: Bool = false, _ body: (CurlTestServer, TestCertificates) async throws -> T
    ) async throws -> T {
        try await TestCertificates.with { certificates in
            let tls = (certificates.file("\(certificate).pem"), certificates.file("\(certificate).key"))
            let clientCA = requiresClientCertificate ? certificates.file("client-ca.pem") : nil
            return try await CurlTestServer.with(
                tls: tls, clientCA: clientCA, onlyTLS11: onlyTLS11, resetAfterHandshake: resetAfterHandshake
            ) { server in
                try await body(server, certificates)
            }
        }
    }
}
