import Foundation
import ServerAPIKit
import ServerAPITestSupport
import ServerAPITesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The rules that keep a hostile server or a careless URL from costing memory, files or secrets.
@Suite("Hostile input rules")
struct HostileInputRulesTests {
    // MARK: Bounded by default

    @Test("a body held in memory is bounded by 64 MiB by default; a download, a stream and Int64.max are not")
    func defaultLimit() {
        let url = URL(string: "http://api.test/big")!
        #expect(ResponseSizeRule.defaultMemoryLimit == 67_108_864)
        #expect(ResponseSizeRule.limit(for: TransportRequest(url: url), streamed: false) == 67_108_864)
        #expect(ResponseSizeRule.limit(for: TransportRequest(url: url), streamed: true) == nil)
        let download = TransportRequest(url: url, download: DownloadTarget(destination: URL(fileURLWithPath: "/tmp/x")))
        #expect(ResponseSizeRule.limit(for: download, streamed: false) == nil)
        #expect(ResponseSizeRule.limit(for: TransportRequest(url: url, maxResponseSize: 10), streamed: true) == 10)
        #expect(ResponseSizeRule.limit(for: TransportRequest(url: url, maxResponseSize: .max), streamed: false) == .max)
        #expect(ServerAPIManager.Configuration().maxResponseSize == ResponseSizeRule.defaultMemoryLimit)
    }

    @Test("the exchange machine ends a whole body one byte past 64 MiB, but never a streamed one")
    func exchangeAppliesDefault() {
        let request = TransportRequest(url: URL(string: "http://api.test/big")!)
        var whole = ExchangeStateMachine(download: false)
        _ = whole.headReceived(status: 200, headers: [:], request: request)
        #expect(Self.failure(whole.bodyReceived(count: 64 << 20)) == nil)
        #expect(Self.failure(whole.bodyReceived(count: 1))?.kind == .responseTooLarge)

        var streamed = ExchangeStateMachine(download: false, streamed: true)
        _ = streamed.headReceived(status: 200, headers: [:], request: request)
        #expect(Self.failure(streamed.bodyReceived(count: 64 << 20)) == nil)
        #expect(Self.failure(streamed.bodyReceived(count: 64 << 20)) == nil)
    }

    static func failure(_ action: ExchangeStateMachine.BodyAction) -> ServerAPIError? {
        if case .fail(let error) = action { error } else { nil }
    }

    @Test("the manager's limit applies to a call without its own; the call's own wins; nil lifts it")
    func managerLimit() async throws {
        let seen = Mutex<[Int64?]>([])
        let mock = MockTransport()
        mock.stub(handler: { request in
            seen.withLock { $0.append(request.maxResponseSize) }
            return .data(Data(repeating: 0x61, count: 1_001))
        })
        var configuration = ServerAPIManager.Configuration()
        configuration.maxResponseSize = 1_000
        let limited = ServerAPIManager(transport: mock, configuration: configuration)
        let api = ServerAPI(url: URL(string: "http://api.test/body")!).format(.data)
        let error = await expectError { try await limited.send(api) }
        #expect(error?.kind == .responseTooLarge)
        #expect(try await limited.send(api.maxResponseSize(2_000)).data?.count == 1_001)

        configuration.maxResponseSize = nil
        let unlimited = ServerAPIManager(transport: mock, configuration: configuration)
        #expect(try await unlimited.send(api).data?.count == 1_001)
        #expect(seen.withLock { $0 } == [1_000, 2_000, .max])
    }

    // MARK: URLs sent as written

    @Test(
        "a URL's own escapes are kept and only what may not appear is encoded",
        arguments: [
            ("http://h/a%2Fb c", "http://h/a%2Fb%20c"),
            ("http://h/p?x=%20 y", "http://h/p?x=%20%20y"),
            ("http://h/a%2Fb", "http://h/a%2Fb"),
            ("http://h/100%", "http://h/100%25"),
            ("http://h/%zz", "http://h/%25zz"),
            ("http://h/ü?q=ä", "http://h/%C3%BC?q=%C3%A4"),
            ("http://h/a\"<>{}|\\^`b", "http://h/a%22%3C%3E%7B%7D%7C%5C%5E%60b"),
            ("http://h/p#a#b", "http://h/p#a%23b"),
            ("http://h/@:!$&'()*+,;=", "http://h/@:!$&'()*+,;="),
            ("http://[::1]:8080/[x]", "http://[::1]:8080/%5Bx%5D"),
        ])
    func urlSentAsWritten(written: String, sent: String) throws {
        let api = try #require(ServerAPI(urlString: written))
        #expect(try api.transportRequest().url.absoluteString == sent)
    }

    @Test("a host and path written with escapes and spaces keep their escapes, query included")
    func hostAndPath() throws {
        let api = ServerAPI(host: "http://h", path: "/a%2Fb c?x=%20 y")
        #expect(try api.transportRequest().url.absoluteString == "http://h/a%2Fb%20c?x=%20%20y")
    }

    @Test("a redirect's Location keeps its escapes")
    func locationKeepsEscapes() throws {
        let base = URL(string: "http://h/dir/start")!
        #expect(RedirectRule.resolve("/a%2Fb c", against: base)?.absoluteString == "http://h/a%2Fb%20c")
        #expect(RedirectRule.resolve("next?x=%20 y", against: base)?.absoluteString == "http://h/dir/next?x=%20%20y")
    }

    // MARK: Redirects: the documented table

    /// The table "Which headers cross a redirect" of the SendingResultsAndErrors article, row by row: each
    /// header named in a row's first cell is kept or dropped in each column as the row says.
    @Test("every row of the documented redirect table is what the rule does")
    func redirectTable() throws {
        let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ServerAPIKit/ServerAPIKit.docc/SendingResultsAndErrors.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Which headers cross a redirect").last)
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `") || $0.hasPrefix("| any other") }
        #expect(rows.count == 11)
        // The columns: same origin, another origin, https → http (each a 307 after POST), 303 after POST.
        let start = "https://api.test/start"
        let columns: [(String, Int)] = [
            ("https://api.test/next", 307), ("https://other.test/next", 307), ("http://api.test/next", 307),
            ("https://api.test/next", 303),
        ]
        for row in rows {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            try #require(cells.count == 5, "\(row)")
            let names = cells[0].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map { String($0.element) }
            #expect(!names.isEmpty, "\(row)")
            for name in names {
                let request = TransportRequest(
                    url: URL(string: start)!, method: .post, headers: HTTPHeaders([(name, "value")]),
                    body: .data(Data("payload".utf8)))
                for (index, (target, status)) in columns.enumerated() {
                    let next = RedirectRule.redirected(request, to: URL(string: target)!, status: status)
                    let expected = cells[index + 1]
                    #expect(expected == "kept" || expected == "dropped", "\(row)")
                    #expect(next.headers.contains(name) == (expected == "kept"), "\(name) → \(target) \(status)")
                }
            }
        }
    }

    // MARK: Downloads never follow a link

    @Test("a dangling link where the part file goes is a typed error that names it, and nothing is created")
    func danglingPartLink() throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("existing.txt"))
        let aim = scratch.file("elsewhere.txt")
        try FileManager.default.createSymbolicLink(at: target.partialURL, withDestinationURL: aim)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: URL(string: "http://h/x")!)
        let error = #expect(throws: ServerAPIError.self) {
            _ = try writer.receiveHead(status: 200, headers: ["Content-Length": "3"])
        }
        #expect(error?.kind == .fileSystem)
        #expect(error?.message.contains(target.partialURL.path) == true)
        #expect((error?.underlying as? POSIXError)?.code == .ELOOP)
        #expect(!scratch.exists(aim))
    }

    @Test(
        "a link to an existing file where the part file goes leaves that file untouched, resuming or not",
        arguments: [false, true])
    func partLinkToExistingFile(resume: Bool) throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("out.bin"), resume: resume)
        let victim = scratch.file("victim.txt")
        try Data("precious".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(at: target.partialURL, withDestinationURL: victim)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: URL(string: "http://h/x")!)
        var request = TransportRequest(url: URL(string: "http://h/x")!)
        // The link is not a partial file to resume: no Range is asked for.
        #expect(writer.prepare(&request) == 0)
        let error = #expect(throws: ServerAPIError.self) {
            _ = try writer.receiveHead(status: 200, headers: ["Content-Length": "3"])
        }
        #expect(error?.kind == .fileSystem)
        #expect(error?.message.contains("out.bin.part") == true)
        #expect(try Data(contentsOf: victim) == Data("precious".utf8))
        #expect(!scratch.exists(target.destination))
    }

    @Test("MockTransport downloads as a real transport does: never through a link where the part file goes")
    func mockRefusesLink() async throws {
        let scratch = try Scratch()
        let victim = scratch.file("victim.txt")
        try Data("precious".utf8).write(to: victim)
        let destination = scratch.file("out.bin")
        try FileManager.default.createSymbolicLink(
            at: DownloadTarget(destination: destination).partialURL, withDestinationURL: victim)
        let mock = MockTransport()
        mock.stub(.get, "/file", .data(Data("body".utf8)))
        let api = ServerAPI(url: URL(string: "http://api.test/file")!).download(to: destination)
        let error = await expectError { try await ServerAPIManager(transport: mock).send(api) }
        #expect(error?.kind == .fileSystem)
        #expect(error?.message.contains("out.bin.part is a symbolic link") == true)
        #expect(try Data(contentsOf: victim) == Data("precious".utf8))
    }

    @Test("a validator file that is a link is never read into If-Range")
    func validatorLinkNotRead() throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.file("out.bin"), resume: true)
        try Data("partial".utf8).write(to: target.partialURL)
        let secret = scratch.file("secret.txt")
        try Data("\"the-secret\"".utf8).write(to: secret)
        try FileManager.default.createSymbolicLink(at: target.validatorURL, withDestinationURL: secret)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: URL(string: "http://h/x")!)
        var request = TransportRequest(url: URL(string: "http://h/x")!)
        #expect(writer.prepare(&request) == 7)
        #expect(request.headers["If-Range"] == nil)
    }

    // MARK: No secret in text a user did not ask for

    @Test("a URL's user-info is sent as Basic authorization and never stays in the URL")
    func userInfoBecomesAuthorization() throws {
        let request = try ServerAPI(url: URL(string: "http://user:S3CRETPW@127.0.0.1:1/get")!).transportRequest()
        #expect(request.url.absoluteString == "http://127.0.0.1:1/get")
        #expect(request.headers["Authorization"] == "Basic " + Data("user:S3CRETPW".utf8).base64EncodedString())
        // The call's own Authorization wins.
        let own = try ServerAPI(url: URL(string: "http://user:pw@h/get")!).bearerAuth("tok").transportRequest()
        #expect(own.headers["Authorization"] == "Bearer tok")
        #expect(own.url.absoluteString == "http://h/get")
    }

    @Test("an error's descriptions never show a URL's password or a secret query value")
    func errorDescriptionsRedacted() {
        let url = URL(string: "http://user:S3CRETPW@127.0.0.1:1/get?token=T0KEN&page=2")!
        let error = ServerAPIError(
            .timedOut, "the request to http://user:S3CRETPW@127.0.0.1:1/get?api_key=K3Y timed out", url: url,
            underlying: ServerAPIError(.network, "at http://u:INNERPW@h/"))
        for text in [error.description, error.debugDescription, error.errorDescription ?? "", "\(error)"] {
            #expect(!text.contains("S3CRETPW"), "\(text)")
            #expect(!text.contains("T0KEN"), "\(text)")
            #expect(!text.contains("K3Y"), "\(text)")
            #expect(!text.contains("INNERPW"), "\(text)")
            #expect(text.contains("user:<redacted>@127.0.0.1:1"), "\(text)")
        }
        #expect(error.description.contains("page=2"))
        #expect(error.url == url)
    }
}
