import Dispatch
import ServerAPIKit

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

/// The `sapi` command: parse, send, print, and exit with a documented code.
package enum Sapi {
    static let version = "0.1.0"

    /// Runs the command and returns its exit code.
    /// - Parameters:
    ///   - arguments: The command line, without the executable's name.
    ///   - features: `sapi-full`'s; nil in the lean `sapi`, which runs `sapi-full` in its place for a command that
    ///     needs them.
    package static func main(_ arguments: [String], features: (any FoundationFeatures)?) async -> Int32 {
        // Ctrl-C must never kill the process mid-write: it is turned into a cancellation below.
        Interrupt.install()
        // Only the variables sapi reads: building the whole environment costs more at start-up than the call.
        let environment = Self.environment(["NO_COLOR", "SAPI_CONFIG_DIR", "XDG_CONFIG_HOME", "HOME"])
        let options: Options
        var api: ServerAPI
        let session: SessionFile?
        let commandLineAuth: AuthSetting?
        do {
            options = try Options.parse(try Config.defaultOptions(environment: environment) + arguments)
            if options.showHelp {
                print(Options.helpText)
                return ExitCode.ok.rawValue
            }
            if options.showVersion {
                print("sapi \(version)")
                return ExitCode.ok.rawValue
            }
            if features == nil, options.needsFoundationFeatures {
                // Before standard input is read or a password asked for: `sapi-full` does both itself.
                return FullBuild.exec(arguments, reason: options.foundationFeaturesReason)
            }
            api = try RequestBuilder.build(options, stdin: readStandardInput(options))
            (session, commandLineAuth) = try authorize(&api, options: options, features: features)
        } catch PasswordPrompt.Failure.interrupted {
            StandardError.write("sapi: interrupted\n")
            return ExitCode.interrupted.rawValue
        } catch {
            report(error)
            return ExitCode.usage.rawValue
        }
        if let output = options.output, !options.download {
            // httpie's --output without --download: what would be printed goes into the file.
            do throws(UsageError) { try redirectStandardOutput(to: output) } catch {
                report(error)
                return ExitCode.usage.rawValue
            }
        }
        let terminalOut = isatty(1) != 0
        let style = OutputStyle.resolve(
            pretty: options.pretty, sorted: options.sorted, theme: options.style, terminal: terminalOut,
            environment: environment)
        let parts = options.printed(terminal: terminalOut)
        var plugins: [any ServerAPIPlugin] = []
        if parts.contains("H") || parts.contains("B") {
            plugins.append(
                RequestPrinter(
                    parts: parts, style: style, terminal: terminalOut, showCredentials: options.showCredentials,
                    version: options.httpVersion == .http2PriorKnowledge ? "HTTP/2" : "HTTP/1.1"))
        }
        let cookies = session?.makeCookieStorage()
        let composed: Composition
        do {
            composed = try Composition(options, plugins: plugins, cookies: cookies, features: features)
        } catch let error as UsageError {
            report(error)
            return ExitCode.usage.rawValue
        } catch {
            // Reading the --replay file is what throws a ServerAPIError here: its exit code is its kind's (9 for a
            // file that is not a HAR archive a replay can use), and what to try is about the file, not a response.
            let failure = ServerAPIError.wrap(error)
            reportError(failure, hint: options.replay == nil ? nil : features?.replayHint)
            return ExitCode(failure).rawValue
        }
        if options.offline {
            // The request printer runs as the call is handed to the offline transport, which sends nothing.
            do {
                if options.webSocket {
                    _ = try await composed.manager.webSocket(api)
                } else {
                    _ = try await composed.manager.send(api)
                }
            } catch {
                let failure = ServerAPIError.wrap(error)
                guard failure.underlying is OfflineTransport.NotSent else {
                    reportError(failure)
                    return ExitCode(failure).rawValue
                }
            }
            return ExitCode.ok.rawValue
        }
        let bar = isatty(2) != 0 && (options.download || !api.body.isEmpty) ? ProgressBar() : nil
        let printer = Printer(
            options: options, formatter: composed.formatter, style: style, parts: parts, terminal: terminalOut)

        let progress: (@Sendable (TransferProgress) -> Void)?
        if let bar { progress = { bar.update($0) } } else { progress = nil }
        if options.stream {
            // A reader that leaves (`sapi -S URL | head -1`) ends the stream quietly, whatever the backend.
            signal(SIGPIPE, SIG_IGN)
        }
        let webSocket =
            options.webSocket
            ? WebSocketClient(api: api, options: options, manager: composed.manager, style: style, parts: parts) : nil
        // A call whose response is printed once it has arrived, or as it arrives, runs on the curl transport's loop
        // thread: its transfer, the manager's steps and the printing then need no hand-off between threads. A WebSocket,
        // a stream of events and a download stay off the loop, whose transfers would wait while they write.
        let onLoop = webSocket == nil && !options.stream && !options.download
        let task = Task(executorPreference: onLoop ? composed.executor : nil) { () async -> Int32 in
            if let webSocket { return await webSocket.run().rawValue }
            if options.stream {
                return await stream(
                    api, options: options, manager: composed.manager, style: style, parts: parts, terminal: terminalOut,
                    bar: bar)
            }
            if options.download {
                return await Download(api: api, options: options, manager: composed.manager, bar: bar, style: style)
                    .run().rawValue
            }
            if Printer.streams(options) {
                return await printStreamed(
                    api, printer: printer, manager: composed.manager, progress: progress, bar: bar)
            }
            var code = ExitCode.ok
            do {
                var results = 0
                for try await result in composed.manager.updates(api, progress: progress) {
                    bar?.finish()
                    code = try printer.print(result, api: api)
                    results += 1
                }
                // A stream whose consumer is cancelled ends without an error: that is an interrupt.
                if Task.isCancelled || results == 0 { throw ServerAPIError.cancelled() }
            } catch {
                bar?.finish()
                let failure = ServerAPIError.wrap(error)
                reportError(failure)
                return ExitCode(failure).rawValue
            }
            return code.rawValue
        }
        // Ctrl-C cancels the request cleanly; a partial download stays for --continue; a WebSocket is closed (1000).
        let interrupt = Interrupt.onInterrupt {
            if let webSocket { webSocket.interrupt() } else { task.cancel() }
        }
        let code = await task.value
        interrupt?.cancel()
        if let session, let cookies, !options.sessionReadOnly {
            save(session, options: options, auth: commandLineAuth, cookies: cookies.allCookies)
        }
        // Every call has ended: the transport's threads are joined before `exit` runs the libraries' exit handlers
        // (OpenSSL's frees its state), so that no loop still closing a connection uses what they free.
        await composed.manager.shutdown(gracePeriod: .zero)
        return code
    }

    /// A call whose body is printed as it arrives (see `Printer.streams`): the body goes to standard output
    /// in bounded memory, unless it must be formatted (then up to `--max-body-size`).
    static func printStreamed(
        _ api: ServerAPI, printer: Printer, manager: ServerAPIManager,
        progress: (@Sendable (TransferProgress) -> Void)?, bar: ProgressBar?
    ) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        do throws(any Error) {
            let response = try await manager.stream(api, progress: progress)
            bar?.finish()
            return try await printer.print(response, timeout: api.timeout).rawValue
        } catch {
            if let code = outputFailure(error) { return code }
            bar?.finish()
            let failure = ServerAPIError.wrap(error)
            reportError(failure)
            return ExitCode(failure).rawValue
        }
    }

    /// The exit code of a failure to write standard output while a body is printed as it arrives: 0 when the
    /// reader went away (`| head`), `usage` with a line on standard error for another write error; `nil` for any
    /// other error.
    static func outputFailure(_ error: any Error) -> Int32? {
        switch error as? StandardOutput.Failure {
        case .closed: return ExitCode.ok.rawValue
        case .failed(let number):
            StandardError.write("sapi: error: cannot write the output: \(String(cString: strerror(number)))\n")
            return ExitCode.usage.rawValue
        case nil: return nil
        }
    }

    /// Applies the credentials and the `--session` to the call: `-a` (asking for a left-out password),
    /// else the session's auth, else the URL's user-info (which the library sends as basic auth), else
    /// `.netrc` (unless `--ignore-netrc`); then the session's headers.
    /// - Returns: The session as read, and the command line's credentials (which the session then keeps).
    static func authorize(
        _ api: inout ServerAPI, options: Options, features: (any FoundationFeatures)?
    ) throws -> (SessionFile?, AuthSetting?) {
        let url = api.url ?? URL(fileURLWithPath: "/")
        let session = try options.session.map { name in
            try SessionFile.load(Composition.sessionFile(name, url: RequestBuilder.expandURL(options.url)))
        }
        let commandLine = try AuthSetting.fromCommandLine(options, url: url, askPassword: PasswordPrompt.ask)
        if let session {
            api = session.apply(to: api, commandLineHeaders: options.headerItems.map(\.0))
        }
        if let auth = commandLine ?? session?.auth {
            api = auth.apply(to: api)
            if let credentials = api.credentials {
                try Composition.checkCredentials(credentials, options, features: features)
            }
        } else if !options.ignoreNetrc, !api.headers.contains("Authorization"), url.user == nil,
            let host = url.host,
            let (login, password) = Netrc.load(environment: Self.environment(["NETRC", "HOME"]))?
                .credentials(for: host)
        {
            api = api.basicAuth(user: login, password: password)
        }
        return (session, commandLine)
    }

    /// Writes the session back when the call changed it; a failure to write is a warning.
    static func save(_ session: SessionFile, options: Options, auth: AuthSetting?, cookies: [Cookie]) {
        let next = session.updated(headers: options.headerItems, auth: auth, cookies: cookies)
        guard session.needsSaving(next) else { return }
        do {
            try next.save()
        } catch let error as PrivateFile.Failure {
            StandardError.write("sapi: warning: the session was not saved to \(error)\n")
        } catch {
            StandardError.write("sapi: warning: the session was not saved: \(error)\n")
        }
    }

    /// `--stream`: prints the response as it arrives and returns the exit code.
    static func stream(
        _ api: ServerAPI, options: Options, manager: ServerAPIManager, style: OutputStyle, parts: Set<Character>,
        terminal: Bool, bar: ProgressBar?
    ) async -> Int32 {
        var printer = StreamPrinter(style: style, terminal: terminal)
        let progress: (@Sendable (TransferProgress) -> Void)?
        if let bar { progress = { bar.update($0) } } else { progress = nil }
        do throws(any Error) {
            if let keyPath = options.keyPath { printer.keyPath = try JSONKeyPath(parsing: keyPath) }
            let response = try await manager.stream(api, progress: progress)
            bar?.finish()
            var code = ExitCode.ok
            // A --timeout given for a stream bounds all of it, as curl's -m does; without one, the default bounds
            // the head only, and a stream runs as long as it keeps coming (--stall-timeout ends one that stops).
            if options.timeout != nil {
                try await Printer.withDeadline(api.timeout, of: response) {
                    code = try await printer.print(
                        response, print: parts, keyPath: options.keyPath != nil, checkStatus: options.checkStatus)
                }
            } else {
                code = try await printer.print(
                    response, print: parts, keyPath: options.keyPath != nil, checkStatus: options.checkStatus)
            }
            return code.rawValue
        } catch {
            if let code = outputFailure(error) { return code }
            bar?.finish()
            // What was printed stays; the line it was on is ended before the error is reported.
            try? printer.endLine()
            let failure = ServerAPIError.wrap(error)
            reportError(failure)
            return ExitCode(failure).rawValue
        }
    }

    /// The values of these environment variables, for those that are set.
    static func environment(_ names: [String]) -> [String: String] {
        var values: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { values[name] = String(cString: value) }
        }
        return values
    }

    /// Standard input, when it is the request body: piped (never a terminal, so `sapi` never waits on one),
    /// with no body items, no `--raw` and no `--ignore-stdin`. A WebSocket reads it a line at a time instead.
    ///
    /// Read with `read(2)`, a read a signal interrupted is retried; a read that fails (standard input a directory, a
    /// closed descriptor, an I/O error) is an error that names it, never a call sent without its body.
    static func readStandardInput(_ options: Options) throws(UsageError) -> Data? {
        guard !options.ignoreStdin, !options.webSocket, options.rawBody == nil, !RequestBuilder.hasBodyItems(options),
            isatty(0) == 0
        else {
            return nil
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
            } else if count == 0 {
                return data
            } else if errno != EINTR {
                throw UsageError(
                    message: "cannot read the request body from standard input: \(String(cString: strerror(errno)))",
                    hint: "pipe the body in, or pass --ignore-stdin to send none")
            }
        }
    }

    /// Reports an error on standard error: a `UsageError` as its message and hint, any other as `reportError` does.
    static func report(_ error: any Error) {
        if let usage = error as? UsageError {
            var text = "sapi: error: \(SecretRedaction.redact(text: usage.message))\n"
            if let hint = usage.hint { text += "  try: \(SecretRedaction.redact(text: hint))\n" }
            StandardError.write(text)
        } else {
            reportError(ServerAPIError.wrap(error))
        }
    }

    /// Points standard output at a file (created or truncated), for `--output` without `--download`.
    static func redirectStandardOutput(to path: String) throws(UsageError) {
        let expanded = Paths.expandingTilde(path)
        let descriptor = open(expanded, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else {
            throw UsageError(message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard dup2(descriptor, 1) >= 0 else {
            throw UsageError(message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Reports an error on standard error; `download` names the file whose partial download was kept; `webSocket`:
    /// the error is a WebSocket's, whose size limit is `--max-message-size`; `hint`, when given, is what to try
    /// instead of the kind's own suggestion. A URL's password and the values of secret query keys are redacted
    /// (`SecretRedaction`), in the message as in the URL; what the message quotes from the server (a `Location`, a
    /// reason, a body's first bytes) shows its control characters (`StandardError`).
    static func reportError(
        _ error: ServerAPIError, download: String? = nil, webSocket: Bool = false, hint: String? = nil
    ) {
        var error = error
        error.message = SecretRedaction.redact(text: error.message)
        var text: String
        switch error.kind {
        case .cancelled:
            text = "sapi: interrupted"
            if let download {
                text += "; the partial download is kept as \(download).part: rerun with -d -c -o \(download)"
            }
        case .business:
            text = "sapi: error: business code \(error.code ?? "?"): \(error.message)"
        case .decoding:
            text = "sapi: error: \(error.message)"
            if let keyPath = error.keyPath, !error.message.contains(keyPath) { text += " (key path \(keyPath))" }
        case .tls:
            // The failure first (pin mismatch, certificate not trusted, ...), then libcurl's own words.
            let failure = error.tlsFailure.map(\.rawValue) ?? "failed"
            var message = error.message
            if message.hasPrefix(failure + ": ") { message = String(message.dropFirst(failure.count + 2)) }
            text = "sapi: error: TLS \(failure): \(message)"
            if let url = error.url { text += " [\(SecretRedaction.redact(url))]" }
        default:
            text = "sapi: error: \(error.kind): \(error.message)"
            if let url = error.url { text += " [\(SecretRedaction.redact(url))]" }
        }
        if error.isDecompressionRatioExceeded {
            text += "\n  try: --max-ratio N to allow bodies that expand more (100 by default), or --max-ratio none"
        } else if error.isDecompressionBomb {
            text += "\n  try: -d to save it as it arrives, or --max-ratio N to stop such a body early (100 by default)"
        } else if error.kind == .responseTooLarge, webSocket {
            text += "\n  try: --max-message-size SIZE to receive larger messages"
        } else if error.tlsFailure == .protocolTooOld {
            text += "\n  try: upgrade the server; for a device that cannot be, --legacy-tls (curl backend)"
        } else if error.tlsFailure == .handshakeFailed {
            text += "\n  try: --cert FILE (and --key FILE) if the server requires a client certificate"
        } else if error.tlsFailure == .clientCertificateRejected {
            text += "\n  try: --cert FILE (and --key FILE) with a certificate signed by a CA the server trusts"
        } else if error.kind == .responseTooLarge {
            text +=
                "\n  try: --max-body-size SIZE to read more, --pretty none to print it as it comes, or -d to save it"
        } else if let hint = hint ?? error.recoverySuggestion, error.kind != .cancelled {
            text += "\n  try: \(hint)"
        }
        if let download, error.kind != .cancelled {
            text += "\n  try: sapi -d -c -o \(download) URL (the partial download is kept as \(download).part)"
        }
        StandardError.write(text + "\n")
    }
}
