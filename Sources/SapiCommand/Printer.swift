import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Prints results: the response headers (`h`), body (`b`) and metadata (`m`) as `--print` asks, JSON
/// formatted and coloured as `--pretty`, `--sorted` and `--style` say.
struct Printer {
    var options: Options
    var formatter: any ResponseFormatting
    var style: OutputStyle
    /// The letters of `--print` (after the defaults are applied).
    var parts: Set<Character>
    /// Standard output is a terminal: binary bodies are not shown.
    var terminal: Bool

    /// Prints one result and returns the exit code it implies.
    /// - Throws: `ServerAPIError` when the envelope or key path cannot be read.
    func print(_ result: ServerResult, api: ServerAPI) throws -> ExitCode {
        var out = Data()
        if parts.contains("h") {
            var head = Self.head(
                status: result.status, headers: result.headers, version: result.metrics.transport?.httpVersion,
                style: style)
            if result.isFromCache, let cache = Self.cacheLine(result, cacheEnabled: true) {
                head += style.paint("X-Sapi-Cache", \.fieldName) + ": \(cache)\n"
            }
            out.append(contentsOf: (head + "\n").utf8)
        }
        let success = (200..<300).contains(result.status)
        if parts.contains("b") {
            switch result.value {
            case .file(let url):
                // Downloads go through `Download`, which reports the saved file; a call printed here has no
                // download target, so this is the path should one ever arrive.
                out.append(contentsOf: (url.path + "\n").utf8)
            case .data(let data) where success && (options.envelope || options.keyPath != nil):
                out.append(try selected(data, result: result, api: api))
            case .data(let data):
                out.append(body(data, contentType: result.headers["Content-Type"]))
            case .string(let text):
                out.append(contentsOf: style.shown(text).utf8)
            case .json(let json):
                out.append(contentsOf: (JSONPrinter(style: style).render(json, pretty: style.format) + "\n").utf8)
            }
        }
        // On a terminal, the prompt that follows starts on a line of its own.
        if terminal, let last = out.last, last != 0x0A { out.append(0x0A) }
        if parts.contains("m") {
            if !out.isEmpty && out.last != 0x0A { out.append(0x0A) }
            if !out.isEmpty { out.append(0x0A) }
            out.append(
                contentsOf: Self.metadata(
                    result.metrics, cache: Self.cacheLine(result, cacheEnabled: options.cache != .none), style: style
                ).utf8)
        }
        Descriptor.write(out, to: Descriptor.standardOutput)
        if options.checkStatus, let code = ExitCode.status(result.status) {
            StandardError.write(Self.statusWarning(result.status))
            return code
        }
        return .ok
    }

    /// The part of a body `--key-path` or `--envelope` selects, formatted. Without `--envelope` and with
    /// `--unsorted`, the value's own bytes are formatted, so that its keys keep the body's order.
    private func selected(_ data: Data, result: ServerResult, api: ServerAPI) throws -> Data {
        let printer = JSONPrinter(style: style)
        if !options.envelope, !style.sorted, let keyPath = api.keyPath,
            let range = try? JSONScanner.range(of: JSONKeyPath(parsing: keyPath), in: data)
        {
            return printer.format(Data(data[range]), indent: style.format) + Data("\n".utf8)
        }
        let response = TransportResponse(
            status: result.status, headers: result.headers, body: .data(data), url: result.url)
        let value = try formatter.format(response, for: api.format(.json))
        switch value {
        case .json(let json): return Data((printer.render(json, pretty: style.format) + "\n").utf8)
        case .string(let text): return Data((style.shown(text) + "\n").utf8)
        case .data(let data): return style.shown(data) + Data("\n".utf8)
        case .file(let url): return Data((url.path + "\n").utf8)
        }
    }

    /// A body as it came, or formatted when it is JSON and the style formats or colours; on a terminal, with its
    /// control characters visible, or the binary note when it is not text.
    func body(_ data: Data, contentType: String?) -> Data {
        guard !data.isEmpty else { return Data() }
        let looksJSON =
            contentType?.lowercased().contains("json") == true || data.first == UInt8(ascii: "{")
            || data.first == UInt8(ascii: "[")
        if style.palette != nil || style.format, looksJSON, let formatted = Self.formatJSON(data, style: style) {
            return formatted
        }
        if terminal, String(validating: data, as: UTF8.self) == nil || data.contains(0) {
            return Data(Self.binaryNote.utf8)
        }
        // Piped: the body exactly as it came, binary included; on a terminal, text with its controls visible.
        return style.shown(data)
    }

    /// JSON text formatted as the style says (a last newline added when indented); `nil` when it is not JSON.
    static func formatJSON(_ data: Data, style: OutputStyle) -> Data? {
        let printer = JSONPrinter(style: style)
        if style.format && style.sorted {
            guard let json = try? JSONValue(parsing: data) else { return nil }
            return Data((printer.render(json) + "\n").utf8)
        }
        guard (try? JSONScanner.validate(data)) != nil else { return nil }
        let formatted = printer.format(data, indent: style.format)
        return style.format ? formatted + Data("\n".utf8) : formatted
    }

    static let binaryNote =
        "+-----------------------------------------+\n| NOTE: binary data not shown in terminal |\n+-----------------------------------------+\n"

    /// The status line and the header fields, one a line: `HTTP/1.1 200 OK` (the version when the transport
    /// reports it), bold status and coloured names with colours, sorted by name when the style sorts. The reason is
    /// the standard one for the status, never the server's.
    static func head(status: Int, headers: HTTPHeaders, version: String?, style: OutputStyle) -> String {
        let reason = HTTPStatus.reason(status)
        let protocolName = version.map { "HTTP/\($0)" } ?? "HTTP"
        var head = style.paint("\(protocolName) \(status)\(reason.isEmpty ? "" : " " + reason)", \.status) + "\n"
        head += fields(Array(headers).map { ($0.name, $0.value) }, style: style)
        return head
    }

    /// Header fields, one a line, sorted by name (stable) when the style formats and sorts; names and values as the
    /// style shows network text.
    static func fields(_ fields: [(name: String, value: String)], style: OutputStyle) -> String {
        var ordered = fields
        if style.format && style.sorted {
            ordered = fields.enumerated().sorted {
                let (left, right) = ($0.element.name.lowercased(), $1.element.name.lowercased())
                return left == right ? $0.offset < $1.offset : left < right
            }.map(\.element)
        }
        return ordered.map { style.paint(style.shown($0.name), \.fieldName) + ": " + style.shown($0.value) + "\n" }
            .joined()
    }

    /// What the cache did for a result, with `--cache`: `hit, age N s` (answered from storage), `revalidated,
    /// age N s` (the server answered 304 and the stored response was used) or `miss` (the network answered).
    /// `nil` without a cache and for a result from the network.
    static func cacheLine(_ result: ServerResult, cacheEnabled: Bool) -> String? {
        guard case .cache(_, let age) = result.source else { return cacheEnabled ? "miss" : nil }
        // A stored response reached through a transport attempt is one the server confirmed with a 304.
        return (result.metrics.attempts > 0 ? "revalidated" : "hit") + ", age \(Int(age.seconds)) s"
    }

    /// `-p m`: what the call's metrics say, one item a line, and with `--cache` what the cache did.
    static func metadata(_ metrics: RequestMetrics, cache: String? = nil, style: OutputStyle) -> String {
        let seconds = metrics.duration.seconds
        var lines = [
            ("Elapsed time", String(cFormat: "%.3f", seconds) + "s"),
            ("Received", "\(metrics.bytesReceived) B"),
            ("Sent", "\(metrics.bytesSent) B"),
        ]
        if let version = metrics.transport?.httpVersion { lines.append(("HTTP version", version)) }
        if let reused = metrics.reusedConnection { lines.append(("Connection", reused ? "reused" : "new")) }
        lines.append(("Attempts", "\(metrics.attempts)"))
        if let transport = metrics.transportName { lines.append(("Transport", transport)) }
        if let cache { lines.append(("Cache", cache)) }
        return lines.map { style.paint($0.0, \.meta) + ": " + $0.1 + "\n" }.joined()
    }

    /// The warning `--check-status` prints for a 3xx, 4xx or 5xx status.
    static func statusWarning(_ status: Int) -> String {
        "sapi: warning: HTTP \(status) \(HTTPStatus.reason(status))\n"
    }
}
