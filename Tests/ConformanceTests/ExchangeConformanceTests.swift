import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// Methods, URLs, headers, statuses and encodings: what every transport must send and read the same way.
@Suite("Conformance: requests and responses")
struct ExchangeConformanceTests {
    static let allMethods: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options, "PROPFIND"]

    @Test("every method reaches the server as it is", arguments: TransportKind.allCases, allMethods)
    func methods(kind: TransportKind, method: HTTPMethod) async throws {
        let transport = kind.make()
        let sendsBody = ![HTTPMethod.get, .head, .options].contains(method)
        let payload = Data("payload for \(method)".utf8)
        let response = try await transport.send(
            try kind.fixture("/echo"), method: method,
            headers: sendsBody ? ["Content-Type": "text/plain"] : [:], body: sendsBody ? .data(payload) : .empty)
        #expect(response.status == 200)
        if method == .head {
            #expect(response.data?.isEmpty == true)
            #expect(response.headers["Content-Type"] == "application/json")
            return
        }
        let echo = try Echo(response)
        #expect(echo.method == method.rawValue)
        #expect(echo.body == (sendsBody ? payload : Data()))
    }

    @Test("query items are percent-encoded the same way by every transport", arguments: TransportKind.allCases)
    func queryEncoding(kind: TransportKind) async throws {
        let api = ServerAPI(url: try kind.fixture("/headers"))
            .query("q", "a b")
            .query("plus", "1+1")
            .query("amp", "&")
            .query("eq", "=")
            .query("utf", "é✓")
            .query("empty", "")
            .query("flag", nil)
            .query("reserved", "/?#[]@!$'()*,;")
        let echo = try Echo(try await kind.make().perform(try api.transportRequest()))
        #expect(
            echo.query
                == "q=a%20b&plus=1%2B1&amp=%26&eq=%3D&utf=%C3%A9%E2%9C%93&empty=&flag"
                + "&reserved=%2F%3F%23%5B%5D%40%21%24%27%28%29%2A%2C%3B")
    }

    @Test("httpbin decodes the encoded query back to the original values", arguments: TransportKind.allCases)
    func queryDecoding(kind: TransportKind) async throws {
        let api = ServerAPI(url: try kind.httpbin("/get"))
            .query("q", "a b")
            .query("plus", "1+1")
            .query("utf", "é✓")
            .query("amp", "x&y=z")
        let response = try await kind.make().perform(try api.transportRequest())
        let json = try JSONDecoder().decode(JSONValue.self, from: response.data ?? Data())
        #expect(json["args"]?["q"] == "a b")
        #expect(json["args"]?["plus"] == "1+1")
        #expect(json["args"]?["utf"] == "é✓")
        #expect(json["args"]?["amp"] == "x&y=z")
    }

    @Test("a query already in the path is kept, and items are appended", arguments: TransportKind.allCases)
    func queryInPath(kind: TransportKind) async throws {
        let api = ServerAPI(host: try kind.fixture(), path: "/headers?keep=1").query("add", "2")
        let echo = try Echo(try await kind.make().perform(try api.transportRequest()))
        #expect(echo.query == "keep=1&add=2")
        #expect(echo.path == "/headers")
    }

    @Test("request headers arrive as given", arguments: TransportKind.allCases)
    func requestHeaders(kind: TransportKind) async throws {
        let headers: HTTPHeaders = [
            "X-Custom": "value with  spaces, commas; and \"quotes\"",
            "X-Empty": "",
            "Authorization": "Bearer abc.def",
        ]
        let echo = try Echo(try await kind.make().send(try kind.fixture("/headers"), headers: headers))
        #expect(echo.values("X-Custom") == ["value with  spaces, commas; and \"quotes\""])
        #expect(echo.values("X-Empty") == [""])
        #expect(echo.values("Authorization") == ["Bearer abc.def"])
    }

    @Test(
        "a call without a User-Agent sends ServerAPIKit's, the same from every transport",
        arguments: TransportKind.allCases)
    func defaultUserAgent(kind: TransportKind) async throws {
        let transport = kind.make()
        let response = try await transport.send(try kind.httpbin("/user-agent"))
        let json = try JSONDecoder().decode(JSONValue.self, from: response.data ?? Data())
        #expect(json["user-agent"] == .string("ServerAPIKit/\(serverAPIKitVersion)"))
        let echo = try Echo(try await transport.send(try kind.fixture("/headers")))
        #expect(echo.values("User-Agent") == [HTTPHeaders.defaultUserAgent])
    }

    @Test("a call's own User-Agent replaces the default", arguments: TransportKind.allCases)
    func ownUserAgent(kind: TransportKind) async throws {
        let transport = kind.make()
        let response = try await transport.send(
            try kind.httpbin("/user-agent"), headers: ["User-Agent": "MyApp/2.1 (linux)"])
        let json = try JSONDecoder().decode(JSONValue.self, from: response.data ?? Data())
        #expect(json["user-agent"] == .string("MyApp/2.1 (linux)"))
        let echo = try Echo(
            try await transport.send(try kind.fixture("/headers"), headers: ["user-agent": "MyApp/2.1"]))
        #expect(echo.values("User-Agent") == ["MyApp/2.1"])

        // The manager's default headers are the call's own headers too.
        let manager = ServerAPIManager(
            transport: transport, configuration: .init(defaultHeaders: ["User-Agent": "Managed/1"]))
        let result = try await manager.send(ServerAPI(url: try kind.httpbin("/user-agent")))
        #expect(result.json?["user-agent"] == .string("Managed/1"))
    }

    @Test("repeated request headers arrive with every value, in order", arguments: TransportKind.allCases)
    func repeatedHeaders(kind: TransportKind) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "X-Repeat", value: "first")
        headers.add(name: "X-Repeat", value: "second")
        headers.add(name: "x-repeat", value: "third")
        let echo = try Echo(try await kind.make().send(try kind.fixture("/headers"), headers: headers))
        // Separate fields or one comma-joined field are the same header (RFC 9110 §5.3):
        // the values and their order are the contract.
        let values = echo.values("X-Repeat").flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(values == ["first", "second", "third"])
    }

    @Test(
        "a header value that is not ASCII is rejected before anything is sent",
        arguments: TransportKind.allCases, ["café", "line\r\nInjected: yes", "tab\u{7}bell"])
    func invalidHeaderValues(kind: TransportKind, value: String) async throws {
        let transport = kind.make()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(try kind.fixture("/headers"), headers: ["X-Bad": value])
        }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("X-Bad") == true)
    }

    @Test("a header name that is not a token is rejected", arguments: TransportKind.allCases)
    func invalidHeaderName(kind: TransportKind) async throws {
        let transport = kind.make()
        let error = await #expect(throws: ServerAPIError.self) {
            _ = try await transport.send(try kind.fixture("/headers"), headers: ["Bad Name": "x"])
        }
        #expect(error?.kind == .invalidRequest)
    }

    @Test("response headers are read, case-insensitively", arguments: TransportKind.allCases)
    func responseHeaders(kind: TransportKind) async throws {
        let response = try await kind.make().send(
            try kind.httpbin("/response-headers?X-One=1&X-Two=two%20words"))
        #expect(response.headers["x-one"] == "1")
        #expect(response.headers["X-TWO"] == "two words")
        #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
    }

    static let sampleStatuses = [
        200, 201, 202, 204, 301, 302, 304, 400, 401, 403, 404, 409, 418, 429, 500, 502, 503, 599,
    ]

    @Test("an HTTP status is a response, never an error", arguments: TransportKind.allCases, sampleStatuses)
    func statuses(kind: TransportKind, status: Int) async throws {
        let response = try await kind.make().send(try kind.httpbin("/status/\(status)")) {
            $0.redirects = .none
        }
        #expect(response.status == status)
        if [204, 304].contains(status) { #expect(response.data?.isEmpty == true) }
    }

    @Test("an error status carries its body", arguments: TransportKind.allCases)
    func errorBody(kind: TransportKind) async throws {
        let response = try await kind.make().send(try kind.fixture("/status/503"))
        #expect(response.status == 503)
        #expect(response.data == Data("status 503\n".utf8))
    }

    @Test("a gzip-encoded body is decoded", arguments: TransportKind.allCases, ["httpbin", "fixture"])
    func gzip(kind: TransportKind, server: String) async throws {
        let url = server == "httpbin" ? try kind.httpbin("/gzip") : try kind.fixture("/gzip")
        let response = try await kind.make().send(url)
        #expect(response.status == 200)
        let json = try JSONDecoder().decode(JSONValue.self, from: response.data ?? Data())
        #expect(json["gzipped"] == true)
    }

    @Test("metrics name the transport and count the bytes", arguments: TransportKind.allCases)
    func metrics(kind: TransportKind) async throws {
        let body = Data(repeating: 0x41, count: 1000)
        let response = try await kind.make().send(
            try kind.fixture("/upload-sink"), method: .post, body: .data(body))
        #expect(response.metrics.transport == kind.transportName)
        // Over the HTTP/2 and HTTP/3 fronts, the version libcurl negotiated; the plain servers speak HTTP/1.1.
        if kind == .curlHTTP2 { #expect(response.metrics.httpVersion == "2") }
        if kind == .curlHTTP3 { #expect(response.metrics.httpVersion == "3") }
        if kind == .curl { #expect(response.metrics.httpVersion == "1.1") }
        #expect(response.metrics.bytesSent == 1000)
        #expect(response.metrics.bytesReceived == Int64(response.data?.count ?? -1))
        #expect(response.metrics.total > .zero)
        #expect(response.metrics.redirects == 0)
        if let firstByte = response.metrics.firstByte { #expect(firstByte <= response.metrics.total) }
    }

    @Test("the response reports the URL that answered", arguments: TransportKind.allCases)
    func responseURL(kind: TransportKind) async throws {
        let response = try await kind.make().send(try kind.httpbin("/redirect-to?url=/get%3Fwhere%3Dhere"))
        #expect(response.status == 200)
        #expect(response.url.path == "/get")
        #expect(response.url.query == "where=here")
    }
}
