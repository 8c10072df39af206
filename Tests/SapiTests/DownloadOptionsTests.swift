import Foundation
import ServerAPIKit
import Testing

@testable import SapiCommand

@Suite("sapi: download options and file names")
struct DownloadOptionsTests {
    @Test("--download is a flag and --output names the file, as in httpie")
    func flags() throws {
        let options = try Options.parse(["-d", "-c", "-o", "out.bin", "x.test/file"])
        #expect(options.download && options.resume && options.output == "out.bin" && options.url == "x.test/file")
        let named = try Options.parse(["--download", "x.test/file", "--output=out.bin"])
        #expect(named.download && named.output == "out.bin" && named.items.isEmpty)
        let plain = try Options.parse(["x.test/get", "-o", "out.json"])
        #expect(!plain.download && plain.output == "out.json")
        let fromResponse = try Options.parse(["-d", "GET", "x.test/file", "X-Trace:1"])
        #expect(fromResponse.download && fromResponse.output == nil && fromResponse.method == .get)
        #expect(fromResponse.items == [.header(name: "X-Trace", value: "1")])
    }

    @Test("short flags combine as in httpie: -dc, and an option with a value ends the group (-dco FILE, -oFILE)")
    func combinedShortFlags() throws {
        for arguments in [
            ["-dco", "out.bin", "x.test/file"], ["-dcoout.bin", "x.test/file"], ["-cd", "-oout.bin", "x.test/file"],
        ] {
            let options = try Options.parse(arguments)
            #expect(options.download && options.resume && options.output == "out.bin", "\(arguments)")
            #expect(options.url == "x.test/file" && options.items.isEmpty, "\(arguments)")
        }
        let verbose = try Options.parse(["-vd", "x.test/file"])
        #expect(verbose.verbose == 1 && verbose.download)
        let headers = try Options.parse(["-hI", "x.test/get"])
        #expect(headers.print == ["h"] && headers.ignoreStdin)
        #expect(throws: UsageError.self) { try Options.parse(["-dz", "x.test/file"]) }
        #expect(throws: UsageError.self) { try Options.parse(["-do"]) }
    }

    @Test(
        "the old --download FILE form is a usage error with the new form as a hint",
        arguments: [
            ["x.test/file", "--download", "out.bin"],
            ["GET", "x.test/file", "-d", "out.bin"],
            ["x.test/file", "-d", "name=value.bin"],
            ["--download", "out.bin", "http://x.test/file?size=3"],
            ["-d", "out.bin", ":8080/file"],
            ["-cd", "out.bin", ":8080/file"],
        ])
    func oldForm(arguments: [String]) {
        do {
            _ = try Options.parse(arguments)
            Issue.record("\(arguments) was accepted")
        } catch {
            #expect(error.message.contains("--download takes no value"), "\(error.message)")
            #expect(error.hint?.contains("sapi -d -o ") == true)
        }
    }

    @Test("--continue needs --download and --output; --output needs a name; --stream does not download")
    func combinations() {
        #expect(throws: UsageError.self) { try Options.parse(["-c", "-o", "f", "x.test"]) }
        #expect(throws: UsageError.self) { try Options.parse(["-d", "-c", "x.test"]) }
        #expect(throws: UsageError.self) { try Options.parse(["-o", "", "x.test"]) }
        #expect(throws: UsageError.self) { try Options.parse(["-S", "-d", "x.test"]) }
        #expect(throws: Never.self) { try Options.parse(["-S", "-o", "f", "x.test"]) }
    }

    @Test("--help documents the download options and behaviour")
    func help() {
        let help = Options.helpText
        for text in ["--download, -d", "--output, -o FILE", "--continue, -c", "downloads (--download, -d):", "NAME-1"] {
            #expect(help.contains(text), "\(text)")
        }
    }

    @Test(
        "the name comes from Content-Disposition, else the URL, else index; extensions from Content-Type",
        arguments: [
            (["Content-Disposition": "attachment; filename=\"r.pdf\""], "http://x.test/a/b", "r.pdf"),
            (["Content-Disposition": "attachment; filename*=UTF-8''%C3%A9t%C3%A9"], "http://x.test/a", "été"),
            (
                ["Content-Disposition": "attachment; filename=\"..\"", "Content-Type": "text/plain"], "http://x.test/f",
                "f.txt"
            ),
            (["Content-Disposition": "garbage;;;"], "http://x.test/data.csv", "data.csv"),
            (["Content-Type": "application/json; charset=utf-8"], "http://x.test/api/users", "users.json"),
            (["Content-Type": "text/html"], "http://x.test/", "index.html"),
            (["Content-Type": "application/octet-stream"], "http://x.test/resource?size=3", "resource.bin"),
            (["Content-Type": "application/x-unknown"], "http://x.test/blob", "blob"),
            ([:], "http://x.test", "index"),
            (["Content-Type": "text/plain"], "http://x.test/%2E%2E", "index.txt"),
            (["Content-Type": "text/plain"], "http://x.test/.hidden", "hidden.txt"),
            (["Content-Type": "text/plain"], "http://x.test/caf%C3%A9%20menu", "café menu.txt"),
        ] as [([String: String], String, String)])
    func suggestedName(headers: [String: String], url: String, expected: String) throws {
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(name: name, value: value) }
        #expect(DownloadName.suggested(headers: fields, url: try #require(URL(string: url))) == expected)
    }

    @Test("a taken name gets -1, -2, ...; a name whose .part exists counts as taken")
    func reserve() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sapi-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("mine".utf8).write(to: directory.appendingPathComponent("a.txt"))
        try Data("partial".utf8).write(to: directory.appendingPathComponent("a.txt-1.part"))
        #expect(try DownloadName.reserve("a.txt", in: directory).lastPathComponent == "a.txt-2")
        #expect(try DownloadName.reserve("a.txt", in: directory).lastPathComponent == "a.txt-3")
        #expect(try DownloadName.reserve("b.txt", in: directory).lastPathComponent == "b.txt")
        #expect(try Data(contentsOf: directory.appendingPathComponent("a.txt")) == Data("mine".utf8))
    }
}
