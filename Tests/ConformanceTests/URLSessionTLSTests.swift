import Foundation
import ServerAPIKit
import ServerAPITestSupport
import ServerAPIURLSession
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the URLSession backend does with TLS options it cannot honour, and why.
@Suite("URLSessionTransport: TLS")
struct URLSessionTLSTests {
    @Test(
        "pinning and client certificates are refused when the transport is made",
        arguments: [
            TLSOptions(pins: [.sha256(["mx6zLy4JDCuIKsfDO3YIXY1XQdsGhHS7DaTIPXH0K/M="], hosts: ["api.example.com"])]),
            TLSOptions(
                clientCertificate: ClientCertificate(certificateFile: URL(fileURLWithPath: "/etc/app/client.pem"))),
        ])
    func refused(tls: TLSOptions) throws {
        do throws(ServerAPIError) {
            _ = try URLSessionTransport(tls: tls)
            Issue.record("the transport was made with \(tls)")
        } catch {
            #expect(error.kind == .tls)
            #expect(error.tlsFailure == .notSupported)
            #expect(error.message.contains("CurlTransport"))
            let asked = tls.clientCertificate == nil ? "public-key pinning" : "client certificates"
            #expect(error.message.contains(asked), "\(error.message)")
        }
    }

    @Test("empty TLS options give an ordinary transport")
    func emptyOptions() async throws {
        let transport = try URLSessionTransport(tls: TLSOptions())
        #expect(try await transport.send(try TestServers.fixture("/echo")).status == 200)
    }

    #if canImport(FoundationNetworking)
        /// Why the refusal: checked, not assumed. FoundationNetworking hands the TLS handshake to libcurl
        /// and never asks the session's delegate about server trust (it creates challenges only for a 401
        /// response, and `URLProtectionSpace.serverTrust` is unsupported on Linux), so a delegate cannot pin
        /// or pick a client certificate. A TLS failure arrives as `URLError.unknown` with libcurl's message.
        @Test("on Linux the session delegate is never asked about server trust")
        func noServerTrustChallenge() async throws {
            try await CurlTestServer.withTLS { server, _ in
                let delegate = ChallengeRecorder()
                let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
                defer { session.invalidateAndCancel() }
                let url = server.url("/echo")
                let error = await #expect(throws: (any Error).self) { _ = try await session.data(from: url) }
                #expect(delegate.challenges.isEmpty, "challenges: \(delegate.challenges)")
                let urlError = try #require(error as? URLError)
                #expect(urlError.code == .unknown)
                #expect(urlError.localizedDescription.contains("SSL certificate problem"))
            }
        }
    #endif
}

#if canImport(FoundationNetworking)
    /// Records every authentication challenge a session receives, and rejects it.
    // @unchecked: NSObject is not Sendable; the only state is the lock-protected list.
    final class ChallengeRecorder: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        private let recorded = Recorder<String>()
        var challenges: [String] { recorded.all }

        func urlSession(
            _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            recorded.append("session: \(challenge.protectionSpace.authenticationMethod)")
            completionHandler(.cancelAuthenticationChallenge, nil)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            recorded.append("task: \(challenge.protectionSpace.authenticationMethod)")
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }
#endif
