import Foundation
import ServerAPITestSupport
import Testing

@testable import SapiCommand

#if canImport(Glibc)
    import Glibc
#endif

/// `sapi ws://…`: the built binary against the WebSocket peer (Tests/Fixtures/ws_server.py), loading
/// bookworm-backports' libcurl 8.14 (`SAPI_LIBCURL_WS_DIR`) in place of the system's 7.88, except where a test says
/// it runs on the system's (the suite runs on both libcurls CI links).
@Suite("sapi: WebSockets end to end")
struct SapiWebSocketTests {
    /// The environment that makes `sapi` load the libcurl with WebSockets.
    static var withWebSockets: [String: String] {
        get throws { ["LD_LIBRARY_PATH": try TestServers.webSocketLibcurlDirectory()] }
    }

    /// A URL on the WebSocket peer.
    static func url(_ path: String, secure: Bool = false) throws -> String {
        (secure ? try TestServers.webSocketSecure() : try TestServers.webSocket()) + path
    }

    /// A new connection id, for the peer's `/report`.
    static func key() -> String { "sapi-" + UUID().uuidString.prefix(8).lowercased() }

    /// The close code and reason the peer received on the connection opened with `?id=KEY`, as `sapi` prints the
    /// peer's report: "1000 \n" for a close with 1000 and no reason.
    static func report(_ key: String) async throws -> String {
        let outcome = try await SapiProcess.run(["-I", try url("/report?of=\(key)")], environment: try withWebSockets)
        #expect(outcome.code == 0, "\(outcome.stderr)")
        return outcome.text
    }

    @Test(
        "piped lines go out one message each and their echoes print; the end of input closes with 1000, exit 0",
        arguments: [false, true])
    func echo(secure: Bool) async throws {
        let key = Self.key()
        var arguments = [try Self.url("/echo?id=\(key)", secure: secure), "--linger", "0"]
        if secure { arguments += ["--verify", try TestServers.h2CAFile().path] }
        let json = #"{"b": 1,  "a": [1, 2]}"#
        let outcome = try await SapiSession.run(arguments, environment: try Self.withWebSockets) { session in
            // Written before the connection is open: sapi reads standard input once it is.
            try session.send("hello")
            try await session.waitFor("the first echo") { stdout, _ in stdout == "hello\n" }
            try session.send("wörld 👋")
            try session.send("")
            try session.send(json)
            try await session.waitFor("four echoes") { stdout, _ in stdout.split(separator: "\n").count == 3 }
        }
        #expect(outcome.code == 0, "\(outcome.stderr)")
        // Piped: JSON as it came, an empty message as an empty line.
        #expect(outcome.text == "hello\nwörld 👋\n\n\(json)\n")
        let scheme = secure ? "wss" : "ws"
        let base = try Self.url("", secure: secure).replacingOccurrences(of: "\(scheme)://", with: "")
        #expect(
            outcome.stderr == "sapi: connected to \(scheme)://\(base)/echo?id=\(key)\nsapi: closed with 1000\n")
        #expect(try await Self.report(key) == "1000 \n")
    }

    @Test("permessage-deflate is offered, and the status line says when the server agreed; --no-deflate offers none")
    func deflate() async throws {
        let url = try TestServers.webSocketDeflate() + "/close?text=compressed%20hello"
        let agreed = try await SapiProcess.run(["-I", url], environment: try Self.withWebSockets)
        #expect(agreed.code == 0, "\(agreed.stderr)")
        #expect(agreed.text == "compressed hello\n")
        #expect(agreed.stderr.hasPrefix("sapi: connected to ws://"), "\(agreed.stderr)")
        #expect(agreed.stderr.contains("/close?text=compressed%20hello, permessage-deflate\n"), "\(agreed.stderr)")
        let declined = try await SapiProcess.run(["-I", "--no-deflate", url], environment: try Self.withWebSockets)
        #expect(declined.code == 0, "\(declined.stderr)")
        #expect(declined.text == "compressed hello\n")
        #expect(
            declined.stderr.contains("/close?text=compressed%20hello\nsapi: closed by the server: 1000\n"),
            "\(declined.stderr)")
        // The peer without compression declines the offer: nothing to say.
        let plain = try await SapiProcess.run(
            ["-I", try Self.url("/close?text=plain")], environment: try Self.withWebSockets)
        #expect(plain.text == "plain\n" && !plain.stderr.contains("deflate"), "\(plain.stderr)")
        let http = try await SapiProcess.run(["--offline", "--no-deflate", "http://127.0.0.1:1/"])
        #expect(http.code == 1 && http.stderr.contains("--no-deflate are for WebSockets"), "\(http.stderr)")
    }

    @Test("--proxy: through a SOCKS5 proxy, the server sees the proxy's address")
    func proxy() async throws {
        let outcome = try await SapiSession.run(
            ["--proxy", try TestServers.socks5(), try Self.url("/whoami"), "--linger", "0"],
            environment: try Self.withWebSockets
        ) { session in
            try await session.waitFor("the address") { stdout, _ in stdout.hasSuffix("\n") }
        }
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.text == "\(try TestServers.socks5Source())\n")
    }

    @Test("after piped input ends, what arrives within --linger is printed; SIGINT then closes with 1000, exit 130")
    func linger() async throws {
        let key = Self.key()
        // Standard input is a file: it ends at once, and the echoes arrive while sapi lingers.
        let started = try await SapiProcess.start(
            [try Self.url("/echo?id=\(key)"), "--linger", "600"], input: Data("late\nlater\n".utf8),
            environment: try Self.withWebSockets)
        do {
            try await poll("the echoes", within: .seconds(30), every: .milliseconds(20)) {
                String(decoding: try Data(contentsOf: started.1), as: UTF8.self) == "late\nlater\n"
            }
        } catch {
            started.0.terminate()
            let outcome = try await SapiProcess.finish(started)
            Issue.record("sapi printed:\n\(outcome.text)\nand on stderr:\n\(outcome.stderr)")
            throw error
        }
        #expect(kill(started.0.processIdentifier, SIGINT) == 0)
        let outcome = try await SapiProcess.finish(started)
        #expect(outcome.code == 130, "\(outcome.stderr)")
        #expect(outcome.stderr.hasSuffix("\nsapi: interrupted: closed with 1000\n"), "\(outcome.stderr)")
        #expect(try await Self.report(key) == "1000 \n")
    }

    @Test("--key-path prints the value in each JSON message as one line of JSON; the others are skipped")
    func keyPath() async throws {
        let outcome = try await SapiSession.run(
            [try Self.url("/echo"), "--key-path", "user.name", "--linger", "0"], environment: try Self.withWebSockets
        ) { session in
            try session.send(#"{"user":{"name":"Ada"}}"#)
            try session.send("not json")
            try session.send(#"{"other":true}"#)
            try session.send(#"{"user":{"name":{"last":"Hopper","first":"Grace"}}}"#)
            try await session.waitFor("two values") { stdout, _ in stdout.split(separator: "\n").count == 2 }
        }
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.text == "\"Ada\"\n{\"first\":\"Grace\",\"last\":\"Hopper\"}\n")
        #expect(outcome.stderr.contains(#"sapi: warning: message 2 is not JSON, skipped: "not json""#))

        // The server's one message has nothing at the key path: exit 9 once it closes.
        let missing = try await SapiProcess.run(
            ["-I", try Self.url("/close?text=%7B%22a%22%3A1%7D"), "--key-path", "b"],
            environment: try Self.withWebSockets)
        #expect(missing.code == 9, "\(missing.stderr)")
        #expect(missing.text.isEmpty)
        #expect(missing.stderr.contains("sapi: error: the key path found nothing in any message; in the last one: "))
    }

    @Test(
        "the server's close: its code and reason on stderr; 1000 and 1001 exit 0, another code is an error, exit 7",
        arguments: [(1000, Int32(0)), (1001, 0), (1008, 7), (4000, 7)])
    func serverClose(code: Int, exit: Int32) async throws {
        let outcome = try await SapiProcess.run(
            ["-I", try Self.url("/close?code=\(code)&reason=done%20here")], environment: try Self.withWebSockets)
        #expect(outcome.code == exit, "\(outcome.stderr)")
        #expect(outcome.text == "closing\n")
        if exit == 0 {
            #expect(outcome.stderr.hasSuffix("\nsapi: closed by the server: \(code) done here\n"), "\(outcome.stderr)")
        } else {
            #expect(
                outcome.stderr.contains(
                    "\nsapi: error: network: the server closed the WebSocket with \(code): done here [ws://"),
                "\(outcome.stderr)")
        }
    }

    @Test("failures exit with sapi's codes: a refused handshake 4, a dropped connection 7, a message too large 7")
    func failures() async throws {
        let environment = try Self.withWebSockets
        let refused = try await SapiProcess.run(["-I", try Self.url("/refuse/404")], environment: environment)
        #expect(refused.code == 4, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("sapi: error: HTTP status: the server answered 404 Not Found ["))

        let dropped = try await SapiProcess.run(["-I", try Self.url("/abrupt")], environment: environment)
        #expect(dropped.code == 7, "\(dropped.stderr)")
        #expect(dropped.text == "bye\n")
        #expect(dropped.stderr.contains("sapi: error: network: the server closed the connection without a close frame"))

        let big = try await SapiProcess.run(
            ["-I", try Self.url("/big?size=4096"), "--max-message-size", "1K"], environment: environment)
        #expect(big.code == 7, "\(big.stderr)")
        #expect(big.text.isEmpty)
        #expect(big.stderr.contains("sapi: error: response too large: "), "\(big.stderr)")
        #expect(big.stderr.contains("try: --max-message-size SIZE to receive larger messages"))
    }

    @Test("a 101 that does not prove the server read the key is exit 7, with nothing printed as received")
    func unprovenUpgrade() async throws {
        let environment = try Self.withWebSockets
        for route in ["ws-wrong-accept", "ws-no-accept", "ws-no-upgrade"] {
            let outcome = try await SapiProcess.run(
                ["-I", "--ws", "\(try SapiProcess.fixture)/raw/\(route)"], environment: environment)
            #expect(outcome.code == 7, "\(route): \(outcome.stderr)")
            #expect(outcome.text.isEmpty, "\(route): \(outcome.text)")
            #expect(
                outcome.stderr.hasPrefix("sapi: error: network: the WebSocket handshake's answer "), "\(outcome.stderr)"
            )
            #expect(!outcome.stderr.contains("connected"), "\(outcome.stderr)")
        }
    }

    @Test("--timeout bounds the handshake: a server that never answers is exit 2")
    func handshakeTimeout() async throws {
        let listener = try UnansweredListener()
        let outcome = try await SapiProcess.run(
            ["-I", "--timeout", "0.5", "ws://127.0.0.1:\(listener.port)/"], environment: try Self.withWebSockets)
        #expect(outcome.code == 2, "\(outcome.stderr)")
        #expect(outcome.stderr.hasPrefix("sapi: error: timed out: "), "\(outcome.stderr)")
    }

    @Test("the handshake carries the command line's headers, query items, credentials and subprotocols")
    func handshake() async throws {
        let outcome = try await SapiSession.run(
            [
                "--ws", try Self.url("/headers").replacingOccurrences(of: "ws://", with: "http://"), "X-Trace:42",
                "q==1", "-a", "ada:pw", "--subprotocol", "chat.v2,chat.v1", "--linger", "0",
            ], environment: try Self.withWebSockets
        ) { session in
            try await session.waitFor("the headers") { stdout, _ in stdout.hasSuffix("}\n") }
        }
        #expect(outcome.code == 0, "\(outcome.stderr)")
        let headers = try #require(
            try JSONSerialization.jsonObject(with: Data(outcome.text.utf8)) as? [String: String])
        #expect(headers["x-trace"] == "42")
        #expect(headers["authorization"] == "Basic " + Data("ada:pw".utf8).base64EncodedString())
        #expect(headers["sec-websocket-protocol"] == "chat.v2, chat.v1")
        #expect(outcome.stderr.hasPrefix("sapi: connected to ws://"))
        #expect(outcome.stderr.contains("/headers?q=1, subprotocol chat.v2\n"), "\(outcome.stderr)")
    }

    @Test("--har records the socket: its handshake and every message both ways")
    func har() async throws {
        let scratch = try Scratch()
        let har = scratch.file("ws.har")
        let outcome = try await SapiSession.run(
            ["--har", har.path, try Self.url("/echo"), "--linger", "0"], environment: try Self.withWebSockets
        ) { session in
            try session.send("recorded?")
            try await session.waitFor("the echo") { stdout, _ in stdout == "recorded?\n" }
        }
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.hasSuffix("sapi: closed with 1000\n"), "\(outcome.stderr)")
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: har)) as? [String: Any]
        let entries = (file?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        let entry = try #require(entries?.first)
        #expect((entry["response"] as? [String: Any])?["status"] as? Int == 101)
        let messages = entry["_webSocketMessages"] as? [[String: Any]] ?? []
        #expect(messages.map { $0["type"] as? String } == ["send", "receive"])
        #expect(messages.map { $0["data"] as? String } == ["recorded?", "recorded?"])
    }

    @Test("--offline prints the handshake and sends nothing")
    func offline() async throws {
        let outcome = try await SapiProcess.run(["--offline", "ws://x.test/chat", "X-A:1", "--subprotocol", "v1"])
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.text.hasPrefix("GET /chat HTTP/1.1\n"), "\(outcome.text)")
        #expect(outcome.text.contains("Host: x.test\n") && outcome.text.contains("Sec-WebSocket-Protocol: v1\n"))
        #expect(outcome.stderr.isEmpty)
    }

    @Test("on the system's libcurl (Debian 12's 7.88, without WebSockets of its own) a piped line echoes too, exit 0")
    func systemLibcurl() async throws {
        // No LD_LIBRARY_PATH: the transport needs no WebSocket support from libcurl, only its connection.
        let key = Self.key()
        let outcome = try await SapiSession.run(
            [try Self.url("/echo?id=\(key)"), "--linger", "0"], environment: ["LD_LIBRARY_PATH": ""]
        ) { session in
            try session.send("hello")
            try await session.waitFor("the echo") { stdout, _ in stdout == "hello\n" }
        }
        #expect(outcome.code == 0, "\(outcome.stderr)")
        #expect(outcome.text == "hello\n")
        #expect(try await Self.report(key) == "1000 \n")
    }

    // MARK: - In a terminal

    /// The command line that starts `sapi` on the libcurl with WebSockets, for `Terminal.run`.
    static func command(_ arguments: String) throws -> String {
        "LD_LIBRARY_PATH='\(try TestServers.webSocketLibcurlDirectory())' '\(try SapiProcess.binary.path)' \(arguments)"
    }

    @Test("in a terminal, a typed line is sent and its echo shows, JSON coloured; Ctrl-C closes with 1000, exit 130")
    func terminalInterrupt() async throws {
        let key = Self.key()
        let url = try Self.url("/echo?id=\(key)")
        try await Terminal.with { terminal in
            try await terminal.run(try Self.command("'\(url)'"))
            _ = try await terminal.waitFor { $0.contains("sapi: connected to \(url)") }
            try await terminal.type(#"{"greeting":"hello"}"#)
            try await terminal.press("Enter")
            // The terminal shows the line as typed, then its echo, coloured.
            _ = try await terminal.waitFor(escapes: true) { $0.contains("{\u{1B}[34m\"greeting\"") }
            try await terminal.press("C-c")
            let screen = try await terminal.waitForExit()
            #expect(screen.exitCode == 130, "\(screen.text)")
            #expect(screen.text.contains("sapi: interrupted: closed with 1000"), "\(screen.text)")
        }
        #expect(try await Self.report(key) == "1000 \n")
    }

    @Test("in a terminal, Ctrl-D ends the input: closed with 1000, exit 0")
    func terminalEndOfInput() async throws {
        let key = Self.key()
        try await Terminal.with { terminal in
            try await terminal.run(try Self.command("--linger 0 '\(try Self.url("/echo?id=\(key)"))'"))
            _ = try await terminal.waitFor { $0.contains("sapi: connected to ") }
            try await terminal.type("ping?")
            try await terminal.press("Enter")
            _ = try await terminal.waitFor { $0.split(separator: "\n").filter { $0 == "ping?" }.count == 2 }
            try await terminal.press("C-d")
            let screen = try await terminal.waitForExit()
            #expect(screen.exitCode == 0, "\(screen.text)")
            #expect(screen.text.contains("sapi: closed with 1000"), "\(screen.text)")
        }
        #expect(try await Self.report(key) == "1000 \n")
    }
}

/// A `sapi` whose standard input is a pipe the test writes to, a line at a time.
struct SapiSession {
    private let input = Pipe()
    private let started: (FixtureProcess, URL, URL)

    private init(_ arguments: [String], environment: [String: String]) async throws {
        started = try await SapiProcess.start(arguments, stdin: input, environment: environment)
    }

    /// Runs `sapi` with `arguments` while `body` talks to it, then ends its standard input and waits for its exit.
    static func run(
        _ arguments: [String], environment: [String: String], _ body: (SapiSession) async throws -> Void
    ) async throws -> SapiProcess.Outcome {
        let session = try await SapiSession(arguments, environment: environment)
        var failure: (any Error)?
        do { try await body(session) } catch { failure = error }
        try session.input.fileHandleForWriting.close()
        let outcome = try await SapiProcess.finish(session.started)
        if let failure {
            Issue.record("sapi printed:\n\(outcome.text)\nand on stderr:\n\(outcome.stderr)")
            throw failure
        }
        return outcome
    }

    /// Writes a line to `sapi`'s standard input.
    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits until what `sapi` wrote so far on standard output and standard error satisfies `condition`.
    func waitFor(_ what: String, _ condition: (_ stdout: String, _ stderr: String) -> Bool) async throws {
        try await poll(what, within: .seconds(30), every: .milliseconds(20)) {
            let stdout = String(decoding: try Data(contentsOf: started.1), as: UTF8.self)
            let stderr = String(decoding: try Data(contentsOf: started.2), as: UTF8.self)
            return condition(stdout, stderr)
        }
    }
}
