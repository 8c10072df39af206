import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

/// `sapi --download` end to end, as httpie does downloads: the built binary against the fault fixture
/// and httpbin, with both backends.
@Suite("sapi downloads")
struct SapiDownloadTests {
    static let backends = ["curl", "urlsession"]

    /// A fresh directory, removed after `body`.
    private func inDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-dl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }

    /// The first `count` bytes of the fixture's resource (its bytes depend on the offset only).
    private func resourcePrefix(_ count: Int) async throws -> Data {
        let outcome = try await SapiProcess.run(["\(try SapiProcess.fixture)/resource?size=\(count)"])
        try #require(outcome.code == 0 && outcome.stdout.count == count, "\(outcome.stderr)")
        return outcome.stdout
    }

    private func expectedDigest(_ size: Int) async throws -> String {
        try await SapiProcess.run(["\(try SapiProcess.fixture)/resource/sha256?size=\(size)"]).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    @Test("--continue resumes a partial FILE made by another program into a byte-identical file", arguments: backends)
    func resumeForeignPartial(backend: String) async throws {
        let size = 2_000_000
        let written = 700_000
        try await inDirectory { directory in
            let file = directory.appendingPathComponent("payload.bin")
            try await resourcePrefix(written).write(to: file)
            // The connection drops at byte 500000 of any response that starts before it: only a resume
            // from byte 700000 can succeed.
            let outcome = try await SapiProcess.run([
                "--backend", backend, "-d", "-c", "-o", file.path,
                "\(try SapiProcess.fixture)/resource?size=\(size)&drop_after=500000",
            ])
            #expect(outcome.code == 0, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("Saved \(size) bytes to \(file.path)"), "\(outcome.stderr)")
            #expect(SHA256.hex(try Data(contentsOf: file)) == (try await expectedDigest(size)))
            #expect(!exists(DownloadTarget(destination: file).partialURL))
            #expect(!exists(DownloadTarget(destination: file).validatorURL))
        }
    }

    @Test("a complete FILE is not downloaded again: the 416 is reported and the exit code is 0", arguments: backends)
    func alreadyComplete(backend: String) async throws {
        let size = 300_000
        try await inDirectory { directory in
            let file = directory.appendingPathComponent("whole.bin")
            let whole = try await resourcePrefix(size)
            try whole.write(to: file)
            // Any body sent would be cut at byte 1: only a 416 lets this succeed.
            let outcome = try await SapiProcess.run([
                "--backend", backend, "-d", "-c", "-o", file.path,
                "\(try SapiProcess.fixture)/resource?size=\(size)&drop_after=1",
            ])
            #expect(outcome.code == 0, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("already complete (\(size) bytes)"), "\(outcome.stderr)")
            #expect(try Data(contentsOf: file) == whole)
            #expect(!exists(DownloadTarget(destination: file).partialURL))
        }
    }

    enum Leftover: String, CaseIterable {
        /// No file at all.
        case nothing
        /// A FILE from before, downloading without --continue.
        case file
        /// A partial FILE from another program, with --continue.
        case partialFile
        /// The library's FILE.part and its validator, and an older FILE, with --continue.
        case partAndFile
    }

    @Test(
        "an error status saves nothing and leaves FILE and FILE.part byte for byte as they were",
        arguments: backends, Leftover.allCases)
    func errorStatus(backend: String, leftover: Leftover) async throws {
        try await inDirectory { directory in
            let file = directory.appendingPathComponent("target.bin")
            let target = DownloadTarget(destination: file)
            var before: [URL: Data] = [:]
            switch leftover {
            case .nothing: break
            case .file, .partialFile: before[file] = Data("what was there before\n".utf8)
            case .partAndFile:
                before[file] = Data("an older download\n".utf8)
                before[target.partialURL] = try await resourcePrefix(10_000)
                before[target.validatorURL] = Data("\"r-20000-1\"".utf8)
            }
            for (url, data) in before { try data.write(to: url) }
            let resume = leftover == .partialFile || leftover == .partAndFile ? ["-c"] : []
            for (status, code) in [(404, Int32(4)), (500, 5)] {
                let outcome = try await SapiProcess.run(
                    ["--backend", backend, "-d", "-o", file.path] + resume
                        + ["\(try SapiProcess.fixture)/resource/error/\(status)"])
                #expect(outcome.code == code, "\(outcome.stderr)")
                #expect(outcome.stderr.contains("sapi: error: HTTP \(status) \(HTTPStatus.reason(status))"))
                #expect(outcome.stdout.isEmpty)
                let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                #expect(names == before.keys.map(\.lastPathComponent).sorted())
                for (url, data) in before { #expect(try Data(contentsOf: url) == data, "\(url.lastPathComponent)") }
            }
        }
    }

    @Test("a 3xx that is not followed saves nothing and exits 3", arguments: backends)
    func redirectNotFollowed(backend: String) async throws {
        try await inDirectory { directory in
            let outcome = try await SapiProcess.run(
                [
                    "--backend", backend, "-d", "--max-redirects", "0",
                    "\(try SapiProcess.httpbin)/redirect-to?url=/bytes/10",
                ], in: directory)
            #expect(outcome.code == 3, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("sapi: error: HTTP 302 Found"), "\(outcome.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    @Test("a server that ignores Range sends the whole body, which replaces the partial one", arguments: backends)
    func rangeIgnored(backend: String) async throws {
        let size = 400_000
        for ownPart in [false, true] {
            try await inDirectory { directory in
                let file = directory.appendingPathComponent("norange.bin")
                // Bytes that are not the resource's: appended to, they would show in the digest.
                let partial = Data(repeating: 0xAB, count: 100_000)
                try partial.write(to: ownPart ? DownloadTarget(destination: file).partialURL : file)
                let outcome = try await SapiProcess.run([
                    "--backend", backend, "-d", "-c", "-o", file.path,
                    "\(try SapiProcess.fixture)/resource/norange?size=\(size)",
                ])
                #expect(outcome.code == 0, "\(outcome.stderr)")
                #expect(SHA256.hex(try Data(contentsOf: file)) == (try await expectedDigest(size)))
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["norange.bin"])
            }
        }
    }

    @Test("--download without --output takes the name from Content-Disposition, made safe", arguments: backends)
    func nameFromContentDisposition(backend: String) async throws {
        let size = 100_000
        let cases = [
            ("attachment; filename=\"report 2026.bin\"", "report 2026.bin"),
            ("attachment; filename=fallback.bin; filename*=UTF-8''r%C3%A9sum%C3%A9.bin", "résumé.bin"),
            ("attachment; filename=\"../../escape.bin\"", "escape.bin"),
            ("attachment; filename=\".profile\"", "profile"),
        ]
        for (disposition, expected) in cases {
            try await inDirectory { directory in
                let query = try #require(disposition.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let outcome = try await SapiProcess.run(
                    [
                        "--backend", backend, "-d",
                        "\(try SapiProcess.fixture)/resource?size=\(size)&disposition=\(query)",
                    ], in: directory)
                #expect(outcome.code == 0, "\(outcome.stderr)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [expected])
                #expect(outcome.stderr.contains("Saved \(size) bytes to \(expected)"), "\(outcome.stderr)")
                let saved = try Data(contentsOf: directory.appendingPathComponent(expected))
                #expect(SHA256.hex(saved) == (try await expectedDigest(size)))
            }
        }
    }

    @Test(
        "without Content-Disposition the name is the URL's, with an extension; taken names get -1, -2",
        arguments: backends)
    func nameFromURL(backend: String) async throws {
        try await inDirectory { directory in
            try Data("mine".utf8).write(to: directory.appendingPathComponent("resource.bin"))
            let url = "\(try SapiProcess.fixture)/resource?size=5000"
            for _ in 0..<2 {
                let outcome = try await SapiProcess.run(["--backend", backend, "-d", url], in: directory)
                #expect(outcome.code == 0, "\(outcome.stderr)")
            }
            let json = try await SapiProcess.run(
                ["--backend", backend, "-d", "\(try SapiProcess.httpbin)/json"], in: directory)
            #expect(json.code == 0, "\(json.stderr)")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(names == ["json.json", "resource.bin", "resource.bin-1", "resource.bin-2"])
            #expect(try Data(contentsOf: directory.appendingPathComponent("resource.bin")) == Data("mine".utf8))
            let expected = try await resourcePrefix(5000)
            for name in ["resource.bin-1", "resource.bin-2"] {
                #expect(try Data(contentsOf: directory.appendingPathComponent(name)) == expected)
            }
            let object = try JSONSerialization.jsonObject(
                with: Data(contentsOf: directory.appendingPathComponent("json.json")))
            #expect(object is [String: Any])
        }
    }

    @Test("a download interrupted mid-body keeps NAME.part, which -d -c -o NAME resumes", arguments: backends)
    func suggestedNameResumes(backend: String) async throws {
        let size = 1_000_000
        try await inDirectory { directory in
            let fixture = try SapiProcess.fixture
            let broken = try await SapiProcess.run(
                ["--backend", backend, "-d", "\(fixture)/resource?size=\(size)&drop_after=300000"], in: directory)
            #expect(broken.code == 7, "\(broken.stderr)")
            #expect(broken.stderr.contains("try: sapi -d -c -o resource.bin URL"), "\(broken.stderr)")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(names == ["resource.bin.part", "resource.bin.part.validator"])
            let resumed = try await SapiProcess.run(
                [
                    "--backend", backend, "-d", "-c", "-o", "resource.bin",
                    "\(fixture)/resource?size=\(size)&drop_after=300000",
                ],
                in: directory)
            #expect(resumed.code == 0, "\(resumed.stderr)")
            let saved = try Data(contentsOf: directory.appendingPathComponent("resource.bin"))
            #expect(SHA256.hex(saved) == (try await expectedDigest(size)))
        }
    }

    @Test("--output without --download writes what would be printed into the file")
    func outputWithoutDownload() async throws {
        try await inDirectory { directory in
            let outcome = try await SapiProcess.run(
                ["\(try SapiProcess.httpbin)/anything", "q==1", "-p", "hb", "-o", "out.txt"], in: directory)
            #expect(outcome.code == 0, "\(outcome.stderr)")
            #expect(outcome.stdout.isEmpty)
            let text = String(
                decoding: try Data(contentsOf: directory.appendingPathComponent("out.txt")), as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\n"), "\(text)")
            #expect(text.contains("\"q\": \"1\""))
            #expect(!text.contains("\u{1B}["))
        }
    }

    @Test("-h in download mode prints the status line with the HTTP version the transport reports", arguments: backends)
    func headWithVersion(backend: String) async throws {
        // URLSession's metrics carry no HTTP version on Linux: its status line says "HTTP" alone.
        let statusLine = backend == "curl" ? "HTTP/1.1 200 OK\n" : "HTTP 200 OK\n"
        try await inDirectory { directory in
            let fixture = try SapiProcess.fixture
            for arguments in [["-d", "-o", "named.bin"], ["-d"]] {
                let outcome = try await SapiProcess.run(
                    ["--backend", backend, "-h"] + arguments + ["\(fixture)/resource?size=100"], in: directory)
                #expect(outcome.code == 0, "\(outcome.stderr)")
                #expect(outcome.text.hasPrefix(statusLine), "\(arguments): \(outcome.text)")
                #expect(outcome.text.contains("Content-Length: 100"), "\(arguments): \(outcome.text)")
            }
        }
    }

    @Test("the old --download FILE form is refused before anything is sent")
    func oldForm() async throws {
        try await inDirectory { directory in
            let outcome = try await SapiProcess.run(
                ["\(try SapiProcess.fixture)/resource?size=10", "--download", "out.bin"], in: directory)
            #expect(outcome.code == 1)
            #expect(outcome.stderr.contains("sapi: error: --download takes no value"), "\(outcome.stderr)")
            #expect(outcome.stderr.contains("  try: sapi -d -o out.bin URL"), "\(outcome.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    @Test("on a terminal the progress bar runs during the download; Ctrl-C keeps the part, -c ends with the Saved line")
    func progressBarInTerminal() async throws {
        let size = 1_500_000
        try await inDirectory { directory in
            let binary = try SapiProcess.binary.path
            let file = directory.appendingPathComponent("slow.bin").path
            let fixture = try SapiProcess.fixture
            try await Terminal.with { terminal in
                // The server sends 500000 bytes, then nothing until the client leaves: the bar stays part-way.
                try await terminal.run(
                    "'\(binary)' -d -o '\(file)' '\(fixture)/resource?size=\(size)&stall_after=500000'")
                do {
                    _ = try await terminal.waitFor { screen in
                        screen.contains("↓ [") && screen.contains("33% 500.0 KB / 1.5 MB")
                    }
                } catch {
                    Issue.record("no progress bar part-way; the terminal shows:\n\(try await terminal.screen())")
                    throw error
                }
                try await terminal.press("C-c")
                let interrupted = try await terminal.waitForExit()
                #expect(interrupted.exitCode == 130, "\(interrupted.text)")
                #expect(
                    interrupted.text.replacingOccurrences(of: "\n", with: "")
                        .contains("the partial download is kept as \(file).part: rerun with -d -c -o \(file)"),
                    "\(interrupted.text)")

                try await terminal.run("clear; '\(binary)' -d -c -o '\(file)' '\(fixture)/resource?size=\(size)'")
                _ = try await terminal.waitFor { !$0.contains("EXIT=130") }
                let done = try await terminal.waitForExit()
                #expect(done.exitCode == 0, "\(done.text)")
                #expect(done.text.contains("100% 1.5 MB / 1.5 MB"), "\(done.text)")
                #expect(done.text.contains("Saved \(size) bytes to \(file)"), "\(done.text)")
            }
            #expect(SHA256.hex(try Data(contentsOf: URL(fileURLWithPath: file))) == (try await expectedDigest(size)))
        }
    }
}
