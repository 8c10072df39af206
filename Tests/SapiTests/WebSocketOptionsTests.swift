import Foundation
import ServerAPIKit
import Testing

@testable import SapiCommand

@Suite("sapi: parsing a WebSocket's command line")
struct WebSocketOptionsTests {
    @Test("ws:// and wss:// URLs open a WebSocket, and --ws upgrades an http(s) one; other URLs do not")
    func webSocketURLs() throws {
        #expect(try Options.parse(["ws://x.test/chat"]).webSocket)
        #expect(try Options.parse(["WSS://x.test/chat"]).webSocket)
        #expect(try Options.parse(["--ws", "https://x.test/chat"]).webSocket)
        #expect(try Options.parse(["--websocket", ":8080/chat"]).webSocket)
        #expect(try !Options.parse(["https://x.test/chat"]).webSocket)
        #expect(try !Options.parse(["x.test/ws://a"]).webSocket)

        let api = try RequestBuilder.build(Options.parse(["wss://x.test/chat", "q==1", "X-Trace:42"]))
        #expect(api.url?.absoluteString == "wss://x.test/chat")
        #expect(api.method == .get)
        #expect(api.query.map(\.name) == ["q"] && api.headers["X-Trace"] == "42")
        let upgraded = try RequestBuilder.build(Options.parse(["--ws", ":8080/chat"]))
        #expect(upgraded.url?.absoluteString == "http://localhost:8080/chat")
        // A ws:// URL is no http(s) call's: without a WebSocket, such a scheme is refused as before.
        #expect(throws: UsageError.self) { try RequestBuilder.build(Options.parse(["--ws", "ftp://x.test/a"])) }
    }

    @Test("a WebSocket prints its messages only, on a terminal too; -v and -p still choose")
    func printed() throws {
        #expect(try Options.parse(["ws://x.test"]).printed(terminal: true) == ["b"])
        #expect(try Options.parse(["ws://x.test"]).printed(terminal: false) == ["b"])
        #expect(try Options.parse(["-v", "ws://x.test"]).printed(terminal: true) == ["H", "B", "h", "b"])
        #expect(try Options.parse(["-p", "hb", "ws://x.test"]).printed(terminal: false) == ["h", "b"])
    }

    @Test("--subprotocol offers Sec-WebSocket-Protocol in the order given, repeated or as a list")
    func subprotocols() throws {
        let repeated = try Options.parse(["--subprotocol", "chat.v2", "ws://x.test", "--subprotocol", "chat.v1"])
        #expect(repeated.subprotocols == ["chat.v2", "chat.v1"])
        #expect(try RequestBuilder.build(repeated).headers["Sec-WebSocket-Protocol"] == "chat.v2, chat.v1")
        let listed = try Options.parse(["ws://x.test", "--subprotocol=graphql-transport-ws, graphql-ws"])
        #expect(listed.subprotocols == ["graphql-transport-ws", "graphql-ws"])
        #expect(try RequestBuilder.build(Options.parse(["ws://x.test"])).headers["Sec-WebSocket-Protocol"] == nil)
        for bad in ["", ",", "chat v2", "chat/2", "chät"] {
            let error = #expect(throws: UsageError.self) { try Options.parse(["ws://x.test", "--subprotocol", bad]) }
            #expect(error?.message.hasPrefix("--subprotocol needs subprotocol names") == true, "\(bad)")
        }
    }

    @Test("--max-message-size, --ping-interval and --linger make the connection's configuration")
    func configuration() throws {
        let options = try Options.parse([
            "ws://x.test", "--max-message-size", "1K", "--ping-interval", "2.5", "--linger", "0",
        ])
        #expect(options.maxMessageSize == 1024 && options.pingInterval == 2.5 && options.linger == 0)
        let configuration = WebSocketClient.configuration(options)
        #expect(configuration.maxMessageSize == 1024)
        #expect(configuration.pingInterval == .milliseconds(2500))
        let defaults = WebSocketClient.configuration(try Options.parse(["ws://x.test"]))
        #expect(defaults == WebSocket.Configuration())
        #expect(try Options.parse(["ws://x.test"]).linger == 1)
        for bad in [
            ["--max-message-size", "0"], ["--max-message-size", "lots"], ["--ping-interval", "0"],
            ["--ping-interval", "-1"], ["--ping-interval", "inf"], ["--linger", "-1"], ["--linger", "soon"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try Options.parse(["ws://x.test"] + bad) }
        }
    }

    @Test("the WebSocket options without a WebSocket are usage errors")
    func withoutWebSocket() {
        for options in [
            ["--subprotocol", "chat"], ["--max-message-size", "1M"], ["--ping-interval", "5"], ["--linger", "2"],
        ] {
            let error = #expect(throws: UsageError.self, "\(options)") { try Options.parse(["x.test"] + options) }
            #expect(error?.hint == "a ws:// or wss:// URL, or --ws for an http(s) URL")
        }
    }

    @Test(
        "what a WebSocket's handshake cannot take is refused, not ignored",
        arguments: [
            ["POST", "ws://x.test"], ["ws://x.test", "a=1"], ["ws://x.test", "n:=1"], ["ws://x.test", "--raw", "hi"],
            ["-d", "ws://x.test"], ["-S", "ws://x.test"], ["--cache", "memory", "ws://x.test"],
            ["--envelope", "ws://x.test"], ["--retry", "2", "ws://x.test"],
            ["--unix-socket", "/tmp/s", "ws://x.test"], ["--http-version", "2", "ws://x.test"],
            ["--stall-timeout", "10/5", "ws://x.test"], ["-A", "digest", "-a", "u:p", "ws://x.test"],
        ])
    func refused(arguments: [String]) {
        let error = #expect(throws: UsageError.self) { try Options.parse(arguments) }
        #expect(error?.hint?.hasPrefix("sapi ws://HOST/PATH") == true, "\(error?.message ?? "")")
    }

    @Test("the help describes WebSockets and their options")
    func help() {
        let help = Options.helpText
        #expect(help.contains("WebSockets (ws://, wss://, or --ws for an http(s) URL):"))
        for name in ["--ws", "--subprotocol", "--max-message-size", "--ping-interval", "--linger"] {
            #expect(help.contains("\n  \(name)"))
        }
    }
}

@Suite("sapi: printing a WebSocket's messages")
struct MessagePrinterTests {
    typealias Output = StreamPrinterTests.Output

    private func printed(_ messages: [WebSocketMessage], keyPath: String? = nil, colors: Bool = false) throws
        -> (Output, ServerAPIError?)
    {
        let output = Output()
        let style = OutputStyle.resolve(pretty: nil, sorted: nil, theme: nil, terminal: colors, environment: [:])
        var printer = MessagePrinter(style: style, printsMessages: true)
        if let keyPath {
            printer.selection.keyPath = try JSONKeyPath(parsing: keyPath)
            printer.hasKeyPath = true
        }
        printer.write = { output.stdout.append($0) }
        printer.warn = { output.stderr.append($0) }
        for message in messages { try printer.print(message) }
        return (output, printer.selection.failure(items: "message", data: "message"))
    }

    @Test("each text message is one line, as it came; a binary one is a line on stderr with its size")
    func plain() throws {
        let (output, failure) = try printed([
            .text("hello"), .text(#"{"b": 1,  "a": 2}"#), .binary(Data([0, 1, 2])), .text(""), .text("two\nlines"),
        ])
        #expect(output.text == "hello\n{\"b\": 1,  \"a\": 2}\n\ntwo\nlines\n")
        #expect(output.stderr == ["sapi: message 3 is binary, 3 bytes: not printed"])
        #expect(failure == nil)
    }

    @Test("on a terminal, a JSON message is coloured on its one line; other text is not")
    func coloured() throws {
        let (output, _) = try printed([.text(#"{"a":[1,true]}"#), .text("plain [1]")], colors: true)
        let palette = OutputStyle.Theme.dark.palette
        let reset = OutputStyle.Palette.reset
        #expect(
            output.text
                == "{\(palette.key)\"a\"\(reset):[\(palette.number)1\(reset),\(palette.literal)true\(reset)]}\nplain [1]\n"
        )
    }

    @Test("--key-path prints each JSON message's value as one line of JSON and skips the rest")
    func keyPath() throws {
        let (output, failure) = try printed(
            [
                .text(#"{"user":{"name":"Ada"}}"#), .text("not json"), .text(#"{"other":1}"#),
                .text(#"{"user":{"name":{"last":"Hopper","first":"Grace"}}}"#), .binary(Data([1])),
            ], keyPath: "user.name")
        #expect(output.text == "\"Ada\"\n{\"first\":\"Grace\",\"last\":\"Hopper\"}\n")
        #expect(
            output.stderr == [
                #"sapi: warning: message 2 is not JSON, skipped: "not json""#,
                "sapi: message 5 is binary, 1 byte: not printed",
            ])
        #expect(failure == nil)
    }

    @Test("a key path that found nothing in any message is a decoding failure (exit 9)")
    func keyPathFoundNothing() throws {
        let (output, missed) = try printed([.text(#"{"a":1}"#), .text(#"{"a":2}"#)], keyPath: "b")
        #expect(output.text.isEmpty)
        #expect(missed?.kind == .decoding)
        #expect(missed?.message.hasPrefix("the key path found nothing in any message; in the last one: ") == true)
        #expect(missed.map(ExitCode.init) == .decoding)

        let (_, notJSON) = try printed([.text("a"), .text("b")], keyPath: "b")
        #expect(notJSON?.message == "no message was JSON for the key path b")
        let (_, nothing) = try printed([], keyPath: "b")
        #expect(nothing == nil, "no message: nothing to report")
    }
}
