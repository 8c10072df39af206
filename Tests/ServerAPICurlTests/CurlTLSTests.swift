import Foundation
import ServerAPICurl
import ServerAPIKit
import Testing

@Suite("CurlTransport: TLS")
struct CurlTLSTests {
    static let hasOpenSSL = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")

    /// Runs `body` with an HTTPS server whose certificate a fresh test CA (`ca.pem`) signed.
    func withTLSServer(_ body: (TestServer, URL) async throws -> Void) async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [
                Fixture.directory.appendingPathComponent("make_test_certificates.sh").path, directory.path,
            ]
            let exited = Signal()
            process.terminationHandler = { _ in exited.fire() }
            try process.run()
            await exited.wait()
            try #require(process.terminationStatus == 0)
            let tls = (directory.appendingPathComponent("server.pem"), directory.appendingPathComponent("server.key"))
            try await Fixture.withServer(tls: tls) { server in
                try await body(server, directory.appendingPathComponent("ca.pem"))
            }
        }
    }

    @Test("an untrusted certificate is a TLS error", .enabled(if: hasOpenSSL))
    func untrusted() async throws {
        try await withTLSServer { server, _ in
            let error = await expectError {
                try await CurlTransport().perform(TransportRequest(url: server.url("/echo")))
            }
            #expect(error?.kind == .tls)
            #expect(error?.message.contains("certificate") == true)
        }
    }

    @Test("a transport trusts an extra CA file", .enabled(if: hasOpenSSL))
    func extraCA() async throws {
        try await withTLSServer { server, ca in
            let transport = CurlTransport(configuration: .init(additionalTrustedCAFile: ca))
            let response = try await transport.perform(TransportRequest(url: server.url("/echo")))
            #expect(response.status == 200)
            #expect(try Echo(response).method == "GET")
        }
    }

    @Test("the host name is verified even when the CA is trusted", .enabled(if: hasOpenSSL))
    func hostNameMismatch() async throws {
        try await withTLSServer { server, ca in
            let transport = CurlTransport(configuration: .init(additionalTrustedCAFile: ca))
            let error = await expectError {
                try await transport.perform(TransportRequest(url: server.otherHostURL("/echo")))
            }
            #expect(error?.kind == .tls)
        }
    }

    @Test("verification is off only for the hosts listed as insecure", .enabled(if: hasOpenSSL))
    func insecureHosts() async throws {
        try await withTLSServer { server, _ in
            let transport = CurlTransport(configuration: .init(insecureHosts: ["127.0.0.1"]))
            let response = try await transport.perform(TransportRequest(url: server.url("/echo")))
            #expect(response.status == 200)
            let other = await expectError {
                try await transport.perform(TransportRequest(url: server.otherHostURL("/echo")))
            }
            #expect(other?.kind == .tls)
        }
    }
}
