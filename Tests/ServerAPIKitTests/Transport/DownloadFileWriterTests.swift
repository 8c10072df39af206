import Foundation
import ServerAPITestSupport
import Testing

@testable import ServerAPIKit

#if canImport(Glibc)
    import Glibc
#endif

extension Scratch {
    fileprivate func target(resume: Bool = false, name: String = "file.bin") -> DownloadTarget {
        DownloadTarget(destination: file(name), resume: resume)
    }

    fileprivate func contents(_ url: URL) throws -> Data { try Data(contentsOf: url) }
}

private let url = URL(string: "http://127.0.0.1/file.bin")!
private let whole = Data((0..<100).map { UInt8($0) })

private func request() -> TransportRequest { TransportRequest(url: url) }

private func headers(_ pairs: (String, String)...) -> HTTPHeaders { HTTPHeaders(pairs) }

@Suite("DownloadFileWriter")
struct DownloadFileWriterTests {
    @Test("a 200 is written to the partial file and appears on the destination only when finished")
    func freshDownload() throws {
        let scratch = try Scratch()
        let target = scratch.target()
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        #expect(writer.prepare(&req) == 0)
        #expect(!req.headers.contains("Range"))
        let disposition = try writer.receiveHead(
            status: 200, headers: headers(("Content-Length", "100"), ("ETag", "\"v1\"")))
        #expect(disposition == .file)
        #expect(writer.expectedTotal == 100)
        try writer.write(whole.prefix(40))
        #expect(!scratch.exists(target.destination))
        #expect(try scratch.contents(target.partialURL) == whole.prefix(40))
        try writer.write(whole.dropFirst(40))
        #expect(writer.bytesOnDisk == 100)
        #expect(writer.progress == TransferProgress(direction: .download, completed: 100, total: 100))
        let body = try writer.finish()
        #expect(body == .file(target.destination, bytes: 100))
        #expect(try scratch.contents(target.destination) == whole)
        #expect(!scratch.exists(target.partialURL))
        #expect(!scratch.exists(target.validatorURL))
    }

    @Test("finishing replaces an existing destination file")
    func replacesDestination() throws {
        let scratch = try Scratch()
        let target = scratch.target()
        try Data("old".utf8).write(to: target.destination)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        writer.prepare(&req)
        _ = try writer.receiveHead(status: 200, headers: [:])
        try writer.write(whole)
        _ = try writer.finish()
        #expect(try scratch.contents(target.destination) == whole)
    }

    @Test("an error status keeps its body in memory and never touches a file", arguments: [404, 500, 302])
    func errorBody(status: Int) throws {
        let scratch = try Scratch()
        let target = scratch.target(resume: true)
        try whole.prefix(30).write(to: target.partialURL)
        try Data("\"v1\"".utf8).write(to: target.validatorURL)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        #expect(writer.prepare(&req) == 30)
        #expect(try writer.receiveHead(status: status, headers: headers(("Content-Length", "9"))) == .memory)
        try writer.write(Data("not found".utf8))
        #expect(try writer.finish() == .data(Data("not found".utf8)))
        #expect(!scratch.exists(target.destination))
        #expect(try scratch.contents(target.partialURL) == whole.prefix(30))
        #expect(try scratch.contents(target.validatorURL) == Data("\"v1\"".utf8))
    }

    @Test("an error body is kept only up to its limit")
    func boundedErrorBody() throws {
        let scratch = try Scratch()
        let writer = DownloadFileWriter(
            target: scratch.target(), requestID: RequestID.next(), url: url, maxErrorBodySize: 10)
        #expect(try writer.receiveHead(status: 500, headers: [:]) == .memory)
        try writer.write(whole)
        #expect(try writer.finish() == .data(whole.prefix(10)))
    }

    @Test("resuming sends Range and If-Range and appends a matching 206")
    func resumeAppends() throws {
        let scratch = try Scratch()
        let target = scratch.target(resume: true)
        try whole.prefix(30).write(to: target.partialURL)
        try Data("\"v1\"\n".utf8).write(to: target.validatorURL)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        #expect(writer.prepare(&req) == 30)
        #expect(req.headers["Range"] == "bytes=30-")
        #expect(req.headers["If-Range"] == "\"v1\"")
        let disposition = try writer.receiveHead(
            status: 206, headers: headers(("Content-Range", "bytes 30-99/100"), ("ETag", "\"v1\"")))
        #expect(disposition == .file)
        #expect(writer.bytesOnDisk == 30)
        #expect(writer.expectedTotal == 100)
        try writer.write(whole.dropFirst(30))
        #expect(try writer.finish() == .file(target.destination, bytes: 100))
        #expect(try scratch.contents(target.destination) == whole)
        #expect(!scratch.exists(target.validatorURL))
    }

    @Test("resuming without a recorded validator sends Range alone")
    func resumeWithoutValidator() throws {
        let scratch = try Scratch()
        let target = scratch.target(resume: true)
        try whole.prefix(30).write(to: target.partialURL)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        req.headers.add(name: "Range", value: "bytes=0-1")
        #expect(writer.prepare(&req) == 30)
        #expect(req.headers.values(for: "Range") == ["bytes=30-"])
        #expect(!req.headers.contains("If-Range"))
    }

    @Test("without resume, an existing partial file is replaced from zero")
    func noResumeTruncates() throws {
        let scratch = try Scratch()
        let target = scratch.target(resume: false)
        try Data(repeating: 0xFF, count: 500).write(to: target.partialURL)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        #expect(writer.prepare(&req) == 0)
        #expect(!req.headers.contains("Range"))
        _ = try writer.receiveHead(status: 200, headers: headers(("Content-Length", "100")))
        try writer.write(whole)
        _ = try writer.finish()
        #expect(try scratch.contents(target.destination) == whole)
    }

    @Test("a 200 to a resumed request starts the file again from zero")
    func resumeAnswered200() throws {
        let scratch = try Scratch()
        let target = scratch.target(resume: true)
        try Data(repeating: 0xFF, count: 30).write(to: target.partialURL)
        try Data("\"old\"".utf8).write(to: target.validatorURL)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        writer.prepare(&req)
        let disposition = try writer.receiveHead(
            status: 200, headers: headers(("Content-Length", "100"), ("ETag", "\"new\"")))
        #expect(disposition == .file)
        #expect(writer.bytesOnDisk == 0)
        #expect(try scratch.contents(target.validatorURL) == Data("\"new\"".utf8))
        try writer.write(whole)
        _ = try writer.finish()
        #expect(try scratch.contents(target.destination) == whole)
    }

    @Test("a 416 whose total is the partial size completes the download as it is")
    func alreadyComplete() throws {
        let scratch = try Scratch()
        let target = scratch.target(resume: true)
        try whole.write(to: target.partialURL)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        #expect(writer.prepare(&req) == 100)
        let disposition = try writer.receiveHead(status: 416, headers: headers(("Content-Range", "bytes */100")))
        #expect(disposition == .alreadyComplete)
        try writer.write(Data("range not satisfiable".utf8))
        #expect(try writer.finish() == .file(target.destination, bytes: 100))
        #expect(try scratch.contents(target.destination) == whole)
        #expect(!scratch.exists(target.partialURL))
    }

    @Test(
        "a 416 that does not match the partial file restarts once without Range",
        arguments: ["bytes */50", "bytes */1000", nil])
    func rangeNotSatisfiableRestarts(contentRange: String?) throws {
        let scratch = try Scratch()
        let target = scratch.target(resume: true)
        try Data(repeating: 0xFF, count: 80).write(to: target.partialURL)
        try Data("\"v1\"".utf8).write(to: target.validatorURL)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        writer.prepare(&req)
        var head = HTTPHeaders()
        if let contentRange { head.add(name: "Content-Range", value: contentRange) }
        #expect(try writer.receiveHead(status: 416, headers: head) == .restart)
        #expect(!scratch.exists(target.partialURL))
        #expect(!scratch.exists(target.validatorURL))
        #expect(writer.prepare(&req) == 0)
        #expect(!req.headers.contains("Range"))
        #expect(!req.headers.contains("If-Range"))
        #expect(try writer.receiveHead(status: 200, headers: headers(("Content-Length", "100"))) == .file)
        try writer.write(whole)
        _ = try writer.finish()
        #expect(try scratch.contents(target.destination) == whole)
    }

    @Test("a 416 to a request without Range is an ordinary error response")
    func rangeNotSatisfiableWithoutRange() throws {
        let scratch = try Scratch()
        let writer = DownloadFileWriter(target: scratch.target(), requestID: RequestID.next(), url: url)
        var req = request()
        writer.prepare(&req)
        #expect(try writer.receiveHead(status: 416, headers: headers(("Content-Range", "bytes */0"))) == .memory)
    }

    @Test("a 206 that does not continue the partial file restarts cleanly")
    func mismatchedPartialContent() throws {
        let scratch = try Scratch()
        let target = scratch.target(resume: true)
        try whole.prefix(30).write(to: target.partialURL)
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        writer.prepare(&req)
        let disposition = try writer.receiveHead(status: 206, headers: headers(("Content-Range", "bytes 10-99/100")))
        #expect(disposition == .restart)
        #expect(!scratch.exists(target.partialURL))
        writer.prepare(&req)
        #expect(!req.headers.contains("Range"))
        // Only one restart: a second unusable partial answer is an error, not a loop.
        let error = #expect(throws: ServerAPIError.self) {
            try writer.receiveHead(status: 206, headers: headers(("Content-Range", "bytes 10-99/100")))
        }
        #expect(error?.kind == .network)
    }

    @Test("an interrupted download keeps its partial file and validator for a resume")
    func abandonKeepsPartial() throws {
        let scratch = try Scratch()
        let target = scratch.target(resume: true)
        let first = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var req = request()
        first.prepare(&req)
        _ = try first.receiveHead(
            status: 200,
            headers: headers(
                ("Content-Length", "100"), ("ETag", "W/\"weak\""), ("Last-Modified", "Tue, 14 Nov 2023 22:13:20 GMT")))
        try first.write(whole.prefix(60))
        first.abandon()
        #expect(!scratch.exists(target.destination))
        #expect(try scratch.contents(target.partialURL) == whole.prefix(60))
        // A weak ETag cannot be used in If-Range: Last-Modified is recorded instead.
        #expect(try scratch.contents(target.validatorURL) == Data("Tue, 14 Nov 2023 22:13:20 GMT".utf8))

        let second = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        var again = request()
        #expect(second.prepare(&again) == 60)
        #expect(again.headers["If-Range"] == "Tue, 14 Nov 2023 22:13:20 GMT")
        _ = try second.receiveHead(status: 206, headers: headers(("Content-Range", "bytes 60-99/100")))
        try second.write(whole.dropFirst(60))
        _ = try second.finish()
        #expect(try scratch.contents(target.destination) == whole)
    }

    @Test("a body shorter than its Content-Length fails and keeps the partial file")
    func shortBody() throws {
        let scratch = try Scratch()
        let target = scratch.target()
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        _ = try writer.receiveHead(status: 200, headers: headers(("Content-Length", "100")))
        try writer.write(whole.prefix(50))
        let error = #expect(throws: ServerAPIError.self) { try writer.finish() }
        #expect(error?.kind == .network)
        #expect(!scratch.exists(target.destination))
        #expect(try scratch.contents(target.partialURL) == whole.prefix(50))
    }

    @Test("a gzip-encoded length is not taken as the file's length")
    func encodedLength() throws {
        let scratch = try Scratch()
        let writer = DownloadFileWriter(target: scratch.target(), requestID: RequestID.next(), url: url)
        _ = try writer.receiveHead(
            status: 200, headers: headers(("Content-Length", "20"), ("Content-Encoding", "gzip")))
        #expect(writer.expectedTotal == nil)
        try writer.write(whole)
        #expect(try writer.finish() == .file(scratch.target().destination, bytes: 100))
    }

    @Test("a full disk is a fileSystem error", .enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func diskFull() throws {
        let scratch = try Scratch()
        let target = scratch.target()
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        _ = try writer.receiveHead(status: 200, headers: [:])
        // The writer never opens a link (so never /dev/full through one): the descriptor it opened for the part
        // file is replaced, in one step, by one open on /dev/full, whose writes fail with ENOSPC.
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(full >= 0)
        defer { close(full) }
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        let partial = try #require(
            descriptors.compactMap(Int32.init).first {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))
                    == target.partialURL.path
            })
        try #require(dup2(full, partial) == partial)
        let error = #expect(throws: ServerAPIError.self) { try writer.write(whole) }
        #expect((error?.underlying as? POSIXError)?.code == .ENOSPC)
        #expect(error?.kind == .fileSystem)
        writer.abandon()
        #expect(!scratch.exists(target.destination))
    }

    @Test("a destination that cannot be created is a fileSystem error")
    func unwritableFolder() throws {
        let scratch = try Scratch()
        let blocker = scratch.folder.appendingPathComponent("not-a-folder")
        try Data().write(to: blocker)
        let target = DownloadTarget(destination: blocker.appendingPathComponent("file.bin"))
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        let error = #expect(throws: ServerAPIError.self) { try writer.receiveHead(status: 200, headers: [:]) }
        #expect(error?.kind == .fileSystem)
    }

    @Test("missing folders on the way to the destination are created")
    func createsFolders() throws {
        let scratch = try Scratch()
        let target = DownloadTarget(destination: scratch.folder.appendingPathComponent("a/b/file.bin"))
        let writer = DownloadFileWriter(target: target, requestID: RequestID.next(), url: url)
        _ = try writer.receiveHead(status: 200, headers: [:])
        try writer.write(whole)
        _ = try writer.finish()
        #expect(try scratch.contents(target.destination) == whole)
    }

    @Test("finishing without a response head is an error")
    func finishWithoutHead() throws {
        let scratch = try Scratch()
        let writer = DownloadFileWriter(target: scratch.target(), requestID: RequestID.next(), url: url)
        let error = #expect(throws: ServerAPIError.self) { try writer.finish() }
        #expect(error?.kind == .network)
    }

    @Test(
        "Content-Range values parse",
        arguments: [
            ("bytes 0-99/100", ContentRange?.some(ContentRange(start: 0, end: 99, total: 100))),
            ("bytes 5-9/*", ContentRange(start: 5, end: 9, total: nil)),
            ("bytes */100", ContentRange(start: nil, end: nil, total: 100)),
            ("bytes */*", nil),
            ("bytes 9-5/100", nil),
            ("items 0-1/2", nil),
            ("bytes 0-x/2", nil),
        ])
    func contentRange(text: String, expected: ContentRange?) {
        #expect(ContentRange(text) == expected)
    }
}
