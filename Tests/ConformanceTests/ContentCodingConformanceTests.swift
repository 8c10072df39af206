import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Content codings on every transport, against the fixture's `/coding` routes: each coding the transport
/// offers is decoded to the exact bytes, one it cannot decode is a typed error, a decompression bomb is
/// stopped by `maxResponseSize` and by the decompression ratio, and an already-compressed file keeps its bytes.
@Suite("Conformance: content codings")
struct ContentCodingConformanceTests {
    /// The codings both backends decode here: Debian 12's libcurl 7.88 (zlib, brotli, zstd), which
    /// FoundationNetworking uses too.
    static let codings = ["gzip", "deflate", "deflate-raw", "br", "zstd", "identity"]

    /// The decoded body the fixture encodes: `size` bytes of JSON-like text, as `/coding/identity` sends them.
    private func identityBody(_ transport: any RequestPerforming, _ kind: TransportKind, size: Int) async throws -> Data
    {
        let response = try await transport.send(try kind.fixture("/coding/identity?size=\(size)"))
        #expect(response.status == 200)
        return response.data ?? Data()
    }

    @Test(
        "each coding is decoded to the exact bytes, its Content-Encoding kept",
        arguments: TransportKind.allCases, codings)
    func decodes(kind: TransportKind, coding: String) async throws {
        let transport = kind.make()
        let size = 300_000
        let response = try await transport.send(try kind.fixture("/coding/\(coding)?size=\(size)"))
        #expect(response.status == 200, "\(String(decoding: response.data ?? Data(), as: UTF8.self))")
        let body = response.data ?? Data()
        #expect(body.count == size)
        #expect(body == (try await identityBody(transport, kind, size: size)))
        #expect(response.metrics.bytesReceived == Int64(size))
        let announced = response.headers["Content-Encoding"]
        #expect(announced == (coding == "identity" ? nil : coding == "deflate-raw" ? "deflate" : coding))
    }

    @Test("a chunked coded body is decoded too", arguments: TransportKind.allCases, ["gzip", "br", "zstd"])
    func chunked(kind: TransportKind, coding: String) async throws {
        let transport = kind.make()
        let response = try await transport.send(try kind.fixture("/coding/\(coding)?size=200000&chunked=1"))
        #expect(response.data == (try await identityBody(transport, kind, size: 200_000)))
    }

    @Test("a streamed coded body arrives decoded", arguments: TransportKind.allCases)
    func streamed(kind: TransportKind) async throws {
        let manager = ServerAPIManager(transport: kind.make())
        let response = try await manager.stream(ServerAPI(url: try kind.fixture("/coding/gzip?size=500000")))
        var body = Data()
        for try await chunk in response.body { body.append(chunk) }
        #expect(body == (try await identityBody(kind.make(), kind, size: 500_000)))
    }

    @Test(
        "a coding the transport cannot decode, or a body invalid in its coding, is an error, never undecoded bytes",
        arguments: TransportKind.allCases, ["compress", "gzip-corrupt"])
    func undecodable(kind: TransportKind, coding: String) async throws {
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(try kind.fixture("/coding/\(coding)?size=1000"))
        }
        #expect(error?.kind == .network)
        #expect(error?.message.contains("content coding could not be decoded") == true, "\(String(describing: error))")
    }

    @Test("Accept-Encoding offers exactly the codings libcurl decodes", arguments: TransportKind.allCases)
    func acceptEncoding(kind: TransportKind) async throws {
        let echo = try Echo(try await kind.make().send(try kind.fixture("/headers")))
        // The documented list for this platform's libcurl (Debian 12's 7.88 has all four, as has 8.14), as a
        // literal: computing it with the libcurl call the transport uses would agree with any mistake of it.
        #expect(echo.values("Accept-Encoding") == ["deflate, gzip, br, zstd"])
        #expect(CurlTransport.supportedContentCodings == ["deflate", "gzip", "br", "zstd"])
    }

    @Test("a request's own Accept-Encoding is sent instead", arguments: TransportKind.allCases, ["identity", "gzip"])
    func ownAcceptEncoding(kind: TransportKind, value: String) async throws {
        let echo = try Echo(
            try await kind.make().send(try kind.fixture("/headers"), headers: ["Accept-Encoding": value]))
        #expect(echo.values("Accept-Encoding") == [value])
    }

    // MARK: Decompression bombs

    @Test("a bomb is stopped by maxResponseSize, counted in decoded bytes", arguments: TransportKind.allCases)
    func bombOverSize(kind: TransportKind) async throws {
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(try kind.fixture("/coding/bomb")) {
                $0.maxResponseSize = 2_000_000
                $0.maxDecompressionRatio = nil
            }
        }
        #expect(error?.kind == .responseTooLarge)
        #expect(error?.message.contains("limit of 2000000 bytes") == true)
    }

    @Test("a bomb is stopped by the default decompression ratio", arguments: TransportKind.allCases)
    func bombOverRatio(kind: TransportKind) async throws {
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(try kind.fixture("/coding/bomb"))
        }
        #expect(error?.kind == .responseTooLarge)
        #expect(error?.message.contains("decompression ratio limit of 100") == true, "\(String(describing: error))")
    }

    @Test(
        "a chunked bomb: curl counts wire bytes and stops it; URLSession, without a count, has maxResponseSize",
        arguments: TransportKind.allCases)
    func chunkedBomb(kind: TransportKind) async throws {
        let transport = kind.make()
        switch kind {
        case .curl, .curlHTTP2, .curlHTTP3:
            let error = await #expect(throws: ServerAPIError.self) {
                _ = try await transport.send(try kind.fixture("/coding/bomb?chunked=1"))
            }
            #expect(error?.message.contains("decompression ratio limit of 100") == true, "\(String(describing: error))")
        case .urlsession:
            // FoundationNetworking reports decoded bytes only, and a chunked body announces no encoded length.
            let response = try await transport.send(try kind.fixture("/coding/bomb?chunked=1"))
            #expect(response.data?.count == 10 << 20)
            let error = await #expect(throws: ServerAPIError.self) {
                _ = try await transport.send(try kind.fixture("/coding/bomb?chunked=1")) {
                    $0.maxResponseSize = 1_000_000
                }
            }
            #expect(error?.kind == .responseTooLarge)
        }
    }

    @Test("a bomb streamed to a reader that is behind, with no ratio limit, is responseTooLarge, never out of memory")
    func pausedBomb() async throws {
        // 100 MiB of zeros in about 3 KiB of zstd: one read decodes to all of it. The reader takes nothing until the
        // head is back, so the transfer pauses at once, and libcurl 7.x holds what the read decodes to (up to 64 MiB,
        // then "out of memory"). libcurl 8.x may hold it all and deliver it: then every byte must arrive.
        let manager = ServerAPIManager(transport: TransportKind.curl.make())
        let api = ServerAPI(url: try TransportKind.curl.fixture("/coding/zstd?size=104857600&fill=zero"))
            .maxDecompressionRatio(nil)
        do {
            let response = try await manager.stream(api)
            var count = 0
            for try await chunk in response.body { count += chunk.count }
            #expect(count == 104_857_600, "libcurl \(CurlTransport.libcurlVersion)")
        } catch let error as ServerAPIError {
            #expect(error.kind == .responseTooLarge, "\(error)")
            #expect(error.message.contains("decompression bomb"), "\(error)")
        }
    }

    @Test("without a ratio limit the bomb is decoded whole", arguments: TransportKind.allCases)
    func bombWithoutLimit(kind: TransportKind) async throws {
        let response = try await kind.make().send(try kind.fixture("/coding/bomb")) {
            $0.maxDecompressionRatio = nil
        }
        #expect(response.data == Data(count: 10 << 20))
    }

    @Test("a streamed bomb and a downloaded bomb are stopped by the ratio too", arguments: TransportKind.allCases)
    func bombStreamedAndDownloaded(kind: TransportKind) async throws {
        let manager = ServerAPIManager(transport: kind.make())
        let streamError = await #expect(throws: ServerAPIError.self) {
            let response = try await manager.stream(ServerAPI(url: try kind.fixture("/coding/bomb")))
            for try await _ in response.body {}
        }
        #expect(streamError?.kind == .responseTooLarge)
        #expect(streamError?.message.contains("decompression ratio") == true, "\(String(describing: streamError))")
        let scratch = try Scratch()
        let downloadError = await #expect(throws: ServerAPIError.self) {
            _ = try await kind.make().send(try kind.fixture("/coding/bomb")) {
                $0.download = DownloadTarget(destination: scratch.file("bomb.bin"))
            }
        }
        #expect(downloadError?.kind == .responseTooLarge)
        #expect(downloadError?.message.contains("decompression ratio") == true, "\(String(describing: downloadError))")
    }

    @Test(
        "a large compressible body is not refused by default", arguments: TransportKind.allCases,
        ["gzip", "br", "zstd"])
    func compressibleBodyAllowed(kind: TransportKind, coding: String) async throws {
        let response = try await kind.make().send(try kind.fixture("/coding/\(coding)?size=4000000"))
        #expect(response.status == 200)
        #expect(response.data?.count == 4_000_000)
        let ratio = 4_000_000 / max(Int(response.headers["Content-Length"] ?? "") ?? 1, 1)
        #expect(ratio >= 5 && ratio < 100, "compressed \(ratio)x")
    }

    @Test("the ratio limit comes from ServerAPI.maxDecompressionRatio", arguments: TransportKind.allCases)
    func ratioThroughManager(kind: TransportKind) async throws {
        let manager = ServerAPIManager(transport: kind.make())
        let api = ServerAPI(url: try kind.fixture("/coding/gzip?size=4000000")).format(.data)
        _ = try await manager.send(api)
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await manager.send(api.maxDecompressionRatio(2))
        }
        #expect(error?.kind == .responseTooLarge)
        #expect(error?.message.contains("decompression ratio limit of 2 to 1") == true, "\(String(describing: error))")
    }

    // MARK: Already-compressed files

    @Test("an application/gzip file without Content-Encoding keeps its bytes", arguments: TransportKind.allCases)
    func compressedFileKept(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let destination = scratch.file("file.tar.gz")
        let response = try await kind.make().send(try kind.fixture("/coding/file.tar.gz?size=300000")) {
            $0.download = DownloadTarget(destination: destination)
        }
        #expect(response.status == 200)
        #expect(try await DownloadConformanceTests.sha256(of: destination) == response.headers["X-File-SHA256"])
        let inMemory = try await kind.make().send(try kind.fixture("/coding/file.tar.gz?size=300000"))
        #expect(inMemory.data?.starts(with: [0x1f, 0x8b]) == true)
        #expect(inMemory.data?.count == Int(inMemory.headers["Content-Length"] ?? ""))
    }

    @Test(
        "a .gz file sent with Content-Encoding: gzip is decoded, as the header says", arguments: TransportKind.allCases)
    func encodedFileDecoded(kind: TransportKind) async throws {
        let transport = kind.make()
        let response = try await transport.send(try kind.fixture("/coding/encoded.tar.gz?size=300000"))
        #expect(response.data == (try await identityBody(transport, kind, size: 300_000)))
    }
}

/// nginx's own gzip (the HTTP/2 front compresses httpbin's answers under `/nginx-gzip/`), on the curl backend:
/// the front is HTTP/2 over TLS with a CA that only `CurlTransport` can be told to trust.
@Suite("Conformance: nginx's gzip")
struct NginxGzipTests {
    @Test("a body gzipped by nginx (chunked, no Content-Length) is decoded to httpbin's JSON")
    func nginxGzip() async throws {
        let kind = TransportKind.curlHTTP2
        let manager = ServerAPIManager(transport: kind.make())
        let result = try await manager.send(
            ServerAPI(url: try TestServers.url(base: TestServers.httpbinH2(), "/nginx-gzip/get?coded=1")).format(.data))
        #expect(result.status == 200)
        #expect(result.headers["Content-Encoding"] == "gzip")
        let echo = try JSONSerialization.jsonObject(with: result.data ?? Data()) as? [String: Any]
        #expect((echo?["args"] as? [String: String])?["coded"] == "1")
        #expect(result.metrics.transport?.httpVersion == "2")
    }
}
