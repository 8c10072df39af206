import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPICurl

@Suite("CurlTransport: TLS")
struct CurlTLSTests {

    /// A transport that trusts the test CA, with `tls`.
    func transport(_ certificates: TestCertificates, tls: TLSOptions = TLSOptions(), insecureHosts: Set<String> = [])
        -> CurlTransport
    {
        CurlTransport(
            configuration: .init(
                additionalTrustedCAFile: certificates.file("ca.pem"), insecureHosts: insecureHosts, tls: tls))
    }

    // MARK: Verification

    @Test("an untrusted certificate is a TLS error: certificate not trusted")
    func untrusted() async throws {
        try await CurlTestServer.withTLS { server, _ in
            let error = await expectError {
                try await CurlTransport().perform(TransportRequest(url: server.url("/echo")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .untrustedCertificate)
            #expect(error?.message.contains("certificate") == true)
            // libcurl's own message is kept, in its TLS library's words.
            let words =
                CurlTransport.tlsLibrary.hasPrefix("GnuTLS")
                ? "certificate signer not trusted" : "SSL certificate problem"
            #expect(error?.message.contains(words) == true, "\(String(describing: error))")
        }
    }

    @Test("a transport trusts an extra CA file")
    func extraCA() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            let response = try await transport(certificates).perform(TransportRequest(url: server.url("/echo")))
            #expect(response.status == 200)
            #expect(try Echo(response).method == "GET")
        }
    }

    @Test("the host name is verified even when the CA is trusted: hostname mismatch")
    func hostNameMismatch() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            let error = await expectError {
                try await transport(certificates).perform(TransportRequest(url: server.otherHostURL("/echo")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .hostnameMismatch)
        }
    }

    @Test(
        "libcurl's host-name messages, as 7.88 and 8.14 word them, are a hostname mismatch",
        arguments: [
            "SSL: no alternative certificate subject name matches target host name 'wronghost.test'",
            "SSL: no alternative certificate subject name matches target hostname 'wronghost.test'",
            "SSL: no alternative certificate subject name matches target ipv4 address '127.0.0.1'",
            "SSL: certificate subject name 'a.test' does not match target hostname 'wronghost.test'",
        ])
    func hostNameMessages(message: String) {
        #expect(ServerAPIError.namesHostMismatch(message))
        #expect(!ServerAPIError.namesHostMismatch("SSL certificate problem: unable to get local issuer certificate"))
    }

    @Test(
        "a refused protocol version, as OpenSSL and GnuTLS word it, is protocol too old",
        arguments: [
            "OpenSSL/3.0.19: error:0A00042E:SSL routines::tlsv1 alert protocol version",
            "error:0A000102:SSL routines::unsupported protocol",
            "GnuTLS, handshake failed: Error in protocol version",
        ])
    func oldProtocolMessages(message: String) {
        // `tlsFailure` hands it the lower-cased message.
        #expect(ServerAPIError.namesOldProtocol(message.lowercased()))
        #expect(!ServerAPIError.namesOldProtocol("gnutls, handshake failed: decryption has failed."))
    }

    @Test("GnuTLS's verification messages for a certificate out of its validity period are an expired certificate")
    func gnuTLSExpiryMessages() {
        #expect(ServerAPIError.namesExpiry("server verification failed: certificate has expired. (CAfile: ca.pem)"))
        #expect(ServerAPIError.namesExpiry("server certificate expired"))
        #expect(ServerAPIError.namesExpiry("server certificate not activated yet"))
        #expect(!ServerAPIError.namesExpiry("server verification failed: certificate signer not trusted."))
    }

    @Test("a certificate for another host name is a hostname mismatch")
    func wrongHostCertificate() async throws {
        try await CurlTestServer.withTLS(certificate: "wrong-host") { server, certificates in
            let error = await expectError {
                try await transport(certificates).perform(TransportRequest(url: server.url("/echo")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .hostnameMismatch, "\(String(describing: error))")
            #expect(error?.message.contains("hostname mismatch") == true)
        }
    }

    @Test("an expired certificate is a TLS error: certificate expired")
    func expired() async throws {
        try await CurlTestServer.withTLS(certificate: "expired") { server, certificates in
            let error = await expectError {
                try await transport(certificates).perform(TransportRequest(url: server.url("/echo")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .expiredCertificate, "\(String(describing: error))")
        }
    }

    @Test("verification is off only for the hosts listed as insecure")
    func insecureHosts() async throws {
        try await CurlTestServer.withTLS { server, _ in
            let transport = CurlTransport(configuration: .init(insecureHosts: ["127.0.0.1"]))
            let response = try await transport.perform(TransportRequest(url: server.url("/echo")))
            #expect(response.status == 200)
            let other = await expectError {
                try await transport.perform(TransportRequest(url: server.otherHostURL("/echo")))
            }
            #expect(other?.kind == .tls)
        }
    }

    // MARK: Pinning

    @Test("the server's own pin passes")
    func rightPin() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            let tls = TLSOptions(pins: [.sha256([try certificates.pin("server.pin")])])
            let response = try await transport(certificates, tls: tls).perform(
                TransportRequest(url: server.url("/echo")))
            #expect(response.status == 200)
        }
    }

    @Test("a pin in libcurl's sha256// form and a pinned key file pass")
    func pinForms() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            let prefixed = TLSOptions(pins: [.sha256(["sha256//" + (try certificates.pin("server.pin"))])])
            let byFile = TLSOptions(pins: [PublicKeyPins(keyFiles: [certificates.file("server.pub.pem")])])
            for tls in [prefixed, byFile] {
                let response = try await transport(certificates, tls: tls).perform(
                    TransportRequest(url: server.url("/echo")))
                #expect(response.status == 200)
            }
        }
    }

    @Test("a wrong pin is a pin mismatch, by digest and by key file")
    func wrongPin() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            let byDigest = TLSOptions(pins: [.sha256([try certificates.pin("backup.pin")])])
            let byFile = TLSOptions(pins: [PublicKeyPins(keyFiles: [certificates.file("backup.pub.pem")])])
            for tls in [byDigest, byFile] {
                let error = await expectError {
                    try await transport(certificates, tls: tls).perform(TransportRequest(url: server.url("/echo")))
                }
                #expect(error?.kind == .tls)
                #expect(error?.tlsFailure == .pinMismatch)
                #expect(error?.message.contains("pinned public key") == true)
            }
        }
    }

    @Test("one of several pins matching is enough (key rotation)")
    func rotation() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            let pins = [try certificates.pin("backup.pin"), try certificates.pin("server.pin")]
            for order in [pins, pins.reversed()] {
                let tls = TLSOptions(pins: [.sha256(order, hosts: ["127.0.0.1"])])
                let response = try await transport(certificates, tls: tls).perform(
                    TransportRequest(url: server.url("/echo")))
                #expect(response.status == 200)
            }
        }
    }

    @Test("a pin for another host does not apply to this one, and applies to its own")
    func pinPerHost() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            // localhost is listed as insecure (the certificate names 127.0.0.1 only) to show that its pin
            // is still checked: pinning never depends on, nor turns off, verification.
            let tls = TLSOptions(pins: [.sha256([try certificates.pin("backup.pin")], hosts: ["LocalHost"])])
            let transport = transport(certificates, tls: tls, insecureHosts: ["localhost"])
            let response = try await transport.perform(TransportRequest(url: server.url("/echo")))
            #expect(response.status == 200)
            let error = await expectError {
                try await transport.perform(TransportRequest(url: server.otherHostURL("/echo")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .pinMismatch)
        }
    }

    @Test("pins do not turn verification off")
    func pinStillVerifies() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            // The right pin, but no trust in the test CA: the certificate is still rejected.
            let tls = TLSOptions(pins: [.sha256([try certificates.pin("server.pin")])])
            let error = await expectError {
                try await CurlTransport(configuration: .init(tls: tls)).perform(
                    TransportRequest(url: server.url("/echo")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .untrustedCertificate)
        }
    }

    @Test("a malformed pin is refused when the transport is created")
    func malformedPin() async throws {
        let tls = TLSOptions(pins: [.sha256(["not-a-digest"])])
        let validating = #expect(throws: ServerAPIError.self) { try CurlTransport(validating: .init(tls: tls)) }
        #expect(validating?.kind == .invalidRequest)
        #expect(validating?.message.contains("not-a-digest") == true)
        let error = await expectError {
            try await CurlTransport(configuration: .init(tls: tls)).perform(
                TransportRequest(url: URL(string: "https://127.0.0.1:9/")!))
        }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("not-a-digest") == true)
    }

    // MARK: Client certificates

    func clientCertificate(_ certificates: TestCertificates, key: String = "client.key", passphrase: String? = nil)
        -> TLSOptions
    {
        TLSOptions(
            clientCertificate: ClientCertificate(
                certificateFile: certificates.file("client.pem"), keyFile: certificates.file(key),
                passphrase: passphrase))
    }

    /// The subject of the client certificate the server saw.
    func subject(_ response: TransportResponse) throws -> String? {
        struct WhoAmI: Decodable { var subject: String? }
        return try JSONDecoder().decode(WhoAmI.self, from: response.data ?? Data()).subject
    }

    @Test("a server requiring a client certificate rejects a call without one")
    func clientCertificateRequired() async throws {
        try await CurlTestServer.withTLS(requiresClientCertificate: true) { server, certificates in
            let error = await expectError {
                try await transport(certificates).perform(TransportRequest(url: server.url("/whoami")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .clientCertificateRejected)
            // libcurl's GnuTLS flavour does not name the alert.
            let words = CurlTransport.tlsLibrary.hasPrefix("GnuTLS") ? "fatal alert" : "certificate required"
            #expect(error?.message.contains(words) == true, "\(String(describing: error))")
        }
    }

    @Test("a connection reset right after the handshake, the request unanswered, is a rejected client certificate")
    func resetAfterHandshake() async throws {
        // Under TLS 1.3 the server checks the client certificate after the handshake: when it drops the client, the
        // reset often destroys its alert before libcurl reads it. The fixture resets without an alert, every time.
        try await CurlTestServer.withTLS(resetAfterHandshake: true) { server, certificates in
            for tls in [TLSOptions(), clientCertificate(certificates)] {
                let transport = try CurlTransport(
                    validating: .init(additionalTrustedCAFile: certificates.file("ca.pem"), tls: tls))
                let error = await expectError {
                    try await transport.perform(TransportRequest(url: server.url("/echo")))
                }
                #expect(error?.kind == .tls)
                #expect(error?.tlsFailure == .clientCertificateRejected)
                #expect(
                    error?.message.hasPrefix(
                        "client certificate rejected: the server closed the connection right after the TLS handshake"
                    ) == true, "\(String(describing: error))")
                #expect(error?.recoverySuggestion?.contains("client certificate") == true)
            }
        }
    }

    @Test("a handshake the server refused says what to try: a client certificate, not the server's certificate")
    func handshakeFailedHint() {
        let error = ServerAPIError.tls(.handshakeFailed, "TLS handshake failed (sslv3 alert handshake failure)")
        #expect(error.recoverySuggestion?.contains("client certificate") == true)
        #expect(error.recoverySuggestion?.contains("server's certificate") == false)
    }

    @Test("with the client certificate the server answers and saw its subject")
    func clientCertificatePresented() async throws {
        try await CurlTestServer.withTLS(requiresClientCertificate: true) { server, certificates in
            let plain = clientCertificate(certificates)
            let encrypted = clientCertificate(certificates, key: "client-encrypted.key", passphrase: "test-passphrase")
            for tls in [plain, encrypted] {
                let transport = try CurlTransport(
                    validating: .init(additionalTrustedCAFile: certificates.file("ca.pem"), tls: tls))
                let response = try await transport.perform(TransportRequest(url: server.url("/whoami")))
                #expect(response.status == 200)
                #expect(try subject(response) == "CN=ServerAPIKit Test Client")
            }
        }
    }

    @Test("a client certificate from a CA the server does not trust is rejected")
    func clientCertificateUnknownCA() async throws {
        try await CurlTestServer.withTLS(requiresClientCertificate: true) { server, certificates in
            let tls = TLSOptions(
                clientCertificate: ClientCertificate(
                    certificateFile: certificates.file("stranger.pem"), keyFile: certificates.file("stranger.key")))
            let error = await expectError {
                try await transport(certificates, tls: tls).perform(TransportRequest(url: server.url("/whoami")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .clientCertificateRejected)
        }
    }

    @Test("a wrong passphrase is a client certificate problem naming the key file")
    func wrongPassphrase() async throws {
        try await CurlTestServer.withTLS(requiresClientCertificate: true) { server, certificates in
            let tls = clientCertificate(certificates, key: "client-encrypted.key", passphrase: "wrong")
            let error = await expectError {
                try await transport(certificates, tls: tls).perform(TransportRequest(url: server.url("/whoami")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .clientCertificateProblem, "\(String(describing: error))")
            #expect(error?.message.contains("client-encrypted.key") == true)
        }
    }

    @Test(
        "a missing certificate file, or an encrypted key without passphrase, is refused at creation")
    func clientCertificateFilesChecked() async throws {
        try await TestCertificates.with { certificates in
            let missing = TLSOptions(
                clientCertificate: ClientCertificate(
                    certificateFile: certificates.file("absent.pem"), keyFile: certificates.file("client.key")))
            let missingKey = clientCertificate(certificates, key: "absent.key")
            let noPassphrase = clientCertificate(certificates, key: "client-encrypted.key")
            let swapped = TLSOptions(
                clientCertificate: ClientCertificate(
                    certificateFile: certificates.file("client.key"), keyFile: certificates.file("client.pem")))
            for (tls, file) in [
                (missing, "absent.pem"), (missingKey, "absent.key"), (noPassphrase, "client-encrypted.key"),
                (swapped, "client.key"),
            ] {
                do throws(ServerAPIError) {
                    _ = try CurlTransport(validating: .init(tls: tls))
                    Issue.record("\(file): the transport was created")
                } catch {
                    #expect(error.kind == .tls)
                    #expect(error.tlsFailure == .clientCertificateProblem)
                    #expect(error.message.contains(file), "\(error.message)")
                }
            }
            // Without validation, every request fails with the same error, before any connection.
            let error = await expectError {
                try await CurlTransport(configuration: .init(tls: missing)).perform(
                    TransportRequest(url: URL(string: "https://127.0.0.1:9/")!))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .clientCertificateProblem)
            #expect(error?.message.contains("absent.pem") == true)
        }
    }
}
