import Foundation
import Testing

@testable import ServerAPIKit

@Suite("Request bodies")
struct RequestBodyTests {
    struct Payload: Encodable {
        var name: String
        var count: Int
        var tags: [String]
    }

    private func bytes(_ body: BodySource) throws -> Data {
        let reader = try body.makeReader()
        var data = Data()
        while true {
            let chunk = try reader.read(maxLength: 7)  // an odd size crosses segment boundaries
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }

    @Test("a JSON body is encoded with sorted keys and its content type")
    func json() throws {
        let request = try ServerAPI(host: "https://a.test").method(.post)
            .json(Payload(name: "Zoë", count: 2, tags: ["x"])).transportRequest()
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(String(decoding: try bytes(request.body), as: UTF8.self) == #"{"count":2,"name":"Zoë","tags":["x"]}"#)
    }

    @Test("a value that cannot be encoded as JSON is an invalidRequest error when sent")
    func unencodableJSON() {
        let api = ServerAPI(host: "https://a.test").method(.post).json(["bad": Double.nan])
        #expect {
            try api.transportRequest()
        } throws: { error in
            (error as? ServerAPIError)?.kind == .invalidRequest
        }
    }

    @Test("a form body percent-encodes names and values in order")
    func form() throws {
        let request = try ServerAPI(host: "https://a.test").method(.post)
            .body(.form([("q", "a b+c"), ("name", "Zoë&Co"), ("e", "=")])).transportRequest()
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(String(decoding: try bytes(request.body), as: UTF8.self) == "q=a%20b%2Bc&name=Zo%C3%AB%26Co&e=%3D")
    }

    @Test("a caller's Content-Type is kept")
    func explicitContentType() throws {
        let request = try ServerAPI(host: "https://a.test").method(.post).header(
            "content-type", "application/vnd.x+json"
        )
        .json(["a": 1]).transportRequest()
        #expect(request.headers.values(for: "Content-Type") == ["application/vnd.x+json"])
    }

    @Test("multipart has the exact byte layout, with file parts streamed from disk")
    func multipart() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mp-\(UUID().uuidString).txt")
        try Data("file contents\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let form = MultipartForm(
            [
                .field("title", "Hello \"World\""),
                .file("upload", url: file, filename: "notes.txt", contentType: "text/plain"),
                .data("blob", Data([0, 1, 2]), filename: "b.bin"),
            ], boundary: "BOUNDARY")
        let request = try ServerAPI(host: "https://a.test").method(.post).body(.multipart(form)).transportRequest()
        #expect(request.headers["Content-Type"] == "multipart/form-data; boundary=BOUNDARY")
        guard case .segments(let segments) = request.body else {
            Issue.record("expected segments")
            return
        }
        #expect(segments.count == 3)
        #expect(segments[1] == .file(file))
        var expected = Data()
        expected.append(contentsOf: "--BOUNDARY\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n".utf8)
        expected.append(contentsOf: "Hello \"World\"\r\n".utf8)
        expected.append(
            contentsOf:
                "--BOUNDARY\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\n"
                .utf8)
        expected.append(contentsOf: "file contents\n\r\n".utf8)
        expected.append(
            contentsOf:
                "--BOUNDARY\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                .utf8)
        expected.append(contentsOf: [0, 1, 2])
        expected.append(contentsOf: "\r\n--BOUNDARY--\r\n".utf8)
        #expect(try bytes(request.body) == expected)
        #expect(try request.body.contentLength() == Int64(expected.count))
    }

    @Test("quotes and line breaks in part names are escaped as browsers do")
    func multipartEscaping() throws {
        let form = MultipartForm([.field("a\"b\r\nc", "v")], boundary: "B")
        let data = try #require(try RequestBody.multipart(form).resolve().body.inMemoryBytes)
        #expect(String(decoding: data, as: UTF8.self).contains(#"name="a%22b%0D%0Ac""#))
    }

    @Test("a bad boundary or a missing file is a typed error")
    func multipartErrors() {
        let boundary = #expect(throws: ServerAPIError.self) {
            try MultipartForm([.field("a", "b")], boundary: "").encodedSegments()
        }
        #expect(boundary?.kind == .invalidRequest)
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
        let file = #expect(throws: ServerAPIError.self) {
            try ServerAPI(host: "https://a.test").method(.post).body(.file(missing)).transportRequest().body
                .makeReader()
        }
        #expect(file?.kind == .invalidRequest)
        #expect(file?.message.contains(missing.path) == true)
    }

    @Test("a file body streams the file in bounded chunks")
    func fileBody() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("body-\(UUID().uuidString).bin")
        let content = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try content.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let request = try ServerAPI(host: "https://a.test").method(.put).body(.file(file)).transportRequest()
        #expect(request.body == .file(file))
        #expect(request.headers["Content-Type"] == "application/octet-stream")
        #expect(try request.body.contentLength() == 100_000)
        let reader = try request.body.makeReader()
        let first = try reader.read(maxLength: 4096)
        #expect(first.count == 4096)
        var all = first
        while true {
            let chunk = try reader.read(maxLength: 4096)
            if chunk.isEmpty { break }
            #expect(chunk.count <= 4096)
            all.append(chunk)
        }
        #expect(all == content)
    }

    @Test("SHA-256 matches the standard test vectors")
    func sha256() {
        #expect(SHA256.hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }
}
