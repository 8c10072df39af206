import Foundation
import ServerAPITestSupport
import Testing

/// `--pin`, `--cert`, `--key`, `--key-pass` and the TLS exit line, against an HTTPS server of the libcurl
/// tests' fixture (`curl_test_server.py`) with certificates its `make_test_certificates.sh` makes.
@Suite("sapi: TLS")
struct SapiTLSTests {
    @Test(
        "--pin: the right pin answers, a wrong one exits 7 with a line naming the pin mismatch")
    func pins() async throws {
        try await CurlTestServer.withTLS { server, certificates in
            let base = server.base
            let ca = ["--insecure-ca", certificates.file("ca.pem").path]
            let right = try await SapiProcess.run(ca + ["--pin", try certificates.pin("server.pin"), "\(base)/echo"])
            #expect(right.code == 0, "\(right.stderr)")
            let wrong = try await SapiProcess.run(ca + ["--pin", try certificates.pin("backup.pin"), "\(base)/echo"])
            #expect(wrong.code == 7)
            #expect(wrong.stderr.hasPrefix("sapi: error: TLS pin mismatch: "), "\(wrong.stderr)")
            let untrusted = try await SapiProcess.run(["\(base)/echo"])
            #expect(untrusted.code == 7)
            #expect(untrusted.stderr.hasPrefix("sapi: error: TLS certificate not trusted: "), "\(untrusted.stderr)")
        }
    }

    @Test(
        "--cert and --key present a client certificate; without them the server's refusal exits 7")
    func clientCertificate() async throws {
        try await CurlTestServer.withTLS(requiresClientCertificate: true) { server, certificates in
            let base = server.base
            let ca = ["--insecure-ca", certificates.file("ca.pem").path]
            let identity = [
                "--cert", certificates.file("client.pem").path,
                "--key", certificates.file("client-encrypted.key").path, "--key-pass", "test-passphrase",
            ]
            let accepted = try await SapiProcess.run(ca + identity + ["\(base)/whoami"])
            #expect(accepted.code == 0, "\(accepted.stderr)")
            #expect(accepted.text.contains("CN=ServerAPIKit Test Client"))
            let refused = try await SapiProcess.run(ca + ["\(base)/whoami"])
            #expect(refused.code == 7)
            #expect(refused.stderr.hasPrefix("sapi: error: TLS client certificate rejected: "), "\(refused.stderr)")
        }
    }

    @Test("a server offering only TLS 1.1 exits 7 naming the old protocol; --legacy-tls lets its host in, warning")
    func protocolFloor() async throws {
        try await CurlTestServer.withTLS(certificate: "server-rsa", onlyTLS11: true) { server, certificates in
            let ca = ["--insecure-ca", certificates.file("ca.pem").path]
            let refused = try await SapiProcess.run(ca + ["\(server.base)/echo"])
            #expect(refused.code == 7)
            #expect(refused.stderr.hasPrefix("sapi: error: TLS protocol too old: "), "\(refused.stderr)")
            #expect(refused.stderr.contains("legacyProtocolHosts") || refused.stderr.contains("--legacy-tls"))
            let legacy = try await SapiProcess.run(ca + ["--legacy-tls", "\(server.base)/echo"])
            #expect(legacy.stderr.contains("--legacy-tls: 127.0.0.1 may use TLS 1.0 or 1.1"), "\(legacy.stderr)")
            #expect(legacy.code == 0, "\(legacy.stderr)")
            // This server closes each connection after its answer. sapi used to exit while its loop thread was still
            // closing that TLS connection, and OpenSSL's exit handler freed what the thread was using: signal 11 in
            // about one run in six of the release build. The transport is now shut down (its threads joined) first.
            for _ in 0..<20 {
                let again = try await SapiProcess.run(ca + ["--legacy-tls", "\(server.base)/echo"])
                #expect(again.code == 0, "\(again.stderr)")
            }
        }
    }

    @Test("a missing --cert file and the urlsession backend's refusal exit 1 with a clear line")
    func refusals() async throws {
        let missing = try await SapiProcess.run(["--cert", "/nonexistent/client.pem", "https://127.0.0.1:9/"])
        #expect(missing.code == 1)
        #expect(missing.stderr.contains("/nonexistent/client.pem"), "\(missing.stderr)")
        for option in [["--pin", "mx6zLy4JDCuIKsfDO3YIXY1XQdsGhHS7DaTIPXH0K/M="], ["--cert", "/etc/client.pem"]] {
            let outcome = try await SapiProcess.run(["--backend", "urlsession"] + option + ["https://127.0.0.1:9/"])
            #expect(outcome.code == 1)
            #expect(outcome.stderr.hasPrefix("sapi: error: URLSessionTransport cannot do "), "\(outcome.stderr)")
            #expect(outcome.stderr.contains("--backend curl"))
        }
    }
}
