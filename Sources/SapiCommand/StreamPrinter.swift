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

/// Standard output with no buffer in between: each write reaches file descriptor 1 before it returns,
/// so a streamed body shows as it arrives. A closed pipe is an error to stop on, not a crash.
enum StandardOutput {
    enum Failure: Error {
        /// The reader went away (`EPIPE`): `sapi -S URL | head -1`.
        case closed
        /// Any other write error, with its `errno`.
        case failed(Int32)
    }

    static func write(_ data: Data) throws(Failure) {
        let failure: Failure? = data.withUnsafeBytes { bytes -> Failure? in
            guard let base = bytes.baseAddress else { return nil }
            var offset = 0
            while offset < bytes.count {
                let written = Descriptor.system(1, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno == EPIPE ? .closed : .failed(errno)
                }
                offset += written
            }
            return nil
        }
        if let failure { throw failure }
    }
}

/// Prints a streamed body as it arrives (`--stream`): bytes as they come, server-sent events one at a
/// time, or the value at `--key-path` in each event's data or each JSON line.
struct StreamPrinter {
    /// How a body is printed.
    enum Mode: Equatable {
        /// The bytes as they come.
        case bytes
        /// Server-sent events in a readable form.
        case events
        /// The value at the key path in each event's data: strings as text fragments, joined up.
        case eventValues
        /// The value at the key path in each line, one line of JSON each (NDJSON, JSON text sequences).
        case lineValues
        /// `application/json`: lines of JSON when its first line is a whole value, else one document.
        case jsonBody
    }

    var style: OutputStyle
    /// Standard output is a terminal: a body that stops mid-line gets a newline, and one that is not text (not
    /// UTF-8, or with a NUL) is not shown.
    var terminal: Bool
    /// `--key-path`, applied to each event's data or line.
    var keyPath: JSONKeyPath {
        get { selection.keyPath }
        set { selection.keyPath = newValue }
    }
    /// Writes to standard output.
    var write: (Data) throws -> Void = { try StandardOutput.write($0) }
    /// Writes a warning to standard error.
    var warn: (String) -> Void = { StandardError.write($0 + "\n") }

    /// What was printed last ended a line (or nothing was printed).
    private(set) var atLineStart = true
    private var mode = Mode.bytes
    /// The key path's values in the events or lines; events printed, the last id printed.
    private var selection = KeyPathSelection()
    private var events = 0
    private var lastID = ""

    init(style: OutputStyle, terminal: Bool) {
        self.style = style
        self.terminal = terminal
    }

    /// How a response with this status and `Content-Type` is printed.
    static func mode(contentType: String?, status: Int, hasKeyPath: Bool) -> Mode {
        // An error body is printed as it came, as without --stream.
        guard (200..<300).contains(status) else { return .bytes }
        let mime = contentType?.split(separator: ";").first.map { $0.trimmingWhitespace().lowercased() }
        if mime == "text/event-stream" { return hasKeyPath ? .eventValues : .events }
        guard hasKeyPath else { return .bytes }
        if let mime, mime == "application/json" || mime.hasSuffix("+json") { return .jsonBody }
        return .lineValues
    }

    /// Prints the head (when `print` has `h`) and the body (when it has `b`) as they arrive, then the
    /// metadata (`m`) once the body has ended.
    /// - Returns: 3, 4 or 5 for a 3xx, 4xx or 5xx status with `checkStatus`, else `ok`.
    /// - Throws: The error that ended the body, a key path that found nothing in the whole body, or
    ///   `StandardOutput.Failure`.
    mutating func print(
        _ response: StreamedResponse, print parts: Set<Character>, keyPath hasKeyPath: Bool, checkStatus: Bool
    ) async throws -> ExitCode {
        if parts.contains("h") {
            try emit(
                Printer.head(
                    status: response.status, headers: response.headers,
                    version: response.metrics.transport?.httpVersion, style: style) + "\n")
        }
        if parts.contains("b") {
            let mode = Self.mode(
                contentType: response.headers["Content-Type"], status: response.status, hasKeyPath: hasKeyPath)
            try await body(response.body, mode: mode)
        } else if !parts.contains("m") {
            response.cancel()
        } else {
            for try await _ in response.body {}
        }
        if parts.contains("m") {
            let metrics = await response.finalMetrics
            try endLine()
            try emit((parts.contains("b") || parts.contains("h") ? "\n" : "") + Printer.metadata(metrics, style: style))
        }
        if checkStatus, let code = ExitCode.status(response.status) {
            warn(Printer.statusWarning(response.status).dropLast().description)
            return code
        }
        return .ok
    }

    /// Prints a body as `mode` says, to its end.
    mutating func body(_ body: ResponseBodyStream, mode: Mode) async throws {
        self.mode = mode
        switch mode {
        case .bytes:
            var text = TerminalText.Chunks()
            for try await chunk in body {
                guard terminal else {
                    try emit(chunk)
                    continue
                }
                guard let shown = text.visible(chunk) else {
                    // As `Printer` shows a body that is not text on a terminal (what came before it stays).
                    try endLine()
                    try emit(Printer.binaryNote)
                    body.cancel()
                    return
                }
                try emit(shown)
            }
            try emit(text.finish())
        case .events, .eventValues:
            for try await event in ServerSentEvents(body) {
                if mode == .events { try printEvent(event) } else { try printValue(of: event) }
            }
        case .lineValues, .jsonBody:
            try await printLines(of: body)
        }
        try finish()
    }

    /// Ends the output on a line boundary after an error or an interrupt, where that is sapi's own
    /// text or a terminal (piped bytes stay exactly as they came).
    mutating func endLine() throws {
        guard !atLineStart, terminal || mode != .bytes else { return }
        try emit("\n")
    }

    // MARK: - Events

    private mutating func printEvent(_ event: ServerSentEvent) throws {
        var text = events > 0 ? "\n" : ""
        events += 1
        let style = style
        let name = { (field: String) in style.paint(field, \.fieldName) + ": " }
        if event.type != "message" { text += name("event") + style.shown(event.type) + "\n" }
        if event.id != lastID {
            text += name("id") + style.shown(event.id) + "\n"
            lastID = event.id
        }
        if let retry = event.retry {
            let (seconds, attoseconds) = retry.components
            text += name("retry") + "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)\n"
        }
        if let coloured = JSONPrinter.coloured(Data(event.data.utf8), style: style) {
            text += String(decoding: coloured, as: UTF8.self)
        } else {
            text += style.shown(event.data)
        }
        try emit(text + "\n")
    }

    private mutating func printValue(of event: ServerSentEvent) throws {
        events += 1
        let data = event.data.trimmingWhitespaceAndNewlines()
        // Keep-alives and the end marker of OpenAI-style streams carry no value.
        if data.isEmpty || data == "[DONE]" { return }
        let described = "event \(events)" + (event.id.isEmpty ? "" : " (id \(event.id))")
        guard let value = value(in: Data(data.utf8), describing: described) else { return }
        if case .string(let text) = value {
            // A text fragment of one answer: printed as it is, joined to the next one.
            try emit(style.shown(text))
        } else {
            try endLine()
            try emit(render(value, pretty: false) + "\n")
        }
    }

    // MARK: - Lines

    private mutating func printLines(of body: ResponseBodyStream) async throws {
        var splitter = LineSplitter(maximumLineLength: 64 << 20)
        var number = 0
        // `.jsonBody` until its first line has arrived: the bytes so far.
        var pending = Data()
        // `.jsonBody` whose first line is not a whole value: one document, read to its end.
        var document: Data?
        var decided = mode == .lineValues
        for try await chunk in body {
            if document != nil {
                document?.append(chunk)
                continue
            }
            var bytes = chunk
            if !decided {
                pending.append(chunk)
                guard let first = Self.firstLine(of: pending) else { continue }
                decided = true
                if (try? JSONValue(parsing: first)) == nil {
                    document = pending
                    continue
                }
                bytes = pending
                pending = Data()
            }
            for line in try splitter.feed(bytes) {
                number += 1
                try printValue(inLine: line, number: number)
            }
        }
        if !decided { document = pending }
        if let document {
            let value = try JSONValue(parsing: document).value(at: keyPath)
            selection.found()
            try emit(render(value, pretty: style.format) + "\n")
        } else if let last = splitter.finish() {
            try printValue(inLine: last, number: number + 1)
        }
    }

    /// The first line of `data` that is not blank, once its end has arrived.
    private static func firstLine(of data: Data) -> Data? {
        var start = data.startIndex
        while let end = data[start...].firstIndex(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) {
            let line = data[start..<end]
            if !isBlank(Array(line)) { return Data(line) }
            start = end + 1
        }
        return nil
    }

    private static func isBlank(_ line: [UInt8]) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x1E }
    }

    private mutating func printValue(inLine line: [UInt8], number: Int) throws {
        // A JSON text sequence (application/json-seq) starts each record with RS.
        let bytes = line.first == 0x1E ? line.dropFirst() : line[...]
        guard !Self.isBlank(Array(bytes)) else { return }
        guard let value = value(in: Data(bytes), describing: "line \(number)") else { return }
        try emit(render(value, pretty: false) + "\n")
    }

    // MARK: - Values

    /// The value at the key path in `data`; `nil` when it is not JSON (with a warning) or has nothing there.
    private mutating func value(in data: Data, describing item: String) -> JSONValue? {
        selection.value(in: data, describing: item, warn: warn)
    }

    private func render(_ value: JSONValue, pretty: Bool) -> String {
        JSONPrinter(style: style).render(value, pretty: pretty)
    }

    /// The end of a body: a last newline where sapi's text or a terminal needs one, and exit 9 when the
    /// key path found nothing at all.
    private mutating func finish() throws {
        try endLine()
        guard mode == .eventValues || mode == .lineValues || mode == .jsonBody else { return }
        let events = mode == .eventValues
        if let failure = selection.failure(items: events ? "event" : "line", data: events ? "event's data" : "line") {
            throw failure
        }
    }

    private mutating func emit(_ text: String) throws { try emit(Data(text.utf8)) }

    private mutating func emit(_ data: Data) throws {
        guard let last = data.last else { return }
        try write(data)
        atLineStart = last == UInt8(ascii: "\n")
    }
}
