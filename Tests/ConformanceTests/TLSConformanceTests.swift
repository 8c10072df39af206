import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession
import Testing

extension TransportKind {
    /// A transport of this kind with TLS options; throws when the kind refuses them.
    /// - Parameter caFile: An extra CA to trust, where the kind can take one (curl).
    func make(tls: TLSOptions, caFile: URL? = nil) throws -> any RequestPerforming {
        switch self {
        case .urlsession: try URLSessionTransport(tls: tls)
        case .curl: try CurlTransport(validating: .init(additionalTrustedCAFile: caFile, tls: tls))
        case .curlHTTP2:
            try CurlTransport(validating: .init(httpVersion: .http2, additionalTrustedCAFile: caFile, tls: tls))
        case .curlHTTP3:
            try CurlTransport(validating: .init(httpVersion: .http3Only, additionalTrustedCAFile: caFile, tls: tls))
        }
    }
}

/// TLS failures are typed alike on every backend, and TLS options are never silently ignored. The servers here are
/// TLS over TCP (`CurlTestServer`), so the QUIC kind is not among the arguments: `HTTP3Tests` checks QUIC's TLS.
@Suite("Conformance: TLS")
struct TLSConformanceTests {
    @Test(
        "an untrusted certificate is a TLS error of detail untrusted on every backend",
        arguments: TransportKind.overTCP)
    func untrusted(kind: TransportKind) async throws {
        try await CurlTestServer.withTLS { server, _ in
            let error = await #expect(throws: ServerAPIError.self) {
                _ = try await kind.make().send(server.url("/echo"))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .untrustedCertificate)
            #expect(error?.message.contains("certificate not trusted") == true, "\(String(describing: error))")
        }
    }

    @Test(
        "a server that offers only TLS 1.1 is refused as protocol too old; a host let down to it is answered",
        arguments: TransportKind.overTCP)
    func protocolFloor(kind: TransportKind) async throws {
        try await CurlTestServer.withTLS(certificate: "server-rsa", onlyTLS11: true) { server, certificates in
            let known: KnownLimit? =
                kind == .urlsession
                ? .expectation(
                    "floor",
                    because: "FoundationNetworking has no protocol floor to set: its libcurl takes TLS 1.1 and fails "
                        + "later, on the test CA it cannot be told to trust")
                : nil
            let transport = try kind.make(tls: TLSOptions(), caFile: certificates.file("ca.pem"))
            let error = await expectError { try await transport.send(server.url("/echo")) }
            #expect(error?.kind == .tls)
            let check = {
                #expect(error?.tlsFailure == .protocolTooOld, "floor")
                #expect(error?.message.hasPrefix("protocol too old: ") == true, "floor")
            }
            if let known {
                withKnownIssue(Comment(rawValue: known.reason)) {
                    check()
                } matching: {
                    known.matches($0)
                }
            } else {
                check()
            }
            guard kind != .urlsession else { return }
            let legacy = try kind.make(
                tls: TLSOptions(legacyProtocolHosts: ["127.0.0.1"]), caFile: certificates.file("ca.pem"))
            #expect(try await legacy.send(server.url("/echo")).status == 200)
        }
    }

    @Test(
        "a TLS error after a redirect names the URL whose host failed, not the first one",
        arguments: TransportKind.overTCP)
    func tlsErrorAfterRedirect(kind: TransportKind) async throws {
        try await CurlTestServer.withTLS { server, _ in
            let target = server.url("/echo").absoluteString
            let first = try kind.fixture(
                "/redirect-to?url=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            let error = await expectError { try await kind.make().send(first) }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .untrustedCertificate)
            #expect(error?.url?.absoluteString == target, "\(String(describing: error))")
        }
    }

    @Test(
        "a wrong pin is never ignored: refused when the transport is made, or a pin mismatch",
        arguments: TransportKind.overTCP)
    func wrongPin(kind: TransportKind) async throws {
        try await CurlTestServer.withTLS { server, certificates in
            let tls = TLSOptions(pins: [.sha256([try certificates.pin("backup.pin")])])
            // Which kinds refuse pins is the documented rule, not whatever a kind does today: URLSessionTransport
            // refuses them on every platform; CurlTransport pins (CURLOPT_PINNEDPUBLICKEY), so a refusal there
            // is a failure, not an early way out.
            let refuses = kind == .urlsession
            let transport: any RequestPerforming
            do {
                transport = try kind.make(tls: tls, caFile: certificates.file("ca.pem"))
            } catch let error as ServerAPIError {
                #expect(refuses, "\(kind) refused the pin: \(error)")
                #expect(error.kind == .tls)
                #expect(error.tlsFailure == .notSupported)
                return
            }
            #expect(!refuses, "\(kind) took a pin it cannot check")
            let error = await #expect(throws: ServerAPIError.self) {
                _ = try await transport.send(server.url("/echo"))
            }
            #expect(error?.kind == .tls)
            #expect(error?.tlsFailure == .pinMismatch)
            // The same transport without the pin reaches the server: the failure is the pin's.
            let unpinned = try kind.make(tls: TLSOptions(), caFile: certificates.file("ca.pem"))
            #expect(try await unpinned.send(server.url("/echo")).status == 200)
        }
    }
}
