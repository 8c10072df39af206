import ServerAPIKit
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Printer {
    /// Whether a call's body can be printed from a stream: nothing sapi does with it needs the whole body
    /// before the head arrives (no `--envelope`, `--key-path` or cache). Whether the body itself needs
    /// formatting is decided from its head and first bytes (`needsWholeBody`).
    static func streams(_ options: Options) -> Bool {
        !options.envelope && options.keyPath == nil && options.cache == .none && options.cacheMode == nil
    }

    /// Whether a body must be read whole before it is printed: JSON that the style indents or colours.
    /// - Parameters:
    ///   - contentType: The response's `Content-Type`.
    ///   - first: The body's first byte, when one arrived.
    func needsWholeBody(contentType: String?, first: UInt8?) -> Bool {
        guard style.palette != nil || style.format else { return false }
        return contentType?.lowercased().contains("json") == true || first == UInt8(ascii: "{")
            || first == UInt8(ascii: "[")
    }

    /// Prints a streamed response as `print(_:api:)` prints a whole one: a body that needs no formatting is
    /// written to standard output as it arrives, in bounded memory; one that does is read whole, up to
    /// `options.maxBodySize`, then printed.
    /// - Parameters:
    ///   - response: The head and the body.
    ///   - timeout: The call's `--timeout`, which bounds the whole attempt: the body is stopped when it runs
    ///     out, and the call times out.
    /// - Returns: The exit code the status implies.
    /// - Throws: The error that ended the body, `responseTooLarge` past `--max-body-size`, `timedOut`, or
    ///   `StandardOutput.Failure`.
    func print(_ response: StreamedResponse, timeout: Duration) async throws -> ExitCode {
        var output = StreamedOutput(terminal: terminal)
        if parts.contains("h") {
            let head = Self.head(
                status: response.status, headers: response.headers,
                version: response.metrics.transport?.httpVersion, style: style)
            try output.write(Data((head + "\n").utf8))
        }
        if parts.contains("b") {
            try await Self.withDeadline(timeout, of: response) {
                try await body(of: response, to: &output)
            }
        } else {
            response.cancel()
        }
        if terminal, !output.atLineStart { try output.write(Data("\n".utf8)) }
        if parts.contains("m") {
            let metrics = await response.finalMetrics
            var text = output.atLineStart ? "" : "\n"
            if output.wrote { text += "\n" }
            try output.write(Data((text + Self.metadata(metrics, style: style)).utf8))
        }
        if options.checkStatus, let code = ExitCode.status(response.status) {
            StandardError.write(Self.statusWarning(response.status))
            return code
        }
        return .ok
    }

    /// The body: straight through, or read whole and formatted.
    private func body(of response: StreamedResponse, to output: inout StreamedOutput) async throws {
        let contentType = response.headers["Content-Type"]
        var iterator = response.body.makeAsyncIterator()
        guard let first = try await iterator.next() else { return }
        if needsWholeBody(contentType: contentType, first: first.first) {
            let limit = options.maxBodySize
            var whole = first
            guard Int64(whole.count) <= limit else { throw Self.tooLarge(limit, response) }
            while let chunk = try await iterator.next() {
                guard Int64(whole.count) + Int64(chunk.count) <= limit else { throw Self.tooLarge(limit, response) }
                whole.append(chunk)
            }
            try output.write(body(whole, contentType: contentType))
            return
        }
        guard terminal else {
            // Piped: the bytes exactly as they came.
            var chunk: Data? = first
            while let bytes = chunk {
                try output.write(bytes)
                chunk = try await iterator.next()
            }
            return
        }
        var text = TerminalText.Chunks()
        var chunk: Data? = first
        while let bytes = chunk {
            guard let shown = text.visible(bytes) else {
                // As a whole body is shown on a terminal: binary data is not printed (what came before is).
                if !output.atLineStart { try output.write(Data("\n".utf8)) }
                try output.write(Data(Self.binaryNote.utf8))
                response.cancel()
                return
            }
            try output.write(shown)
            chunk = try await iterator.next()
        }
        try output.write(text.finish())
    }

    private static func tooLarge(_ limit: Int64, _ response: StreamedResponse) -> ServerAPIError {
        response.cancel()
        var error = ServerAPIError.responseTooLarge(limit: limit, status: response.status)
        error.message += " (--max-body-size) for a body read whole to format it"
        return error.with(requestID: response.requestID, url: response.url)
    }

    /// Runs `operation` on the body, stopping the body when `timeout` (counted from the attempt's start, as a
    /// whole response's timeout is) runs out; the call then fails with `timedOut`.
    static func withDeadline(
        _ timeout: Duration, of response: StreamedResponse, _ operation: () async throws -> Void
    ) async throws {
        // The attempt's time so far: what a whole response's timeout would have counted up to the head.
        let remaining = timeout - (response.metrics.transport?.total ?? .zero)
        let expired = DeadlineFlag()
        let timer = Task {
            try await Task.sleep(for: max(remaining, .zero))
            expired.fire()
            response.cancel()
        }
        defer { timer.cancel() }
        do {
            try await operation()
        } catch  where expired.fired {
            // The timer stopped the body: whatever error that made, the call timed out.
            throw ServerAPIError.timedOut(after: timeout).with(requestID: response.requestID, url: response.url)
        }
    }
}

/// Whether a deadline has passed, set from the timer's task and read from the printer's.
private final class DeadlineFlag: Sendable {
    private let state = Mutex(false)
    var fired: Bool { state.withLock { $0 } }
    func fire() { state.withLock { $0 = true } }
}

/// Standard output for a streamed body, remembering whether anything was written and how it ended.
struct StreamedOutput {
    var terminal: Bool
    private(set) var wrote = false
    private(set) var atLineStart = true

    init(terminal: Bool) { self.terminal = terminal }

    mutating func write(_ data: Data) throws {
        guard let last = data.last else { return }
        try StandardOutput.write(data)
        wrote = true
        atLineStart = last == UInt8(ascii: "\n")
    }
}
