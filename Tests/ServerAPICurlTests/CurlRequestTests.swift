import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPITestSupport
import Testing

@Suite("CurlTransport: what goes on the wire")
struct CurlRequestTests {
    enum BodyKind: String, CaseIterable, CustomTestStringConvertible {
        case none, small, binary, large, file, multipart
        var testDescription: String { rawValue }
    }

    static let methods: [HTTPMethod] = [.get, .post, .put, .patch, .delete, .options, "PROPFIND"]

    @Test(
        "every method with every kind of body reaches the server byte for byte", arguments: methods, BodyKind.allCases)
    func methodAndBody(method: HTTPMethod, kind: BodyKind) async throws {
        try await withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("upload.bin")
            try noiseBytes(300_000, seed: 7).write(to: file)
            let (body, expected, contentType) = try Self.body(kind, file: file)
            var headers: HTTPHeaders = [:]
            if let contentType { headers.add(name: "Content-Type", value: contentType) }
            try await CurlTestServer.with { server in
                let transport = CurlTransport()
                let request = TransportRequest(
                    url: server.url("/echo?q=a%20b"), method: method, headers: headers, body: body)
                let response = try await transport.perform(request)
                #expect(response.status == 200)
                let echo = try Echo(response)
                #expect(echo.method == method.rawValue)
                #expect(echo.query == "q=a%20b")
                #expect(echo.body == expected)
                #expect(response.metrics.bytesSent == Int64(expected.count))
                #expect(echo.length == expected.count)
                if !expected.isEmpty || [.post, .put, .patch].contains(method) {
                    #expect(echo.values("Content-Length") == ["\(expected.count)"])
                } else {
                    #expect(echo.values("Content-Length").isEmpty)
                }
                #expect(echo.values("Content-Type") == (contentType.map { [$0] } ?? []))
                // libcurl's own defaults are not sent: exactly the request's headers, plus Host,
                // Accept-Encoding (automatic decompression) and the User-Agent every transport sends.
                #expect(echo.values("Expect").isEmpty)
                #expect(echo.values("Accept").isEmpty)
                #expect(echo.values("User-Agent") == [HTTPHeaders.defaultUserAgent])
                #expect(echo.values("Transfer-Encoding").isEmpty)
            }
        }
    }

    @Test("a GET after calls that set other options goes out exactly as the loop's first GET")
    func reusedHandleForgetsTheLastCall() async throws {
        try await CurlTestServer.with { server in
            // One loop, one call at a time: every call takes the handle the call before it left.
            let transport = CurlTransport(configuration: .init(loopCount: 1))
            let plain = TransportRequest(url: server.url("/echo"))
            let first = try Echo(try await transport.perform(plain))
            var withProgress = TransportRequest(url: server.url("/echo"))
            withProgress.progress = { _ in }
            let others: [TransportRequest] = [
                TransportRequest(
                    url: server.url("/echo"), method: .post, headers: ["Content-Type": "application/json"],
                    body: .data(Data(#"{"a":1}"#.utf8))),
                TransportRequest(url: server.url("/echo"), method: .head),
                TransportRequest(url: server.url("/echo"), method: .put),
                TransportRequest(url: server.url("/echo"), method: "PROPFIND", headers: ["Depth": "1"]),
                withProgress,
                TransportRequest(url: server.url("/redirect/2")),
            ]
            for other in others {
                _ = try await transport.perform(other)
                let response = try await transport.perform(plain)
                let echo = try Echo(response)
                #expect(echo.method == "GET", "after \(other.method)")
                #expect(echo.length == 0, "after \(other.method)")
                #expect(echo.headers.map { $0[0] } == first.headers.map { $0[0] }, "after \(other.method)")
                #expect(echo.values("Content-Type").isEmpty)
                #expect(echo.values("Depth").isEmpty)
            }
        }
    }

    static func body(_ kind: BodyKind, file: URL) throws -> (BodySource, Data, String?) {
        switch kind {
        case .none:
            return (.empty, Data(), nil)
        case .small:
            let data = Data(#"{"name":"Ada","emoji":"🦊"}"#.utf8)
            return (.data(data), data, "application/json")
        case .binary:
            let data = noiseBytes(4096)
            return (.data(data), data, "application/octet-stream")
        case .large:
            // Larger than the one-copy limit: streamed through the read callback.
            let data = noiseBytes(3 << 20, seed: 3)
            return (.data(data), data, "application/octet-stream")
        case .file:
            return (.file(file), try Data(contentsOf: file), "application/octet-stream")
        case .multipart:
            let form = MultipartForm(
                [.field("title", "Holiday"), .file("photo", url: file, contentType: "image/jpeg")],
                boundary: "fixed-boundary-123")
            let segments = try form.encodedSegments()
            var expected = Data()
            for segment in segments {
                switch segment {
                case .data(let data): expected.append(data)
                case .file(let url): expected.append(try Data(contentsOf: url))
                }
            }
            return (.segments(segments), expected, form.contentType)
        }
    }

    @Test("headers are sent exactly as given: order, repeats, case and empty values")
    func exactHeaders() async throws {
        try await CurlTestServer.with { server in
            let headers = HTTPHeaders([
                ("X-First", "1"), ("x-repeated", "a"), ("X-Repeated", "b"), ("X-Empty", ""),
                ("Accept", "application/json"), ("User-Agent", "ServerAPIKit-tests/1"),
            ])
            let response = try await CurlTransport().perform(
                TransportRequest(url: server.url("/echo"), headers: headers))
            let echo = try Echo(response)
            let sent = echo.headers.filter { !["host", "accept-encoding"].contains($0[0].lowercased()) }
            #expect(sent == headers.fields.map { [$0.name, $0.value] })
            #expect(echo.values("Accept-Encoding").count == 1)
        }
    }

    @Test("a HEAD request gets the status and headers and no body")
    func head() async throws {
        try await CurlTestServer.with { server in
            let response = try await CurlTransport().perform(TransportRequest(url: server.url("/echo"), method: .head))
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == "application/json")
            #expect(response.data == Data())
        }
    }

    @Test("a HEAD request with a body is refused before anything is sent")
    func headWithBody() async throws {
        try await CurlTestServer.with { server in
            let error = await expectError {
                try await CurlTransport().perform(
                    TransportRequest(url: server.url("/echo"), method: .head, body: .data(Data("x".utf8))))
            }
            #expect(error?.kind == .invalidRequest)
        }
    }

    @Test("a missing body file is an invalid request, not a crash")
    func missingFile() async throws {
        try await CurlTestServer.with { server in
            let error = await expectError {
                try await CurlTransport().perform(
                    TransportRequest(
                        url: server.url("/echo"), method: .post,
                        body: .file(URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)"))))
            }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.url == server.url("/echo"))
        }
    }

    @Test("upload progress climbs to the body's length")
    func uploadProgress() async throws {
        try await CurlTestServer.with { server in
            let log = ProgressRecorder()
            let body = noiseBytes(2 << 20)
            let request = TransportRequest(
                url: server.url("/echo"), method: .put, body: .data(body), progress: log.record)
            let response = try await CurlTransport().perform(request)
            #expect(try Echo(response).length == body.count)
            let uploads = log.reports(.upload)
            #expect(uploads.last?.completed == Int64(body.count))
            #expect(uploads.map(\.completed) == uploads.map(\.completed).sorted())
            #expect(response.metrics.bytesSent == Int64(body.count))
        }
    }
}
