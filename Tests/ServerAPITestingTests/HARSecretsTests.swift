import Foundation
import ServerAPIKit
import ServerAPITestSupport
import ServerAPITesting
import Testing

/// A HAR file keeps no password a URL carried unless asked, and a file that keeps credentials is private.
@Suite("HAR files and URL passwords")
struct HARSecretsTests {
    /// The mode bits of a file.
    static func mode(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue) & 0o777
    }

    @Test("a URL's password is redacted like Authorization, in the URL, the header and a failure's message")
    func passwordRedacted() async throws {
        let scratch = try Scratch()
        let file = scratch.file("run.har")
        let mock = MockTransport()
        mock.stub(.get, "/ok", .text("fine"))
        mock.stub(
            .get, "/down", .failure(ServerAPIError(.cannotConnect, "cannot reach http://user:S3CRETPW@api.test/down")))
        let recording = RecordingTransport(recording: mock, to: file)
        // A request as a transport may get it directly, user-info still in its URL.
        _ = try await recording.perform(TransportRequest(url: URL(string: "http://user:S3CRETPW@api.test/ok")!))
        let down = await expectError {
            try await recording.perform(TransportRequest(url: URL(string: "http://user:S3CRETPW@api.test/down")!))
        }
        #expect(down?.kind == .cannotConnect)
        // Through a manager: the user-info is sent as Authorization, which is redacted.
        _ = try await ServerAPIManager(transport: recording).send(
            try #require(ServerAPI(urlString: "http://user:S3CRETPW@api.test/ok")).format(.data))
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("S3CRETPW"))
        #expect(!text.contains(Data("user:S3CRETPW".utf8).base64EncodedString()))
        #expect(text.contains("user:REDACTED@api.test"))
        #expect(text.contains("Basic REDACTED"))
    }

    @Test("a file recorded without redaction is readable by its owner only; a redacted one is not restricted")
    func permissions() async throws {
        let scratch = try Scratch()
        let mock = MockTransport()
        mock.stub(.get, "/ok", .text("fine"))
        let open = scratch.file("open.har")
        let kept = scratch.file("kept.har")
        let request = TransportRequest(url: URL(string: "http://api.test/ok")!)
        _ = try await RecordingTransport(recording: mock, to: kept, redaction: .none).perform(request)
        _ = try await RecordingTransport(recording: mock, to: open).perform(request)
        #expect(try Self.mode(kept) == 0o600)
        let umask = Self.currentUmask()
        #expect(try Self.mode(open) == 0o644 & ~umask)
    }

    /// The process's umask, read without changing it (`umask(2)` would, for every test running at once).
    static func currentUmask() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
        return line.flatMap { Int($0.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) }
            ?? 0o022
    }
}
