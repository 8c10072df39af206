import Foundation
import ServerAPITestSupport
import ServerAPITesting
import Synchronization
import Testing

@_spi(Backend) @testable import ServerAPIKit

@Suite("Signing and common parameters", .timeLimit(.minutes(1)))
struct SigningPluginTests {
    @Test("common headers and query items reach every request; the call's own values win")
    func commonParameters() async throws {
        let mock = MockTransport()
        mock.stub(handler: { _ in .json("{}") })
        let common = CommonParametersPlugin(
            headers: ["X-App-Version": "5.2.0", "X-Channel": "store"],
            query: [QueryItem(name: "platform", value: "linux"), QueryItem(name: "lang", value: "en US")])
        let manager = ServerAPIManager(transport: mock, plugins: [common])
        _ = try await manager.send(.test("/a").query("q", "tea"))
        _ = try await manager.send(.test("/b").query("lang", "fr").setHeader("X-Channel", "beta"))
        _ = try await manager.send(.test("/c?page=2#top"))
        let requests = mock.requests
        #expect(requests[0].url.query == "q=tea&platform=linux&lang=en%20US")
        #expect(requests[0].headers["X-App-Version"] == "5.2.0" && requests[0].headers["X-Channel"] == "store")
        #expect(requests[1].url.query == "lang=fr&platform=linux")
        #expect(requests[1].headers.values(for: "X-Channel") == ["beta"])
        #expect(requests[2].url.query == "page=2&platform=linux&lang=en%20US")
    }

    @Test("computed common parameters are evaluated for each attempt")
    func dynamicParameters() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503), .json("{}"))
        let counter = Atomic<Int>(0)
        let common = CommonParametersPlugin { _ in
            let n = counter.add(1, ordering: .relaxed).newValue
            return .init(headers: ["X-Nonce": "n\(n)"], query: [QueryItem(name: "nonce", value: "\(n)")])
        }
        let manager = ServerAPIManager(transport: mock, plugins: [common])
        _ = try await manager.send(.test().retry(1, policy: .immediate))
        #expect(mock.requests.map { $0.headers["X-Nonce"] } == ["n1", "n2"])
        #expect(mock.requests.map(\.url.query) == ["nonce=1", "nonce=2"])
    }

    /// The README's example: a timestamp, a digest of the body, and a signature over method,
    /// path and query, timestamp and digest, computed by a closure the app passes.
    static func readmeSigner(now: @escaping @Sendable () -> Int) -> SigningPlugin {
        let secret = "s3cret"
        return SigningPlugin { request in
            let timestamp = String(now())
            let digest = try request.bodyDigest()
            let canonical = [request.method.rawValue, request.pathAndQuery, timestamp, digest, secret]
                .joined(separator: "\n")
            return [
                "X-Timestamp": timestamp, "X-Content-SHA256": digest,
                "X-Signature": SHA256.hex(Data(canonical.utf8)),
            ]
        }
    }

    @Test("the signer sees the exact query and body bytes that are sent, common parameters included")
    func signsWhatIsSent() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/v1/orders", .json("{}", status: 201))
        let seen = Recorder<SigningPlugin.Request>()
        let recorder = SigningPlugin { request in
            seen.append(request)
            return [:]
        }
        let manager = ServerAPIManager(
            transport: mock,
            plugins: [
                CommonParametersPlugin(query: [QueryItem(name: "app", value: "a/b")]),
                Self.readmeSigner(now: { 1_700_000_000 }), recorder,
            ])
        let order = ServerAPI(host: "https://api.test/v1", path: "orders", method: .post)
            .query("note", "café & tea").json(["item": "tea", "count": "2"])
        _ = try await manager.send(order)
        let sent = try #require(mock.requests.first)
        let signed = try #require(seen.all.first)
        #expect(signed.url == sent.url)
        #expect(signed.query == "note=caf%C3%A9%20%26%20tea&app=a%2Fb")
        #expect(signed.pathAndQuery == "/v1/orders?note=caf%C3%A9%20%26%20tea&app=a%2Fb")
        #expect(signed.bodyBytes == sent.body)
        #expect(sent.headers["X-Content-SHA256"] == SHA256.hex(sent.body))
        #expect(sent.headers["X-Timestamp"] == "1700000000")
        let canonical = ["POST", signed.pathAndQuery, "1700000000", SHA256.hex(sent.body), "s3cret"]
        #expect(sent.headers["X-Signature"] == SHA256.hex(Data(canonical.joined(separator: "\n").utf8)))
    }

    @Test("a body streamed from a file is digested, not loaded, and the digest matches the bytes sent")
    func fileBody() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sign-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: file)
        let mock = MockTransport()
        mock.stub(.put, "/upload", .json("{}"))
        let bodyWasInMemory = Locked<Bool?>(nil)
        let signer = SigningPlugin { request in
            bodyWasInMemory.withLock { $0 = request.bodyBytes != nil }
            return ["X-Content-SHA256": try request.bodyDigest()]
        }
        let manager = ServerAPIManager(transport: mock, plugins: [signer])
        let upload = ServerAPI.test("/upload").method(.put).body(.file(file, contentType: "application/octet-stream"))
        _ = try await manager.send(upload)
        #expect(bodyWasInMemory.withLock { $0 } == false)
        let sent = try #require(mock.requests.first)
        #expect(sent.body == bytes)
        #expect(sent.headers["X-Content-SHA256"] == SHA256.hex(bytes))
    }

    @Test("every retry is signed again, with a fresh timestamp")
    func retrySignedAgain() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/x", .status(503), .json("{}"))
        let clock = Atomic<Int>(100)
        let manager = ServerAPIManager(
            transport: mock, plugins: [Self.readmeSigner(now: { clock.add(1, ordering: .relaxed).newValue })])
        _ = try await manager.send(.test().retry(1, policy: .immediate))
        #expect(mock.requests.map { $0.headers["X-Timestamp"] } == ["101", "102"])
        #expect(Set(mock.requests.compactMap { $0.headers["X-Signature"] }).count == 2)
    }

    @Test("a signer that throws fails the call and sends nothing; a bad header is an invalid request")
    func signerFailure() async {
        let mock = MockTransport()
        let failing = ServerAPIManager(
            transport: mock,
            plugins: [SigningPlugin { _ in throw ServerAPIError(.invalidRequest, "no signing key") }])
        let unsigned = await expectError { try await failing.send(.test()) }
        #expect(unsigned?.kind == .invalidRequest && unsigned?.message == "no signing key")
        let badHeader = ServerAPIManager(transport: mock, plugins: [SigningPlugin { _ in ["X-Sig": "a\r\nb"] }])
        #expect(await expectError { try await badHeader.send(.test()) }?.kind == .invalidRequest)
        #expect(mock.requestCount == 0)
    }
}
