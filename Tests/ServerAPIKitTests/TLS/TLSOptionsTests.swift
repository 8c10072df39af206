import Foundation
import ServerAPIKit
import Testing

@Suite("TLSOptions and TLSFailure")
struct TLSOptionsTests {
    let current = "mx6zLy4JDCuIKsfDO3YIXY1XQdsGhHS7DaTIPXH0K/M="
    let backup = "X4qYboim1mSbhlbYe1EdxfUWI6dwxhqhvqqlWGIAksE="
    let other = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

    @Test("pins naming a host apply to it alone; pins without hosts apply to every other host")
    func pinsPerHost() {
        let options = TLSOptions(pins: [
            .sha256([current], hosts: ["API.example.com"]),
            .sha256([backup], hosts: ["api.example.com", "auth.example.com"]),
            .sha256([other]),
        ])
        #expect(options.pins(for: "api.example.com")?.sha256 == [current, backup])
        #expect(options.pins(for: "Auth.Example.com")?.sha256 == [backup])
        #expect(options.pins(for: "cdn.example.com")?.sha256 == [other])
        #expect(TLSOptions(pins: [.sha256([current], hosts: ["api.example.com"])]).pins(for: "cdn.example.com") == nil)
    }

    @Test("empty options ask for nothing; a pin or a certificate is something")
    func isEmpty() {
        #expect(TLSOptions().isEmpty)
        #expect(TLSOptions(pins: [PublicKeyPins(hosts: ["a.example"])]).isEmpty)
        #expect(!TLSOptions(pins: [.sha256([current])]).isEmpty)
        let certificate = ClientCertificate(certificateFile: URL(fileURLWithPath: "/c.pem"), passphrase: "secret")
        #expect(!TLSOptions(clientCertificate: certificate).isEmpty)
        #expect(!certificate.description.contains("secret"))
    }

    @Test("a TLS error carries its failure and a matching suggestion")
    func tlsError() {
        let error = ServerAPIError.tls(.pinMismatch, "pin mismatch: the key matches no pin")
        #expect(error.kind == .tls)
        #expect(error.tlsFailure == .pinMismatch)
        #expect(error.recoverySuggestion?.contains("pin") == true)
        #expect(ServerAPIError(.tls, "handshake").tlsFailure == nil)
    }
}
