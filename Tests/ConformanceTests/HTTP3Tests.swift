import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPIMemoryCache
import ServerAPITestSupport
import ServerAPITesting
import Testing

/// HTTP/3 against a real QUIC server on loopback (Tests/Fixtures/h3_server.py, aioquic, with the HTTP/2 front's
/// certificate): calls answered over QUIC say "3" in their metrics, bodies go both ways whole, a cancelled body
/// ends at once, `.http3` falls back to TCP where nothing answers on UDP, and `.http3Only` fails there, typed.
///
/// Every test runs on every build. On a libcurl without HTTP/3 (Debian's OpenSSL flavour) each checks the typed
/// refusal instead; a run that expects HTTP/3 (`SAPI_EXPECT_HTTP3=1`: the conformance run on the GnuTLS build, see
/// scripts/libcurl-gnutls.sh) fails if the libcurl it loaded has none, so the QUIC cases cannot pass unseen.
@Suite("Conformance: HTTP/3")
struct HTTP3Tests {
    static let expectsHTTP3 = ProcessInfo.processInfo.environment["SAPI_EXPECT_HTTP3"] == "1"

    /// A `CurlTransport` with `version`, trusting the test CA, keeping `Alt-Svc` answers in `altSvc`.
    private func transport(
        _ version: HTTPVersion = .http3, altSvc: CurlTransport.AltSvcCache? = nil, loopCount: Int = 1
    ) throws -> CurlTransport {
        var configuration = CurlTransport.Configuration(
            httpVersion: version, additionalTrustedCAFile: try TestServers.h2CAFile())
        configuration.altSvc = altSvc
        configuration.loopCount = loopCount
        configuration.loopAssignment = .roundRobin
        return CurlTransport(configuration: configuration)
    }

    /// A manager over `transport(version, altSvc:, loopCount:)`.
    private func manager(
        _ version: HTTPVersion = .http3, altSvc: CurlTransport.AltSvcCache? = nil, loopCount: Int = 1
    ) throws -> ServerAPIManager {
        ServerAPIManager(transport: try transport(version, altSvc: altSvc, loopCount: loopCount))
    }

    /// A URL on the HTTP/3 peer's QUIC port.
    private func h3(_ path: String) throws -> URL { try TestServers.url(base: TestServers.h3(), path) }

    /// A URL on the HTTP/3 peer's HTTPS/1.1 origin (TCP only).
    private func tcpOnly(_ path: String) throws -> URL { try TestServers.url(base: TestServers.h3AltSvc(), path) }

    /// Whether the loaded libcurl speaks HTTP/3. When it does not, checks what a user then gets for `version`: an
    /// `unsupported` error that says what is missing, from `CurlTransport(validating:)` and from a call alike.
    private func hasHTTP3(
        refusing version: HTTPVersion = .http3, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Bool {
        if CurlTransport.supportsHTTP3 { return true }
        #expect(
            !Self.expectsHTTP3,
            "SAPI_EXPECT_HTTP3=1, but the loaded libcurl \(CurlTransport.libcurlVersion) has no HTTP/3",
            sourceLocation: sourceLocation)
        let created = await expectError { try CurlTransport(validating: .init(httpVersion: version)) }
        #expect(created?.kind == .unsupported, sourceLocation: sourceLocation)
        #expect(created?.message.contains("needs a libcurl built with HTTP/3") == true, sourceLocation: sourceLocation)
        let manager = try manager(version)
        let error = await expectError { try await manager.send(ServerAPI(url: try h3("/get")).format(.data)) }
        #expect(error?.kind == .unsupported, sourceLocation: sourceLocation)
        return false
    }

    /// The fixture's `/get` answer: which protocol carried the request.
    private func protocolName(_ result: ServerResult) throws -> String? {
        let object = try JSONSerialization.jsonObject(with: result.data ?? Data()) as? [String: Any]
        return object?["protocol"] as? String
    }

    @Test("a call with .http3 is answered over QUIC, and its metrics say 3")
    func answeredOverQUIC() async throws {
        guard try await hasHTTP3() else { return }
        let result = try await manager().send(ServerAPI(url: try h3("/get")).format(.data))
        #expect(result.status == 200)
        #expect(result.metrics.transport?.httpVersion == "3")
        #expect(try protocolName(result) == "h3")
    }

    @Test("a 1 MiB request body goes over QUIC whole")
    func postBody() async throws {
        guard try await hasHTTP3() else { return }
        let body = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let result = try await manager().send(
            ServerAPI(url: try h3("/post")).method(.post).body(.data(body)).format(.data))
        #expect(result.status == 200)
        #expect(result.metrics.transport?.httpVersion == "3")
        #expect(result.data == body)
    }

    @Test("an 8 MiB response body arrives whole over QUIC")
    func largeBody() async throws {
        guard try await hasHTTP3() else { return }
        let size = 8 << 20
        let result = try await manager().send(ServerAPI(url: try h3("/bytes?size=\(size)")).format(.data))
        #expect(result.status == 200)
        #expect(result.metrics.transport?.httpVersion == "3")
        let data = try #require(result.data)
        #expect(data.count == size)
        // The fixture's pattern: byte i is i modulo 256.
        #expect(data.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset) })
    }

    @Test("16 calls at once share one QUIC connection as streams")
    func concurrentStreams() async throws {
        guard try await hasHTTP3() else { return }
        let manager = try manager()
        let url = try h3("/get")
        let versions = try await withThrowingTaskGroup(of: TransportMetrics?.self) { group in
            for _ in 0..<16 {
                group.addTask { try await manager.send(ServerAPI(url: url).format(.data)).metrics.transport }
            }
            var metrics: [TransportMetrics?] = []
            for try await one in group { metrics.append(one) }
            return metrics
        }
        #expect(versions.allSatisfy { $0?.httpVersion == "3" }, "\(versions.map { $0?.httpVersion })")
        // CURLOPT_PIPEWAIT: the calls wait for the first connection rather than each opening one.
        let opened = versions.filter { $0?.reusedConnection == false }.count
        #expect(opened >= 1 && opened <= 2, "\(opened) QUIC connections opened")
    }

    @Test("a body cancelled part-way over QUIC ends at once with cancelled")
    func cancelMidBody() async throws {
        guard try await hasHTTP3() else { return }
        let response = try await manager().stream(ServerAPI(url: try h3("/slow?n=100&interval_ms=100")))
        #expect(response.metrics.transport?.httpVersion == "3" || response.metrics.transport == nil)
        var chunks = response.body.makeAsyncIterator()
        // The first chunk: the call is mid-body, the rest ten seconds away.
        #expect(try await chunks.next()?.isEmpty == false)
        let started = ContinuousClock.now
        response.cancel()
        let error = await expectError {
            while try await chunks.next() != nil {}
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.kind == .cancelled)
        #expect(elapsed < TestTiming.bound(.milliseconds(100)), "cancelled after \(elapsed)")
    }

    @Test("QUIC's TLS is checked as TCP's: an untrusted certificate and a wrong pin are TLS errors, not fallbacks")
    func tlsOverQUIC() async throws {
        guard try await hasHTTP3(refusing: .http3Only) else { return }
        // Without the test CA: the certificate is not trusted.
        let untrusted = CurlTransport(configuration: .init(httpVersion: .http3Only))
        let error = await expectError { try await untrusted.send(try h3("/get")) }
        #expect(error?.kind == .tls, "\(String(describing: error))")
        #expect(error?.tlsFailure == .untrustedCertificate, "\(String(describing: error))")
        // With it, and a pin that no key of the chain has.
        let wrongPin = "sha256//" + Data(repeating: 0x5A, count: 32).base64EncodedString()
        let pinned = try CurlTransport(
            validating: .init(
                httpVersion: .http3Only, additionalTrustedCAFile: try TestServers.h2CAFile(),
                tls: TLSOptions(pins: [.sha256([wrongPin])])))
        let mismatch = await expectError { try await pinned.send(try h3("/get")) }
        #expect(mismatch?.kind == .tls, "\(String(describing: mismatch))")
        #expect(mismatch?.tlsFailure == .pinMismatch, "\(String(describing: mismatch))")
        // `.http3` does not fall back to TCP past a certificate QUIC refused (the server's is the same there).
        let fallback = CurlTransport(configuration: .init(httpVersion: .http3))
        let refused = await expectError { try await fallback.send(try h3("/get")) }
        #expect(refused?.kind == .tls, "\(String(describing: refused))")
    }

    @Test(".http3 falls back to TCP when nothing answers on UDP")
    func fallsBackToTCP() async throws {
        guard try await hasHTTP3() else { return }
        let result = try await manager().send(ServerAPI(url: try tcpOnly("/get")).format(.data))
        #expect(result.status == 200)
        #expect(result.metrics.transport?.httpVersion == "1.1")
        #expect(try protocolName(result) == "http/1.1")
    }

    @Test(".http3Only fails at once, typed, when QUIC cannot be had")
    func onlyFailsFast() async throws {
        guard try await hasHTTP3(refusing: .http3Only) else { return }
        let manager = try manager(.http3Only)
        let started = ContinuousClock.now
        let error = await expectError {
            try await manager.send(ServerAPI(url: try tcpOnly("/get")).format(.data).retry(0))
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.kind == .cannotConnect, "\(String(describing: error))")
        // Loopback answers a QUIC packet to a closed UDP port at once (ICMP port unreachable): no timeout is waited.
        #expect(elapsed < TestTiming.bound(.seconds(2)), "failed after \(elapsed)")
        // And the same manager reaches a server that does speak QUIC.
        let result = try await manager.send(ServerAPI(url: try h3("/get")).format(.data))
        #expect(result.metrics.transport?.httpVersion == "3")
    }

    @Test("an Alt-Svc answer moves the later calls to its origin onto QUIC, on every loop")
    func altSvcUpgrade() async throws {
        guard try await hasHTTP3() else { return }
        // Two loops taking the calls in turn: the second call runs on the other loop, and still knows.
        let manager = try manager(altSvc: .memory, loopCount: 2)
        let first = try await manager.send(ServerAPI(url: try tcpOnly("/get")).format(.data))
        #expect(first.metrics.transport?.httpVersion == "1.1")
        #expect(first.headers["Alt-Svc"]?.hasPrefix("h3=") == true)
        for _ in 0..<2 {
            let later = try await manager.send(ServerAPI(url: try tcpOnly("/get")).format(.data))
            #expect(later.status == 200)
            #expect(later.metrics.transport?.httpVersion == "3")
            #expect(try protocolName(later) == "h3")
        }
    }

    @Test("an Alt-Svc cache in a file outlives its transport")
    func altSvcFile() async throws {
        guard try await hasHTTP3() else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("altsvc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("alt-svc.txt")
        let first = try await manager(altSvc: .file(file)).send(ServerAPI(url: try tcpOnly("/get")).format(.data))
        #expect(first.metrics.transport?.httpVersion == "1.1")
        let quicPort = try #require(URL(string: try TestServers.h3())?.port)
        let saved = try String(contentsOf: file, encoding: .utf8)
        #expect(saved.contains("h3 127.0.0.1 \(quicPort)"), "\(saved)")
        // A new transport reads the file: its first call to the origin goes over QUIC at once.
        let next = try await manager(altSvc: .file(file)).send(ServerAPI(url: try tcpOnly("/get")).format(.data))
        #expect(next.metrics.transport?.httpVersion == "3")
    }

    @Test("an HTTP/3 alternative that does not answer falls back to TCP in the same call, and is ignored after")
    func brokenAlternative() async throws {
        guard try await hasHTTP3() else { return }
        let curl = try transport(altSvc: .memory)
        let manager = ServerAPIManager(transport: curl)
        // The origin announces UDP port 1, where nothing listens.
        let api = ServerAPI(url: try tcpOnly("/get?alt_port=1")).format(.data)
        let first = try await manager.send(api)
        #expect(first.metrics.transport?.httpVersion == "1.1")
        #expect(first.headers["Alt-Svc"]?.hasPrefix("h3=\":1\"") == true)
        #expect(curl.brokenAlternatives.isEmpty)
        // The next call takes the alternative, which fails: it is answered over TCP all the same.
        let second = try await manager.send(api)
        #expect(second.status == 200)
        #expect(second.metrics.transport?.httpVersion == "1.1")
        let origin = try #require(URL(string: try TestServers.h3AltSvc()))
        #expect(curl.brokenAlternatives == ["127.0.0.1:\(try #require(origin.port))"])
        // Later calls go straight to the origin.
        let third = try await manager.send(api)
        #expect(third.metrics.transport?.httpVersion == "1.1")
        #expect(third.metrics.transport?.reusedConnection == true)
        #expect(curl.brokenAlternatives.count == 1)
    }

    // MARK: The manager's features over QUIC

    @Test("a 503 over QUIC is retried by the call's policy, and the retry is answered over QUIC")
    func retryOverQUIC() async throws {
        guard try await hasHTTP3() else { return }
        let api = ServerAPI(url: try h3("/flaky?key=\(UUID().uuidString)&failures=2")).format(.string)
            .retry(2, policy: .immediate)
        let result = try await manager().send(api)
        #expect(result.string == "recovered")
        #expect(result.metrics.attempts == 3)
        #expect(result.metrics.transport?.httpVersion == "3")
    }

    @Test("a stored response is revalidated over QUIC: If-None-Match, a 304, the stored body")
    func revalidationOverQUIC() async throws {
        guard try await hasHTTP3() else { return }
        var configuration = ServerAPIManager.Configuration()
        configuration.honorsHTTPCacheHeaders = true
        let manager = ServerAPIManager(transport: try transport(), cache: MemoryCache(), configuration: configuration)
        let api = ServerAPI(url: try h3("/etag")).format(.string).cache(.returnCacheElseLoad)
        let first = try await manager.send(api)
        #expect(first.string == "validated over h3")
        #expect(!first.isFromCache)
        // `no-cache`: the next call asks the server, which answers 304; the stored body answers it.
        let second = try await manager.send(api.id(.next()))
        #expect(second.status == 200)
        #expect(second.string == "validated over h3")
        #expect(second.isFromCache)
        #expect(second.metrics.transport?.httpVersion == "3")
    }

    @Test("a download reset part-way over QUIC resumes with Range and ends byte-identical")
    func resumedDownloadOverQUIC() async throws {
        guard try await hasHTTP3() else { return }
        let scratch = try Scratch()
        let size = 1_000_000
        let target = DownloadTarget(destination: scratch.file("quic.bin"), resume: true)
        let curl = try transport()
        let url = try h3("/bytes?size=\(size)&drop_after=400000")
        let error = await expectError { _ = try await curl.send(url) { $0.download = target } }
        #expect(error?.kind == .network)
        let kept = scratch.size(target.partialURL) ?? 0
        #expect(kept > 0 && kept <= 400_000)
        let response = try await curl.send(url) { $0.download = target }
        #expect(response.status == 206)
        #expect(response.metrics.httpVersion == "3")
        #expect(response.body == .file(target.destination, bytes: Int64(size)))
        let bytes = try Data(contentsOf: target.destination)
        #expect(bytes.count == size)
        #expect(bytes.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset) })
    }

    @Test("a call over QUIC is recorded in HAR as HTTP/3")
    func harOverQUIC() async throws {
        guard try await hasHTTP3() else { return }
        let scratch = try Scratch()
        let recording = RecordingTransport(recording: try transport(), to: scratch.file("quic.har"))
        _ = try await ServerAPIManager(transport: recording).send(ServerAPI(url: try h3("/get")).format(.data))
        let entry = try #require(recording.archive.entries.first)
        #expect(entry.request.httpVersion == "HTTP/3")
        #expect(entry.response.httpVersion == "HTTP/3")
        #expect(entry.response.status == 200)
    }
}
