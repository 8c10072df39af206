import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import SapiCommand

#if canImport(Glibc)
    import Glibc
#endif

/// `sapi -a/-A`, the password prompt, `.netrc`, and credentials on redirects, against httpbin.
@Suite("sapi auth")
struct SapiAuthTests {
    static let backends = ["curl", "urlsession"]

    /// A home without a `.netrc`, so that the machine's own cannot answer for a test.
    static let noNetrc = ["NETRC": "/nonexistent/netrc"]

    @Test("-a user:pass answers httpbin's basic auth; a wrong password is its 401", arguments: backends)
    func basic(backend: String) async throws {
        let ok = try await SapiProcess.run(
            ["--backend", backend, "-a", "u:p", "\(try SapiProcess.httpbin)/basic-auth/u/p"], environment: Self.noNetrc)
        #expect(ok.code == 0, "\(ok.stderr)")
        #expect((ok.json as? [String: Any])?["authenticated"] as? Bool == true)
        let wrong = try await SapiProcess.run(
            ["--backend", backend, "--check-status", "-a", "u:x", "\(try SapiProcess.httpbin)/basic-auth/u/p"],
            environment: Self.noNetrc)
        #expect(wrong.code == 4)
    }

    @Test("an empty password (user:) is sent as it is, without a prompt", arguments: backends)
    func emptyPassword(backend: String) async throws {
        let outcome = try await SapiProcess.run(
            [
                "--backend", backend, "-a", "u:", "\(try SapiProcess.httpbin)/headers", "--key-path",
                "headers.Authorization",
            ],
            environment: Self.noNetrc)
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.json as? String == "Basic " + Data("u:".utf8).base64EncodedString())
    }

    @Test("-A bearer -a TOKEN sends the token", arguments: backends)
    func bearer(backend: String) async throws {
        let outcome = try await SapiProcess.run(
            ["--backend", backend, "-A", "bearer", "-a", "tok3n", "\(try SapiProcess.httpbin)/bearer"],
            environment: Self.noNetrc)
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect((outcome.json as? [String: Any])?["token"] as? String == "tok3n")
    }

    @Test("-A digest answers the challenge with curl")
    func digestCurl() async throws {
        let outcome = try await SapiProcess.run(
            ["-A", "digest", "-a", "u:p", "\(try SapiProcess.httpbin)/digest-auth/auth/u/p"], environment: Self.noNetrc)
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect((outcome.json as? [String: Any])?["authenticated"] as? Bool == true)
    }

    @Test("-A digest with the urlsession backend is a usage error that names the way out")
    func digestURLSession() async throws {
        let outcome = try await SapiProcess.run(
            [
                "--backend", "urlsession", "-A", "digest", "-a", "u:p",
                "\(try SapiProcess.httpbin)/digest-auth/auth/u/p",
            ],
            environment: Self.noNetrc)
        #expect(outcome.code == 1)
        #expect(outcome.stderr.contains("sapi: error: URLSessionTransport cannot answer digest"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("try: --backend curl"))
    }

    @Test("bad auth options are usage errors")
    func usage() throws {
        #expect(throws: UsageError.self) { try Options.parse(["-A", "ntlm", "-a", "u:p", "x.test"]) }
        #expect(throws: UsageError.self) { try Options.parse(["-A", "bearer", "x.test"]) }
        let options = try Options.parse(["-A", "Digest", "--auth=u:p", "x.test"])
        #expect(options.authType == .digest)
        #expect(options.auth == "u:p")
        #expect(Options.helpText.contains("--auth-type, -A basic|bearer|digest"))
        #expect(Options.helpText.contains("--session-read-only NAME|PATH"))
        #expect(Options.helpText.contains("--ignore-netrc"))
    }

    @Test("-a user with stdin not a terminal fails at once with a usage error instead of waiting")
    func noTerminal() async throws {
        let outcome = try await SapiProcess.run(
            ["-a", "u", "\(try SapiProcess.httpbin)/basic-auth/u/p"], environment: Self.noNetrc)
        #expect(outcome.code == 1)
        #expect(outcome.stderr.contains("no password for u@127.0.0.1"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("stdin is not a terminal"))
        #expect(outcome.stdout.isEmpty)
    }

    @Test("-a user asks for the password on the terminal without showing it")
    func prompt() async throws {
        let httpbin = try SapiProcess.httpbin
        try await Terminal.with { terminal in
            try await terminal.run(
                "NETRC=/nonexistent \(try SapiProcess.binary.path) -a u '\(httpbin)/basic-auth/u/hunter22'")
            _ = try await terminal.waitFor { $0.contains("sapi: password for u@127.0.0.1:") }
            try await terminal.type("hunter22")
            try await terminal.press("Enter")
            let screen = try await terminal.waitForExit()
            #expect(screen.exitCode == 0, "\(screen.text)")
            #expect(screen.text.contains("\"authenticated\""), "\(screen.text)")
            // The command line shows the URL's path (which holds the password too): look at the prompt's line.
            let promptLine = screen.text.split(separator: "\n").first { $0.contains("sapi: password for") }
            #expect(promptLine.map { !$0.contains("hunter22") } == true, "\(screen.text)")
            #expect(screen.text.components(separatedBy: "hunter22").count == 2, "typed once, shown only in the URL")
        }
    }

    @Test("Ctrl-C at the password prompt exits 130 and gives the terminal its echo back")
    func promptInterrupted() async throws {
        let httpbin = try SapiProcess.httpbin
        try await Terminal.with { terminal in
            try await terminal.run("\(try SapiProcess.binary.path) -a u '\(httpbin)/basic-auth/u/p'")
            _ = try await terminal.waitFor { $0.contains("sapi: password for u@") }
            try await terminal.type("abc")
            try await terminal.press("C-c")
            let screen = try await terminal.waitForExit()
            #expect(screen.exitCode == 130, "\(screen.text)")
            #expect(!screen.text.contains("abc"))
            // Both flags on again: the line says FLAGS=2 (the command line itself shows no such line).
            try await terminal.run("clear; stty -a | tr ' ;' '\\n\\n' | grep -cx -e echo -e icanon | sed 's/^/FLAGS=/'")
            let settings = try await terminal.waitFor { text in
                text.split(separator: "\n").contains { $0.hasPrefix("FLAGS=") }
            }
            #expect(settings.split(separator: "\n").contains("FLAGS=2"), "\(settings)")
        }
    }

    @Test("SIGTERM at the password prompt gives the terminal its echo back before the process ends")
    func promptTerminated() async throws {
        let httpbin = try SapiProcess.httpbin
        try await Terminal.with { terminal in
            // The shell prints its pid, then becomes sapi: the test signals that pid.
            try await terminal.run(
                "sh -c 'echo PID=$$; exec \(try SapiProcess.binary.path) -a u \"$0\"' '\(httpbin)/basic-auth/u/p'")
            let prompt = try await terminal.waitFor { $0.contains("sapi: password for u@") }
            let pidLine = try #require(prompt.split(separator: "\n").first { $0.hasPrefix("PID=") })
            let pid = try #require(pid_t(pidLine.dropFirst(4)))
            #expect(kill(pid, SIGTERM) == 0)
            let screen = try await terminal.waitForExit()
            #expect(screen.exitCode == 143, "\(screen.text)")
            try await terminal.run("clear; stty -a | tr ' ;' '\\n\\n' | grep -cx -e echo -e icanon | sed 's/^/FLAGS=/'")
            let settings = try await terminal.waitFor { text in
                text.split(separator: "\n").contains { $0.hasPrefix("FLAGS=") }
            }
            #expect(settings.split(separator: "\n").contains("FLAGS=2"), "\(settings)")
        }
    }

    // MARK: - .netrc

    @Test(".netrc gives basic auth for its host only; --ignore-netrc leaves it out", arguments: backends)
    func netrc(backend: String) async throws {
        let scratch = try Scratch()
        let file = scratch.file("netrc")
        try Data("machine 127.0.0.1 login u password p\nmachine other.test login x password y\n".utf8).write(to: file)
        let environment = ["NETRC": file.path]
        let httpbin = try SapiProcess.httpbin
        let used = try await SapiProcess.run(
            ["--backend", backend, "--check-status", "\(httpbin)/basic-auth/u/p"], environment: environment)
        #expect(used.code == 0, "\(used.stderr)")
        #expect((used.json as? [String: Any])?["authenticated"] as? Bool == true)
        let ignored = try await SapiProcess.run(
            ["--backend", backend, "--ignore-netrc", "--check-status", "\(httpbin)/basic-auth/u/p"],
            environment: environment)
        #expect(ignored.code == 4)
        // -a wins over .netrc.
        let given = try await SapiProcess.run(
            ["--backend", backend, "-a", "v:w", "\(httpbin)/headers", "--key-path", "headers.Authorization"],
            environment: environment)
        #expect(given.json as? String == "Basic " + Data("v:w".utf8).base64EncodedString())
        // Another host's entry is not used: localhost is not 127.0.0.1 in the file.
        let otherHost = try await SapiProcess.run(
            [
                "--backend", backend, httpbin.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/headers",
                "--key-path", "headers",
            ], environment: environment)
        #expect(otherHost.code == 0, "\(otherHost.stderr)")
        #expect((otherHost.json as? [String: String])?["Authorization"] == nil)
    }

    @Test(".netrc from HOME when NETRC is not set")
    func netrcInHome() async throws {
        let home = try Scratch()
        try Data("default login d password e\n".utf8).write(to: home.file(".netrc"))
        let outcome = try await SapiProcess.run(
            ["\(try SapiProcess.httpbin)/basic-auth/d/e"], environment: ["HOME": home.folder.path, "NETRC": ""])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect((outcome.json as? [String: Any])?["authenticated"] as? Bool == true)
    }

    // MARK: - Redirects

    @Test("credentials are not sent to another host on a redirect", arguments: backends)
    func crossHostRedirect(backend: String) async throws {
        let httpbin = try SapiProcess.httpbin
        let other = httpbin.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/headers"
        let query = other.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        for auth in [["-a", "u:p"], ["-A", "bearer", "-a", "t"]] {
            let outcome = try await SapiProcess.run(
                ["--backend", backend] + auth + ["\(httpbin)/redirect-to?url=\(query)", "--key-path", "headers"],
                environment: Self.noNetrc)
            #expect(outcome.code == 0, "\(outcome.stderr)")
            let received = try #require(outcome.json as? [String: String])
            #expect(received["Host"]?.hasPrefix("localhost") == true)
            #expect(received["Authorization"] == nil, "\(received)")
        }
        // On the same host, they are.
        let same = try await SapiProcess.run(
            [
                "--backend", backend, "-a", "u:p", "\(httpbin)/redirect-to?url=%2Fheaders", "--key-path",
                "headers.Authorization",
            ],
            environment: Self.noNetrc)
        #expect(same.json as? String == "Basic " + Data("u:p".utf8).base64EncodedString())
    }

    @Test("Digest credentials are not sent to another host on a redirect (curl)")
    func digestCrossHostRedirect() async throws {
        let httpbin = try SapiProcess.httpbin
        let other = httpbin.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/digest-auth/auth/u/p"
        let query = other.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let crossed = try await SapiProcess.run(
            ["--check-status", "-A", "digest", "-a", "u:p", "\(httpbin)/redirect-to?url=\(query)"],
            environment: Self.noNetrc)
        #expect(crossed.code == 4, "\(crossed.stderr)")
        let same = try await SapiProcess.run(
            [
                "--check-status", "-A", "digest", "-a", "u:p",
                "\(httpbin)/redirect-to?url=%2Fdigest-auth%2Fauth%2Fu%2Fp",
            ],
            environment: Self.noNetrc)
        #expect(same.code == 0, "\(same.stderr)")
    }
}
