import ServerAPIKit
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sapi ws://…`, `sapi wss://…`, `sapi --ws URL`: opens a WebSocket through the composed manager, sends each line
/// of standard input as a text message, and prints each message received on a line of its own.
///
/// It ends when the server closes (exit 0 for 1000, 1001 or no code, else the close is reported as an error,
/// exit 7), when standard input ends (`--linger` later, closed with 1000, exit 0), on Ctrl-C (closed with 1000,
/// exit 130), or when the connection fails (the error's exit code). Status lines go to standard error, messages
/// to standard output, so that `sapi ws://… | jq` reads messages only.
final class WebSocketClient: Sendable {
    private struct State {
        var socket: WebSocket?
        /// Ctrl-C was pressed.
        var interrupted = false
        /// sapi started the close (standard input ended, Ctrl-C, or the reader of standard output left).
        var closing = false
    }

    let api: ServerAPI
    let options: Options
    let manager: ServerAPIManager
    let style: OutputStyle
    /// The letters of `--print`: `h` prints the handshake's response head, `b` the messages.
    let parts: Set<Character>
    private let state = Mutex(State())

    init(api: ServerAPI, options: Options, manager: ServerAPIManager, style: OutputStyle, parts: Set<Character>) {
        self.api = api
        self.options = options
        self.manager = manager
        self.style = style
        self.parts = parts
    }

    /// The connection's limits and keep-alive, from the command line.
    static func configuration(_ options: Options) -> WebSocket.Configuration {
        var configuration = WebSocket.Configuration()
        if let size = options.maxMessageSize { configuration.maxMessageSize = size }
        configuration.pingInterval = options.pingInterval.map { .milliseconds(Int64($0 * 1000)) }
        if !options.webSocketDeflate { configuration.compression = nil }
        return configuration
    }

    /// Opens the WebSocket, exchanges messages until it ends, and returns the exit code.
    func run() async -> ExitCode {
        signal(SIGPIPE, SIG_IGN)
        var printer = MessagePrinter(style: style, printsMessages: parts.contains("b"))
        let socket: WebSocket
        do {
            if let keyPath = options.keyPath {
                printer.selection.keyPath = try JSONKeyPath(parsing: keyPath)
                printer.hasKeyPath = true
            }
            socket = try await manager.webSocket(api, configuration: Self.configuration(options))
        } catch {
            var failure = ServerAPIError.wrap(error)
            failure.url = failure.url.map(Self.webSocketForm)
            Sapi.reportError(failure, webSocket: true)
            return ExitCode(failure)
        }
        let interrupted = state.withLock { state in
            state.socket = socket
            return state.interrupted
        }
        // Ctrl-C came as the handshake ended: the socket is closed as Ctrl-C closes an open one.
        if interrupted { close(socket) }
        var status = "sapi: connected to \(SecretRedaction.redact(Self.webSocketForm(socket.url)))"
        if let subprotocol = socket.subprotocol { status += ", subprotocol \(subprotocol)" }
        if socket.compression != nil { status += ", permessage-deflate" }
        Self.status(status)
        if parts.contains("h") {
            do {
                let head = Printer.head(status: 101, headers: socket.headers, version: "1.1", style: style)
                try StandardOutput.write(Data((head + "\n").utf8))
            } catch {
                return await finish(socket, after: error)
            }
        }
        let sender = Task { await self.send(to: socket) }
        defer { sender.cancel() }
        do {
            for try await message in socket.messages { try printer.print(message) }
        } catch {
            return await finish(socket, after: error)
        }
        return ended(socket, printer: printer)
    }

    /// Ctrl-C: closes an open WebSocket with 1000, or cancels the handshake. A second Ctrl-C, while the close
    /// waits for the server's, exits at once.
    func interrupt() {
        let (socket, again) = state.withLock { state in
            defer { state.interrupted = true }
            return (state.socket, state.interrupted)
        }
        if again {
            Self.status("sapi: interrupted")
            exit(ExitCode.interrupted.rawValue)
        }
        if let socket {
            close(socket)
        } else {
            _ = manager.cancel(id: api.id)
        }
    }

    // MARK: - Internals

    /// Starts the close (1000) sapi asks for; `messages` ends once the server answers, or the close times out.
    private func close(_ socket: WebSocket) {
        state.withLock { $0.closing = true }
        Task { await socket.close() }
    }

    /// Sends each line of standard input as a text message, in order, each once the one before is sent; at its
    /// end, waits `--linger` for the answers, then closes. With `--ignore-stdin`, sends nothing and never closes.
    private func send(to socket: WebSocket) async {
        guard !options.ignoreStdin else { return }
        let lines = StandardInputLines()
        while let line = await lines.next() {
            guard !Task.isCancelled else { return }
            do {
                try await socket.send(.text(line))
            } catch {
                // The connection ended: the reader of `messages` reports how.
                return
            }
        }
        if options.linger > 0 {
            do { try await Task.sleep(for: .milliseconds(Int64(options.linger * 1000))) } catch { return }
        }
        close(socket)
    }

    /// The end of `messages`: how it closed, and the exit code.
    private func ended(_ socket: WebSocket, printer: MessagePrinter) -> ExitCode {
        let (interrupted, closing) = state.withLock { ($0.interrupted, $0.closing) }
        let code = socket.closeCode
        let reason = socket.closeReason.flatMap { $0.isEmpty ? nil : $0 }
        if interrupted {
            Self.status("sapi: interrupted: closed with 1000")
            return .interrupted
        }
        if closing {
            Self.status("sapi: closed with 1000" + (code == nil ? " (the server did not answer)" : ""))
        } else if let code, code != .normalClosure, code != .goingAway {
            var message = "the server closed the WebSocket with \(code)"
            if let reason { message += ": \(reason)" }
            let failure = ServerAPIError(.network, message, requestID: api.id, url: Self.webSocketForm(socket.url))
            Sapi.reportError(failure, webSocket: true)
            return ExitCode(failure)
        } else {
            let said = code.map { "\($0)" + (reason.map { " " + $0 } ?? "") } ?? "without a code"
            Self.status("sapi: closed by the server: \(said)")
        }
        if let failure = printer.selection.failure(items: "message", data: "message") {
            Sapi.reportError(failure, webSocket: true)
            return ExitCode(failure)
        }
        return .ok
    }

    /// The end of a WebSocket that failed, or whose output did: the reader of standard output leaving (`| head`)
    /// closes it with 1000 and exits 0.
    private func finish(_ socket: WebSocket, after error: any Error) async -> ExitCode {
        if let code = Sapi.outputFailure(error) {
            state.withLock { $0.closing = true }
            await socket.close()
            return ExitCode(rawValue: code) ?? .usage
        }
        var failure = ServerAPIError.wrap(error)
        failure.url = failure.url.map(Self.webSocketForm)
        if failure.kind == .cancelled, state.withLock({ $0.interrupted }) {
            Self.status("sapi: interrupted")
            return .interrupted
        }
        Sapi.reportError(failure, webSocket: true)
        return ExitCode(failure)
    }

    /// A line on standard error.
    private static func status(_ line: String) {
        StandardError.write(line + "\n")
    }

    /// The connection's URL as a WebSocket's (`ws://`, `wss://`): the handshake is sent to its `http(s)://` form.
    static func webSocketForm(_ url: URL) -> URL {
        WebSocketHandshakeRule.webSocketForm(of: url.absoluteString).flatMap(URL.init(string:)) ?? url
    }
}
