import Foundation
import ServerAPIKit

/// Prints results: headers and body as `--print` asks, JSON pretty and coloured on a terminal.
struct Printer {
    var options: Options
    var formatter: any ResponseFormatting
    var colors: Bool

    /// Prints one result and returns the exit code it implies.
    /// - Throws: `ServerAPIError` when the envelope or key path cannot be read.
    func print(_ result: ServerResult, api: ServerAPI) throws -> ExitCode {
        var out = Data()
        if options.print.contains("H") {
            var head = Self.head(status: result.status, headers: result.headers, colors: colors)
            if result.isFromCache, case .cache(_, let age) = result.source {
                head += Self.paint("X-Sapi-Cache", Self.fieldName, colors) + ": hit, age \(Int(age.seconds)) s\n"
            }
            out.append(contentsOf: (head + "\n").utf8)
        }
        let success = (200..<300).contains(result.status)
        if options.print.contains("B") {
            switch result.value {
            case .file(let url):
                if colors || isatty(2) != 0 {
                    let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?
                        .int64Value ?? 0
                    FileHandle.standardError.write(Data("Saved \(size) bytes to \(url.path)\n".utf8))
                }
            case .data(let data) where success && (options.envelope || options.keyPath != nil):
                let response = TransportResponse(
                    status: result.status, headers: result.headers, body: .data(data), url: result.url)
                let value = try formatter.format(response, for: api.format(.json))
                out.append(contentsOf: (render(value) + "\n").utf8)
            case .data(let data):
                out.append(body(data, contentType: result.headers["Content-Type"]))
            case .string(let text):
                out.append(contentsOf: text.utf8)
            case .json(let json):
                out.append(contentsOf: (render(.json(json)) + "\n").utf8)
            }
        }
        FileHandle.standardOutput.write(out)
        if options.checkStatus, let code = ExitCode.status(result.status) {
            FileHandle.standardError.write(Data(Self.statusWarning(result.status).utf8))
            return code
        }
        return .ok
    }

    private func render(_ value: ServerValue) -> String {
        switch value {
        case .json(let json): JSONPrinter(colors: colors).render(json, pretty: colors)
        case .string(let text): text
        case .data(let data): String(decoding: data, as: UTF8.self)
        case .file(let url): url.path
        }
    }

    private func body(_ data: Data, contentType: String?) -> Data {
        guard !data.isEmpty else { return Data() }
        let looksJSON = contentType?.lowercased().contains("json") == true || data.first == UInt8(ascii: "{")
            || data.first == UInt8(ascii: "[")
        if colors, looksJSON, let json = try? JSONDecoder().decode(JSONValue.self, from: data) {
            return Data((JSONPrinter(colors: true).render(json) + "\n").utf8)
        }
        if colors, String(validating: data, as: UTF8.self) == nil {
            return Data("+-----------------------------------------+\n| NOTE: binary data not shown in terminal |\n+-----------------------------------------+\n".utf8)
        }
        // Piped: the body exactly as it came, binary included.
        return data
    }

    /// The status line and the header fields, one a line (bold status, cyan names on a terminal).
    static func head(status: Int, headers: HTTPHeaders, colors: Bool) -> String {
        let reason = HTTPStatus.reason(status)
        var head = paint("HTTP \(status)\(reason.isEmpty ? "" : " " + reason)", bold, colors) + "\n"
        for field in headers { head += paint(field.name, fieldName, colors) + ": \(field.value)\n" }
        return head
    }

    /// The warning `--check-status` prints for a 4xx or 5xx status.
    static func statusWarning(_ status: Int) -> String {
        "sapi: warning: HTTP \(status) \(HTTPStatus.reason(status))\n"
    }

    static let bold = "\u{1B}[1m"
    static let fieldName = "\u{1B}[36m"

    static func paint(_ text: String, _ code: String, _ colors: Bool) -> String {
        colors ? code + text + "\u{1B}[0m" : text
    }
}
