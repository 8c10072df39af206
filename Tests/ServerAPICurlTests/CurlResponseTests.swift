import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import Testing

@Suite("CurlTransport: what comes back")
struct CurlResponseTests {
    @Test("an HTTP error status is a response, not an error", arguments: [201, 204, 400, 404, 500, 503])
    func statuses(status: Int) async throws {
        try await CurlTestServer.with { server in
            let response = try await CurlTransport().perform(TransportRequest(url: server.url("/status/\(status)")))
            #expect(response.status == status)
            #expect(response.data == (status == 204 ? Data() : Data("status \(status)".utf8)))
        }
    }

    @Test("repeated response headers are kept in order and values are trimmed")
    func responseHeaders() async throws {
        try await CurlTestServer.with { server in
            let response = try await CurlTransport().perform(TransportRequest(url: server.url("/headers")))
            #expect(response.headers.values(for: "set-cookie") == ["a=1", "b=2"])
            #expect(response.headers["X-Spaced"] == "padded value")
            #expect(response.headers["Content-Length"] == "2")
        }
    }

    @Test("only the final head is kept after a 1xx informational head")
    func informational() async throws {
        try await CurlTestServer.with { server in
            let response = try await CurlTransport().perform(TransportRequest(url: server.url("/informational")))
            #expect(response.status == 200)
            #expect(response.headers["X-Final"] == "yes")
            #expect(response.headers["X-Early"] == nil)
            #expect(response.data == Data("final".utf8))
        }
    }

    @Test("a gzip body is decoded")
    func gzip() async throws {
        try await CurlTestServer.with { server in
            let response = try await CurlTransport().perform(TransportRequest(url: server.url("/gzip")))
            #expect(response.headers["Content-Encoding"] == "gzip")
            let json = try JSONSerialization.jsonObject(with: response.data ?? Data()) as? [String: Any]
            #expect(json?["gzipped"] as? Bool == true)
            #expect(response.metrics.bytesReceived == Int64(response.data?.count ?? 0))
        }
    }

    @Test("decompression can be turned off")
    func noDecompression() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport(configuration: .init(automaticDecompression: false))
            let echo = try Echo(try await transport.perform(TransportRequest(url: server.url("/echo"))))
            #expect(echo.values("Accept-Encoding").isEmpty)
        }
    }

    @Test("a large body arrives whole, with download progress up to its length")
    func largeBody() async throws {
        try await CurlTestServer.with { server in
            let log = ProgressRecorder()
            let count = 5_000_000
            let response = try await CurlTransport().perform(
                TransportRequest(url: server.url("/bytes/\(count)"), progress: log.record))
            #expect(response.data == patternBytes(count))
            let downloads = log.reports(.download)
            #expect(
                downloads.last == TransferProgress(direction: .download, completed: Int64(count), total: Int64(count)))
            #expect(downloads.map(\.completed) == downloads.map(\.completed).sorted())
            #expect(downloads.allSatisfy { $0.total == Int64(count) })
        }
    }

    @Test("a body larger than the limit fails, whether announced or streamed", arguments: [false, true])
    func maxResponseSize(chunked: Bool) async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport()
            let path = "/bytes/200000" + (chunked ? "?chunked=1" : "")
            let error = await expectError {
                try await transport.perform(TransportRequest(url: server.url(path), maxResponseSize: 10_000))
            }
            #expect(error?.kind == .responseTooLarge)
            #expect(error?.url == server.url(path))
            let fits = try await transport.perform(TransportRequest(url: server.url(path), maxResponseSize: 200_000))
            #expect(fits.data?.count == 200_000)
        }
    }

    @Test("metrics come from libcurl and say when a connection was reused")
    func metrics() async throws {
        try await CurlTestServer.with { server in
            let transport = CurlTransport()
            let first = try await transport.perform(TransportRequest(url: server.url("/bytes/1000")))
            let second = try await transport.perform(TransportRequest(url: server.url("/bytes/1000")))
            #expect(first.metrics.transport == "curl")
            #expect(first.metrics.httpVersion == "1.1")
            #expect(first.metrics.bytesReceived == 1000)
            #expect(first.metrics.reusedConnection == false)
            #expect(second.metrics.reusedConnection == true)
            let firstByte = try #require(first.metrics.firstByte)
            let connected = try #require(first.metrics.connected)
            #expect(connected <= firstByte)
            #expect(firstByte <= first.metrics.total)
            #expect(first.url == server.url("/bytes/1000"))
        }
    }

    @Test("a refused connection is cannotConnect")
    func refused() async throws {
        // Port 1 on loopback: nothing listens there.
        let url = URL(string: "http://127.0.0.1:1/")!
        let error = await expectError { try await CurlTransport().perform(TransportRequest(url: url)) }
        #expect(error?.kind == .cannotConnect)
        #expect(error?.url == url)
        #expect(error?.message.contains("127.0.0.1") == true)
        #expect((error?.underlying as? CurlError)?.code == 7)
    }

    @Test("a connection closed without an answer, or mid-body, is a network error", arguments: ["/close", "/truncate"])
    func brokenConnection(path: String) async throws {
        try await CurlTestServer.with { server in
            let error = await expectError {
                try await CurlTransport().perform(TransportRequest(url: server.url(path)))
            }
            #expect(error?.kind == .network)
            #expect(error?.underlying is CurlError)
        }
    }
}
