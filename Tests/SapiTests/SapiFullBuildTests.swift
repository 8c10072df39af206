import Foundation
import ServerAPITestSupport
import Testing

/// `sapi` leaves out what needs all of Foundation and runs `sapi-full`, from its own folder, for it.
@Suite("sapi: the URLSession backend and HAR files through sapi-full")
struct SapiFullBuildTests {
    @Test("--backend urlsession on sapi runs sapi-full: the call goes through URLSession")
    func handsOver() async throws {
        let url = "\(try SapiProcess.httpbin)/get"
        let curl = try await SapiProcess.run(["-p", "h", url])
        #expect(curl.code == 0, "\(curl.stderr)")
        #expect(curl.text.hasPrefix("HTTP/1.1 200"), "\(curl.text)")
        // URLSession's metrics carry no HTTP version on Linux: its status line says "HTTP" alone.
        let urlSession = try await SapiProcess.run(["--backend", "urlsession", "-p", "h", url])
        #expect(urlSession.code == 0, "\(urlSession.stderr)")
        #if os(Linux)
            #expect(urlSession.text.hasPrefix("HTTP 200"), "\(urlSession.text)")
        #endif
    }

    @Test(
        "without sapi-full beside it, sapi says what is missing for the options that need it, and the rest works",
        arguments: [["--backend", "urlsession"], ["--har", "out.har"], ["--replay", "in.har"]])
    func missing(_ option: [String]) async throws {
        let scratch = try Scratch()
        let lone = scratch.file("sapi")
        // A hard link, where it can be: a copy is written through a descriptor that a process another test starts
        // meanwhile may inherit, and running a file open for writing fails ("Text file busy").
        do {
            try FileManager.default.linkItem(at: try SapiProcess.binary, to: lone)
        } catch {
            try FileManager.default.copyItem(at: try SapiProcess.binary, to: lone)
        }
        let url = "\(try SapiProcess.httpbin)/get"
        let refused = try await SapiProcess.run(option + [url], in: scratch.folder, executable: lone)
        #expect(refused.code == 1)
        #expect(
            refused.stderr.contains("sapi: error: \(option[0])")
                && refused.stderr.contains("sapi-full, which is missing"),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("try: build sapi-full beside sapi"), "\(refused.stderr)")
        #expect(!scratch.exists(scratch.file("out.har")))
        let plain = try await SapiProcess.run(["-p", "h", url], executable: lone)
        #expect(plain.code == 0, "\(plain.stderr)")
        #expect(plain.text.hasPrefix("HTTP/1.1 200"), "\(plain.text)")
    }

    @Test("sapi does not link FoundationNetworking, which only sapi-full needs")
    func lean() throws {
        let binary = try Data(contentsOf: try SapiProcess.binary)
        #expect(binary.range(of: Data("libFoundationNetworking".utf8)) == nil)
        let full = try SapiProcess.binary.deletingLastPathComponent().appendingPathComponent("sapi-full")
        #expect(try Data(contentsOf: full).range(of: Data("libFoundationNetworking".utf8)) != nil)
    }
}
