import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Every kind of request body reaches the server byte for byte, with the right headers.
@Suite("Conformance: request bodies")
struct BodyConformanceTests {
    struct Model: Codable, Sendable {
        var name: String
        var count: Int
        var tags: [String]
    }

    /// The bodies a caller can describe, each with the bytes it must put on the wire.
    enum Kind: String, CaseIterable, Sendable {
        case data, text, json, form, multipart, file, emptyFile

        func make(in scratch: Scratch) throws -> (RequestBody, Data, String?) {
            switch self {
            case .data:
                let bytes = Data((0..<512).map { UInt8($0 % 256) })
                return (.data(bytes, contentType: "application/octet-stream"), bytes, "application/octet-stream")
            case .text:
                return (.text("héllo wörld ✓"), Data("héllo wörld ✓".utf8), "text/plain; charset=utf-8")
            case .json:
                return (
                    .json(Model(name: "Ada", count: 2, tags: ["a", "b"])),
                    Data(#"{"count":2,"name":"Ada","tags":["a","b"]}"#.utf8), "application/json"
                )
            case .form:
                return (
                    .form([("name", "Ada Lovelace"), ("math", "1+1=2&more"), ("utf", "é")]),
                    Data("name=Ada%20Lovelace&math=1%2B1%3D2%26more&utf=%C3%A9".utf8),
                    "application/x-www-form-urlencoded"
                )
            case .multipart:
                let file = scratch.file("part.bin")
                let fileBytes = FixturePayload(seed: 5).bytes(0..<70_000)
                try writeFile(fileBytes, to: file)
                let form = MultipartForm(
                    [
                        .field("title", "a report"),
                        .file("upload", url: file, filename: "part.bin", contentType: "application/octet-stream"),
                        .data("note", Data("in memory".utf8), filename: "note.txt", contentType: "text/plain"),
                    ], boundary: "TestBoundary123")
                var expected = Data()
                expected.append(
                    Data(
                        ("--TestBoundary123\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\na report\r\n"
                            + "--TestBoundary123\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"part.bin\"\r\n"
                            + "Content-Type: application/octet-stream\r\n\r\n").utf8))
                expected.append(fileBytes)
                expected.append(
                    Data(
                        ("\r\n--TestBoundary123\r\nContent-Disposition: form-data; name=\"note\"; filename=\"note.txt\"\r\n"
                            + "Content-Type: text/plain\r\n\r\nin memory\r\n--TestBoundary123--\r\n").utf8))
                return (.multipart(form), expected, "multipart/form-data; boundary=TestBoundary123")
            case .file:
                let file = scratch.file("body.bin")
                let bytes = FixturePayload(seed: 9).bytes(0..<300_001)
                try writeFile(bytes, to: file)
                return (.file(file, contentType: "application/x-test"), bytes, "application/x-test")
            case .emptyFile:
                let file = scratch.file("empty.bin")
                try writeFile(Data(), to: file)
                return (.file(file), Data(), "application/octet-stream")
            }
        }
    }

    @Test("each body kind arrives byte-identical", arguments: TransportKind.allCases, Kind.allCases)
    func bodies(kind: TransportKind, body: Kind) async throws {
        let scratch = try Scratch()
        let (requestBody, expected, contentType) = try body.make(in: scratch)
        let api = ServerAPI(url: try kind.fixture("/echo"), method: .post).body(requestBody)
        let response = try await kind.make().perform(try api.transportRequest())
        #expect(response.status == 200)
        let echo = try Echo(response)
        #expect(echo.length == expected.count)
        #expect(echo.body == expected)
        #expect(echo.values("Content-Type") == [contentType].compactMap { $0 })
        #expect(echo.values("Content-Length") == ["\(expected.count)"])
        #expect(echo.values("Transfer-Encoding").isEmpty)
        #expect(response.metrics.bytesSent == Int64(expected.count))
    }

    @Test(
        "httpbin reads form, JSON and multipart bodies as the server-side frameworks expect",
        arguments: TransportKind.allCases)
    func httpbinParses(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let transport = kind.make()
        let base = try kind.httpbin("/anything")

        let form = try await transport.perform(
            try ServerAPI(url: base, method: .post).body(.form([("a", "1 2"), ("b", "x&y")])).transportRequest())
        let formJSON = try JSONDecoder().decode(JSONValue.self, from: form.data ?? Data())
        #expect(formJSON["form"] == ["a": "1 2", "b": "x&y"])

        let json = try await transport.perform(
            try ServerAPI(url: base, method: .put).json(Model(name: "n", count: 1, tags: [])).transportRequest())
        let jsonJSON = try JSONDecoder().decode(JSONValue.self, from: json.data ?? Data())
        #expect(jsonJSON["json"] == ["name": "n", "count": 1, "tags": []])
        #expect(jsonJSON["method"] == "PUT")

        let file = scratch.file("upload.txt")
        try writeFile(Data("file contents\n".utf8), to: file)
        let multipart = try await transport.perform(
            try ServerAPI(url: base, method: .post)
                .body(
                    .multipart(
                        MultipartForm([.field("field", "value"), .file("doc", url: file, contentType: "text/plain")]))
                )
                .transportRequest())
        let multipartJSON = try JSONDecoder().decode(JSONValue.self, from: multipart.data ?? Data())
        #expect(multipartJSON["form"] == ["field": "value"])
        #expect(multipartJSON["files"] == ["doc": "file contents\n"])
    }

    @Test("upload progress reaches the body's length", arguments: TransportKind.allCases)
    func uploadProgress(kind: TransportKind) async throws {
        let scratch = try Scratch()
        let file = scratch.file("progress.bin")
        try FixturePayload().write(size: 3_000_000, to: file)
        let recorder = ProgressRecorder()
        let response = try await kind.make().send(
            try kind.fixture("/upload-sink"), method: .put, body: .file(file)
        ) {
            $0.progress = recorder.record
        }
        #expect(try Echo(response).length == 3_000_000)
        let uploads = recorder.reports(.upload)
        #expect(uploads.last?.completed == 3_000_000)
        #expect(uploads.last?.total == 3_000_000)
        #expect(zip(uploads, uploads.dropFirst()).allSatisfy { $0.completed <= $1.completed })
    }

    @Test("a body file that does not exist is an invalid request", arguments: TransportKind.allCases)
    func missingFile(kind: TransportKind) async throws {
        let transport = kind.make()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(
                try kind.fixture("/upload-sink"), method: .post,
                body: .file(URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")))
        }
        #expect(error?.kind == .invalidRequest)
    }
}
