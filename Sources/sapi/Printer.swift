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
            var head = ""
            let reason = HTTPStatus.reason(result.status)
            head += paint("HTTP \(result.status)\(reason.isEmpty ? "" : " " + reason)", "\u{1B}[1m") + "\n"
            for field in result.headers { head += paint(field.name, "\u{1B}[36m") + ": \(field.value)\n" }
            if result.isFromCache, case .cache(_, let age) = result.source {
                head += paint("X-Sapi-Cache", "\u{1B}[36m") + ": hit, age \(Int(age.seconds)) s\n"
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
        if options.checkStatus && result.status >= 400 {
            let reason = HTTPStatus.reason(result.status)
            FileHandle.standardError.write(Data("sapi: warning: HTTP \(result.status) \(reason)\n".utf8))
            return .httpStatus
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

    private func paint(_ text: String, _ code: String) -> String { colors ? code + text + "\u{1B}[0m" : text }
}
