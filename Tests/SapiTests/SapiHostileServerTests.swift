import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import SapiCommand

/// `sapi` against a server that sends bytes forever, URLs with a password or escapes, and links planted where a
/// download writes: bounded memory, no password in any line or file, URLs as written, no file written through a
/// link. Both backends.
@Suite("sapi against hostile servers and careless URLs")
struct SapiHostileServerTests {
    static let backends = ["curl", "urlsession"]

    /// Runs `sapi` with at most `kilobytes` of address space (`ulimit -v`) and its output thrown away; returns
    /// its exit status (a signal's number when one ended it) and its standard error.
    static func runBounded(_ arguments: [String], kilobytes: Int) async throws -> (Int32, String) {
        let err = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: err) }
        let process = try await FixtureProcess.launch(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "ulimit -v \(kilobytes) && exec \"$0\" \"$@\"", try SapiProcess.binary.path] + arguments
        ) { process in
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: err)
        }
        let code = try await process.exitStatus(within: .seconds(60))
        return (code, String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }

    // MARK: An endless body

    @Test("an endless body piped through runs in bounded memory until the timeout", arguments: backends)
    func endlessBodyStreamed(backend: String) async throws {
        // 1 GB of address space: sapi needs far less (its resident size stays under 100 MB); before, it held the
        // whole body and grew by 500 MB a second or more on loopback until it died, well within 8 s even on a busy
        // machine. (Much tighter, FoundationNetworking's threads may fail to start.)
        let (code, stderr) = try await Self.runBounded(
            ["--backend", backend, "--timeout", "8", "-b", "\(try SapiProcess.fixture)/endless"], kilobytes: 1_000_000)
        #expect(code == 2, "\(stderr)")
        #expect(stderr.contains("timed out"), "\(stderr)")
    }

    @Test("an endless body sapi must format or read at a key path stops at --max-body-size", arguments: backends)
    func endlessBodyFormatted(backend: String) async throws {
        let url = "\(try SapiProcess.fixture)/endless?type=application/json"
        for extra in [["--pretty", "format"], ["--key-path", "a"]] {
            let (code, stderr) = try await Self.runBounded(
                ["--backend", backend, "--timeout", "30", "--max-body-size", "1M", "-b", url] + extra,
                kilobytes: 1_000_000)
            #expect(code == 7, "\(extra): \(stderr)")
            #expect(stderr.contains("response too large"), "\(stderr)")
            #expect(stderr.contains("1048576"), "\(stderr)")
            #expect(stderr.contains("--max-body-size"), "\(stderr)")
        }
    }

    @Test("a decompression bomb is exit 7 naming the ratio, and the hint names --max-ratio, not --max-body-size")
    func decompressionBomb() async throws {
        let bomb = "\(try SapiProcess.fixture)/coding/zstd?size=104857600&fill=zero"
        for backend in Self.backends {
            let outcome = try await SapiProcess.run(["--backend", backend, bomb])
            #expect(outcome.code == 7, "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("--max-body-size"), "\(outcome.stderr)")
            // Which check stops it depends on whether sapi's reader was behind when the first decoded bytes came (a
            // busy machine): the ratio, or, on libcurl, what it holds for a paused reader. Both say it is a bomb.
            if outcome.stderr.contains("decompression ratio limit of 100 to 1") {
                #expect(outcome.stderr.contains("try: --max-ratio N"), "\(outcome.stderr)")
            } else {
                #expect(backend == "curl", "\(outcome.stderr)")
                #expect(outcome.stderr.contains("a decompression bomb"), "\(outcome.stderr)")
            }
        }
        // Lifted, the same body is read whole: the ratio was what stopped it.
        let saved = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-bomb-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: saved) }
        let lifted = try await SapiProcess.run(["--max-ratio", "none", "-d", "-o", saved.path, bomb])
        #expect(lifted.code == 0, "\(lifted.stderr)")
        #expect((try? FileManager.default.attributesOfItem(atPath: saved.path)[.size] as? Int) == 104_857_600)
        // With the ratio off, printed as it arrives: libcurl gives up on what one read decodes to while sapi's reader
        // is behind, which is the bomb's error too, with its own hint.
        let paused = try await SapiProcess.run(["--max-ratio", "none", bomb])
        #expect(paused.code == 7 || paused.code == 0, "\(paused.stderr)")
        if paused.code == 7 {
            #expect(paused.stderr.contains("a decompression bomb"), "\(paused.stderr)")
            #expect(paused.stderr.contains("try: -d to save it as it arrives"), "\(paused.stderr)")
        }
    }

    @Test("--max-body-size takes bytes or K, M, G; anything else is a usage error")
    func maxBodySizeOption() async throws {
        #expect(Options.parseSize("1048576") == 1_048_576)
        #expect(Options.parseSize("512K") == 512 << 10)
        #expect(Options.parseSize("64m") == 64 << 20)
        #expect(Options.parseSize("2GiB") == 2 << 30)
        for bad in ["", "0", "-1", "1.5M", "1MB", "K", "12Q", "99999999999G"] {
            #expect(Options.parseSize(bad) == nil, "\(bad)")
        }
        #expect(try Options.parse(["http://x"]).maxBodySize == 64 << 20)
        #expect(try Options.parse(["--max-body-size", "128M", "http://x"]).maxBodySize == 128 << 20)
        #expect(throws: UsageError.self) { try Options.parse(["--max-body-size", "lots", "http://x"]) }
        #expect(Options.helpText.contains("--max-body-size"))
    }

    // MARK: URLs as written

    @Test("a URL's escapes reach the server as written", arguments: backends)
    func escapes(backend: String) async throws {
        let outcome = try await SapiProcess.run(
            ["--backend", backend, "-b", "\(try SapiProcess.fixture)/anything/a%2Fb c?x=%20 y"])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        let echo = try JSONDecoder().decode(Echo.self, from: outcome.stdout)
        #expect(echo.path == "/anything/a%2Fb%20c")
        #expect(echo.query == "x=%20%20y")
    }

    // MARK: No password in any line

    @Test("a URL's password shows in no error line: connection, timeout, redirect, download", arguments: backends)
    func passwordNotInErrors(backend: String) async throws {
        let fixture = try SapiProcess.fixture
        let withPassword = { (base: String) in base.replacingOccurrences(of: "://", with: "://user:S3CRETPW@") }
        let runs: [[String]] = [
            ["http://user:S3CRETPW@127.0.0.1:\(try closedPort())/get"],
            ["--timeout", "1", withPassword(fixture) + "/hang"],
            ["--max-redirects", "2", withPassword(fixture) + "/redirect-loop"],
            ["-d", "-o", "/dev/null/x/out.bin", withPassword(fixture) + "/resource?size=10"],
            ["--check-status", "-d", withPassword(fixture) + "/status/404"],
        ]
        for arguments in runs {
            let outcome = try await SapiProcess.run(["--backend", backend] + arguments)
            #expect(outcome.code != 0, "\(arguments)")
            #expect(outcome.stderr.contains("sapi:"), "\(arguments): \(outcome.stderr)")
            #expect(!outcome.stderr.contains("S3CRETPW"), "\(arguments): \(outcome.stderr)")
            #expect(!outcome.text.contains("S3CRETPW"), "\(arguments)")
        }
    }

    @Test("-v shows the Authorization a URL's user-info sends, redacted unless --show-credentials", arguments: backends)
    func verboseShowsAuthorization(backend: String) async throws {
        let url = try SapiProcess.fixture.replacingOccurrences(of: "://", with: "://user:S3CRETPW@") + "/headers"
        let redacted = try await SapiProcess.run(["--backend", backend, "-v", "--pretty", "none", url])
        #expect(redacted.code == 0, "\(redacted.stderr)")
        // The request as printed (the response that follows echoes what the server received).
        let head = redacted.text.components(separatedBy: "\n\n").first ?? ""
        #expect(head.contains("Authorization: Basic <redacted>"), "\(head)")
        #expect(!head.contains(Data("user:S3CRETPW".utf8).base64EncodedString()))
        #expect(!head.contains("S3CRETPW"))

        let shown = try await SapiProcess.run([
            "--backend", backend, "-v", "--show-credentials", "--pretty", "none", url,
        ])
        let basic = "Basic " + Data("user:S3CRETPW".utf8).base64EncodedString()
        #expect(shown.text.contains("Authorization: \(basic)"), "\(shown.text)")
    }

    @Test("--har keeps no URL password, and a file that keeps credentials is 0600", arguments: backends)
    func harRedacted(backend: String) async throws {
        try await withTemporaryDirectory { directory in
            let url = try SapiProcess.fixture.replacingOccurrences(of: "://", with: "://user:S3CRETPW@") + "/headers"
            let har = directory.appendingPathComponent("run.har")
            let outcome = try await SapiProcess.run(["--backend", backend, "--har", har.path, url])
            #expect(outcome.code == 0, "\(outcome.stderr)")
            let text = try String(contentsOf: har, encoding: .utf8)
            #expect(!text.contains("S3CRETPW"))
            #expect(!text.contains(Data("user:S3CRETPW".utf8).base64EncodedString()))
            #expect(text.contains("Basic REDACTED"))

            let kept = directory.appendingPathComponent("kept.har")
            let shown = try await SapiProcess.run(["--backend", backend, "--har", kept.path, "--show-credentials", url])
            #expect(shown.code == 0, "\(shown.stderr)")
            let mode = try FileManager.default.attributesOfItem(atPath: kept.path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)
        }
    }

    // MARK: Downloads and links

    @Test("-d with a dangling link where NAME.part goes writes nothing through it and names it", arguments: backends)
    func downloadDanglingLink(backend: String) async throws {
        try await withTemporaryDirectory { directory in
            let aim = directory.appendingPathComponent("planted-target.txt")
            try FileManager.default.createSymbolicLink(
                at: directory.appendingPathComponent("existing.txt.part"), withDestinationURL: aim)
            let disposition =
                "attachment; filename=\"existing.txt\"".addingPercentEncoding(
                    withAllowedCharacters: .alphanumerics) ?? ""
            let outcome = try await SapiProcess.run(
                [
                    "--backend", backend, "-d",
                    "\(try SapiProcess.fixture)/resource?size=1000&disposition=\(disposition)",
                ],
                in: directory)
            #expect(outcome.code != 0, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("existing.txt.part is a symbolic link"), "\(outcome.stderr)")
            #expect(!FileManager.default.fileExists(atPath: aim.path))
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("existing.txt").path))
        }
    }

    @Test("-d -o FILE with FILE.part linked to an existing file leaves that file untouched", arguments: backends)
    func downloadLinkToExistingFile(backend: String) async throws {
        try await withTemporaryDirectory { directory in
            let victim = directory.appendingPathComponent("victim.txt")
            try Data("precious".utf8).write(to: victim)
            let output = directory.appendingPathComponent("out.bin")
            try FileManager.default.createSymbolicLink(
                at: directory.appendingPathComponent("out.bin.part"), withDestinationURL: victim)
            let outcome = try await SapiProcess.run(
                ["--backend", backend, "-d", "-o", output.path, "\(try SapiProcess.fixture)/resource?size=1000"])
            #expect(outcome.code != 0, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("out.bin.part is a symbolic link"), "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("Saved"), "\(outcome.stderr)")
            #expect(try Data(contentsOf: victim) == Data("precious".utf8))
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }
}
