import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPITesting

/// A HAR file is input from outside (shared, exported from browsers): every number and every encoding in it is
/// checked when it is read, and a bad one is a `decoding` error naming the entry and the field, never a trap, a
/// silent empty body or a status no server can send; a file larger than the limit is refused before it is read.
@Suite("HAR input: numbers, encodings and size are checked")
struct HARValidationTests {
    /// One bad value in the second of three entries: where it goes, what the file then says, and the words the
    /// error must have to name the field.
    struct BadValue: Sendable, CustomTestStringConvertible {
        /// The keys from the entry down to the field (or to the array that is replaced).
        var path: [String]
        /// The JSON written there.
        var json: String
        /// What the error must say to name the field.
        var field: String

        init(_ path: String, _ json: String, field: String? = nil) {
            self.path = path.split(separator: ".").map(String.init)
            self.json = json
            self.field = field ?? path
        }

        var testDescription: String { "\(path.joined(separator: ".")) = \(json)" }
    }

    /// An entry every check accepts: the base the bad values are written into.
    static let entry = #"""
        {"startedDateTime": "2026-01-01T00:00:00.000Z", "time": 12, "cache": {},
         "request": {"method": "GET", "url": "https://api.test/n", "httpVersion": "HTTP/1.1", "cookies": [],
           "headers": [], "queryString": [], "headersSize": -1, "bodySize": 0},
         "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
           "content": {"size": 2, "mimeType": "text/plain", "text": "hi"}, "redirectURL": "", "headersSize": -1,
           "bodySize": 2},
         "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": 10, "receive": 2}}
        """#

    static let message = #"{"type": "receive", "time": 1718000000.25, "opcode": 1, "data": "x"}"#

    /// Numbers out of range, for every numeric field the format has.
    static let badNumbers: [BadValue] = [
        BadValue("time", "1e300"),
        BadValue("time", "-5"),
        BadValue("timings.blocked", "1e300"),
        BadValue("timings.dns", "1e300"),
        BadValue("timings.connect", "1e300"),
        BadValue("timings.ssl", "1e300"),
        BadValue("timings.send", "1e300"),
        BadValue("timings.wait", "1e300"),
        BadValue("timings.receive", "1e300"),
        BadValue("timings.wait", "-2"),
        BadValue("timings.wait", "86400001"),
        BadValue(
            "response._chunks", #"[{"size": 1, "time": 0}, {"size": 1, "time": 1e16}]"#,
            field: "the time of chunk 2 in response._chunks"),
        BadValue(
            "response._chunks", #"[{"size": 1, "time": -3}]"#, field: "the time of chunk 1 in response._chunks"),
        BadValue(
            "response._chunks", #"[{"size": -1, "time": 0}]"#, field: "the size of chunk 1 in response._chunks"),
        BadValue(
            "response._chunks", #"[{"size": 1, "time": 0}, {"size": 9223372036854775807, "time": 0}]"#,
            field: "the sizes of response._chunks add up past"),
        BadValue("response.status", "-1"),
        BadValue("response.status", "99"),
        BadValue("response.status", "600"),
        BadValue("response.status", "1e300"),
        BadValue("response.status", "1.5"),
        BadValue("response.headersSize", "1e300"),
        BadValue("response.bodySize", "1e300"),
        BadValue("response.content.size", "1.5"),
        BadValue("response.content.compression", "-1e300"),
        BadValue("request.headersSize", "99999999999999999999"),
        BadValue("request.bodySize", "1e300"),
        BadValue(
            "response._error", #"{"kind": "network", "message": "x", "status": 1000}"#, field: "response._error.status"),
        BadValue(
            "_webSocketMessages", "[\(message), {\"type\": \"send\", \"time\": 1e300, \"opcode\": 1, \"data\": \"y\"}]",
            field: "the time of message 2 in _webSocketMessages"),
        BadValue(
            "_webSocketMessages", #"[{"type": "send", "time": -1, "opcode": 1, "data": "y"}]"#,
            field: "the time of message 1 in _webSocketMessages"),
        BadValue(
            "_webSocketMessages", #"[{"type": "send", "time": 0, "opcode": 99, "data": "y"}]"#,
            field: "the opcode of message 1 in _webSocketMessages"),
        BadValue(
            "_webSocketMessages", #"[{"type": "send", "time": 0, "opcode": -1, "data": "y"}]"#,
            field: "the opcode of message 1 in _webSocketMessages"),
        BadValue("_webSocketClose", #"{"type": "receive", "time": 1e300}"#, field: "_webSocketClose.time"),
        BadValue("_webSocketClose", #"{"type": "receive", "time": 0, "code": 70000}"#, field: "_webSocketClose.code"),
        BadValue(
            "_webSocketClose", #"{"type": "send", "time": 0, "code": 1000, "answer": {"code": -1}}"#,
            field: "_webSocketClose.answer.code"),
    ]

    /// Text that says it is base64 and is not, wherever the format has such text.
    static let badBase64: [BadValue] = [
        BadValue(
            "response.content",
            #"{"size": 3, "mimeType": "application/octet-stream", "text": "not base64!", "encoding": "base64"}"#,
            field: "response.content.text"),
        BadValue(
            "request.postData", #"{"mimeType": "application/octet-stream", "text": "%%%%", "_encoding": "base64"}"#,
            field: "request.postData.text"),
        BadValue(
            "_webSocketMessages", #"[{"type": "receive", "time": 0, "opcode": 2, "data": "@@@@"}]"#,
            field: "the data of message 1 in _webSocketMessages"),
        BadValue(
            "_webSocketMessages", #"[{"type": "receive", "time": 0, "opcode": 8, "data": "A-B_"}]"#,
            field: "the data of message 1 in _webSocketMessages"),
    ]

    /// A HAR file of three entries whose second has `value` written at its place.
    static func archive(with value: BadValue) throws -> Data {
        let entry = try #require(try JSONSerialization.jsonObject(with: Data(entry.utf8)) as? [String: Any])
        let written = try JSONSerialization.jsonObject(with: Data(value.json.utf8), options: .fragmentsAllowed)
        let entries = [entry, try Self.setting(written, at: value.path[...], in: entry), entry]
        return try JSONSerialization.data(withJSONObject: ["log": ["version": "1.2", "entries": entries]])
    }

    private static func setting(
        _ value: Any, at path: ArraySlice<String>, in object: [String: Any]
    ) throws -> [String: Any] {
        var object = object
        guard let key = path.first else { return object }
        if path.count == 1 {
            object[key] = value
        } else {
            object[key] = try setting(value, at: path.dropFirst(), in: object[key] as? [String: Any] ?? [:])
        }
        return object
    }

    /// Checks that `error` is a `decoding` error whose message names "crafted.har", its second entry and `field`:
    /// "entry 2 of 3 in crafted.har: timings.wait is …" when the check of the decoded archive found it, "crafted.har
    /// is not a HAR 1.2 archive: entry 2: response.status is …" when a number did not even decode.
    static func expectNamesEntry(
        _ error: ServerAPIError?, _ field: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(error?.kind == .decoding, "\(String(describing: error))", sourceLocation: sourceLocation)
        let message = error?.message ?? ""
        let entry =
            message.contains("entry 2 of 3 in crafted.har: ")
            || message.hasPrefix("crafted.har is not a HAR 1.2 archive: entry 2: ")
        #expect(entry, "\(message)", sourceLocation: sourceLocation)
        #expect(message.contains(field), "\(message)", sourceLocation: sourceLocation)
    }

    @Test("a number out of range is a decoding error naming the entry and the field", arguments: badNumbers)
    func numberOutOfRange(_ value: BadValue) async throws {
        let data = try Self.archive(with: value)
        Self.expectNamesEntry(await expectError { try HARArchive(data: data, name: "crafted.har") }, value.field)
    }

    @Test("text that says it is base64 and is not is a decoding error naming the entry", arguments: badBase64)
    func textNotBase64(_ value: BadValue) async throws {
        let data = try Self.archive(with: value)
        let error = await expectError { try HARArchive(data: data, name: "crafted.har") }
        Self.expectNamesEntry(error, value.field)
        #expect(error?.message.contains("not base64") == true)
    }

    @Test("what browsers write still reads: -1 timings, Chrome's negative sizes, status 0, base64 in lines, a day")
    func allowedValues() async throws {
        let values = [
            BadValue("time", "0"),
            BadValue("time", "86400000"),
            BadValue(
                "timings",
                #"{"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": -1, "wait": -1, "receive": -1}"#),
            BadValue("response.bodySize", "-1"),
            BadValue("response.bodySize", "-129"),
            BadValue("response.content.size", "-1"),
            BadValue("request.headersSize", "-1"),
            BadValue("response.content.compression", "-300"),
            BadValue("response._chunks", #"[{"size": 0, "time": 0}, {"size": 9223372036854775807, "time": 86400000}]"#),
            BadValue("response.status", "101"),
            BadValue("response.status", "599"),
            BadValue(
                "_webSocketClose",
                #"{"type": "receive", "time": 1718000001.5, "code": 4000, "answer": {"code": 1000}}"#),
        ]
        for value in values {
            _ = try HARArchive(data: try Self.archive(with: value), name: "crafted.har")
        }
        let wrapped = BadValue(
            "response.content",
            #"{"size": 5, "mimeType": "application/octet-stream", "text": "aGVs\r\nbG8=\n", "encoding": "base64"}"#)
        let archive = try HARArchive(data: try Self.archive(with: wrapped), name: "crafted.har")
        #expect(archive.entries[1].response.content.bytes == Data("hello".utf8))
        let close = BadValue(
            "_webSocketMessages", #"[{"type": "receive", "time": 1718000000.5, "opcode": 8, "data": "A+hieWU="}]"#)
        _ = try HARArchive(data: try Self.archive(with: close), name: "crafted.har")
    }

    @Test("an entry built in memory is checked too: ReplayingTransport(archive:) refuses an absurd duration")
    func inMemoryArchive() async {
        let entry = HARArchive.Entry(
            startedDateTime: "2026-01-01T00:00:00.000Z", time: 1e300,
            request: HARArchive.Request(method: "GET", url: "https://api.test/n"),
            response: HARArchive.Response(status: 200), timings: HARArchive.Timings())
        let error = await expectError { try ReplayingTransport(archive: HARArchive(entries: [entry])) }
        #expect(error?.kind == .decoding)
        #expect(
            error?.message.contains("entry 1 of 1 in the HAR archive: time is 1e+300") == true,
            "\(String(describing: error))")
    }

    @Test("a duration past the bound is a day, never a trap")
    func durationNeverTraps() {
        #expect(HARArchive.duration(milliseconds: 1e300) == .seconds(86_400))
        #expect(HARArchive.duration(milliseconds: 1e16) == .seconds(86_400))
        #expect(HARArchive.duration(milliseconds: .infinity) == .seconds(86_400))
        #expect(HARArchive.duration(milliseconds: .nan) == .zero)
        #expect(HARArchive.duration(milliseconds: -1) == .zero)
        #expect(HARArchive.duration(milliseconds: 1.5) == .microseconds(1500))
    }

    @Test("an entry with status 0 replays as the failure it records; without one, as a network failure")
    func statusZero() async throws {
        let entry = HARArchive.Entry(
            startedDateTime: "2026-01-01T00:00:00.000Z", time: 0,
            request: HARArchive.Request(method: "GET", url: "https://api.test/blocked"),
            response: HARArchive.Response(status: 0), timings: HARArchive.Timings())
        let manager = ServerAPIManager(transport: try ReplayingTransport(archive: HARArchive(entries: [entry])))
        let error = await expectError { try await manager.send(ServerAPI(host: "https://api.test", path: "/blocked")) }
        #expect(error?.kind == .network)
        #expect(error?.message.contains("status 0") == true)
    }

    @Test("a file larger than the limit is refused from its size, before it is read")
    func sizeLimit() async throws {
        let scratch = try Scratch()
        // A sparse file: 300 MiB long, no block written, so the test stays cheap; reading it would find zeros.
        let sparse = scratch.file("huge.har")
        #expect(FileManager.default.createFile(atPath: sparse.path, contents: nil))
        let handle = try FileHandle(forWritingTo: sparse)
        try handle.truncate(atOffset: 300 << 20)
        try handle.close()
        let error = await expectError { try HARArchive(contentsOf: sparse) }
        #expect(error?.kind == .fileSystem)
        #expect(error?.message.contains("huge.har is 314572800 bytes") == true, "\(String(describing: error))")
        #expect(error?.message.contains("268435456") == true)
        let replay = await expectError { try ReplayingTransport(file: sparse) }
        #expect(replay?.kind == .fileSystem)
        #expect(replay?.message == error?.message)
    }

    @Test("the limit is configurable where the archive is opened, and bounds what is read from a device too")
    func configuredLimit() async throws {
        let scratch = try Scratch()
        let file = scratch.file("small.har")
        try Self.archive(with: BadValue("time", "1")).write(to: file)
        let size = try #require(scratch.size(file))
        #expect(try HARArchive(contentsOf: file, maximumFileSize: size).entries.count == 3)
        let oneLess = await expectError { try HARArchive(contentsOf: file, maximumFileSize: size - 1) }
        #expect(oneLess?.kind == .fileSystem)
        #expect(oneLess?.message.contains("the limit of \(size - 1) bytes") == true, "\(String(describing: oneLess))")
        let configured = await expectError {
            try ReplayingTransport(file: file, configuration: .init(maximumFileSize: 64))
        }
        #expect(configured?.kind == .fileSystem)
        #expect(configured?.message.contains("the limit of 64 bytes") == true)
        // A device has no size to check first: the read itself stops past the limit.
        let device = await expectError {
            try HARArchive(contentsOf: URL(fileURLWithPath: "/dev/zero"), maximumFileSize: 1 << 20)
        }
        #expect(device?.kind == .fileSystem)
        #expect(
            device?.message.contains("more than the limit of 1048576 bytes") == true, "\(String(describing: device))")
    }

    @Test("a request the file lacks says how to record it with what was used: the mode, or SAPI_HAR_MODE")
    func recordingAdvice() async throws {
        let scratch = try Scratch()
        let file = scratch.file("Recordings/advice.har")
        try await HARReplayTests.record(file, [ServerAPI(host: "https://api.test", path: "/one")]) {
            $0.stub(.get, "/one", .text("1"))
        }
        let direct = ServerAPIManager(transport: try ReplayingTransport(file: file))
        let unmatched = await expectError { try await direct.send(ServerAPI(host: "https://api.test", path: "/two")) }
        #expect(unmatched?.kind == .notRecorded)
        #expect(unmatched?.message.contains("the mode .recordMissing") == true, "\(String(describing: unmatched))")
        // ReplayingTransport reads no environment variable: its message does not name one.
        #expect(unmatched?.message.contains(HARMode.environmentVariable) == false)

        let helper = try ServerAPIManager.replaying("advice", filePath: scratch.file("AdviceTests.swift").path)
        let viaHelper = await expectError { try await helper.send(ServerAPI(host: "https://api.test", path: "/two")) }
        #expect(viaHelper?.kind == .notRecorded)
        #expect(viaHelper?.message.contains("SAPI_HAR_MODE=record-missing") == true)

        let missing = await expectError { try ReplayingTransport(file: scratch.file("none.har")) }
        #expect(missing?.kind == .fileSystem)
        #expect(missing?.message.contains("the mode .recordMissing") == true)
        #expect(missing?.message.contains(HARMode.environmentVariable) == false)
    }
}
