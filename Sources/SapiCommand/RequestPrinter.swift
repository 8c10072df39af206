import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Prints each request as it goes to the transport (`-p H`, `-p B`, `-v`, `--offline`): the request
/// line, `Host` and the header fields, then the body. Credentials are redacted unless
/// `--show-credentials` asks for them.
struct RequestPrinter: ServerAPIPlugin {
    var parts: Set<Character>
    var style: OutputStyle
    var terminal: Bool
    var showCredentials: Bool
    /// The protocol named on the request line.
    var version = "HTTP/1.1"
    var write: @Sendable (Data) -> Void = { Descriptor.write($0, to: Descriptor.standardOutput) }

    /// The headers whose values are credentials.
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization"]

    func willSend(_ request: TransportRequest, for api: ServerAPI) {
        write(render(request))
    }

    /// The request as `-v` prints it, followed by a blank line.
    func render(_ request: TransportRequest) -> Data {
        var out = Data()
        if parts.contains("H") {
            var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
            let path = (components?.percentEncodedPath).flatMap { $0.isEmpty ? nil : $0 } ?? "/"
            let target = path + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
            components = nil
            var head = style.paint("\(request.method.rawValue) \(target) \(version)", \.status) + "\n"
            var fields: [(name: String, value: String)] = []
            if !request.headers.contains("Host"), let host = request.url.host {
                let bracketed = host.contains(":") ? "[\(host)]" : host
                fields.append(("Host", bracketed + (request.url.port.map { ":\($0)" } ?? "")))
            }
            for field in request.headers {
                var value = field.value
                if !showCredentials, Self.credentialHeaders.contains(field.name.lowercased()) {
                    // The scheme stays (Basic, Bearer, Digest), the secret does not.
                    let scheme = value.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
                    value = value.contains(" ") ? scheme + " " + LoggingPlugin.redacted : LoggingPlugin.redacted
                }
                fields.append((field.name, value))
            }
            if !request.headers.contains("Content-Length"), request.body.streamedBody == nil,
                let length = try? request.body.contentLength(), length > 0
            {
                fields.append(("Content-Length", "\(length)"))
            }
            head += Printer.fields(fields, style: style)
            out.append(contentsOf: (head + "\n").utf8)
        }
        if parts.contains("B") {
            let body = self.body(request.body, contentType: request.headers["Content-Type"])
            if !body.isEmpty {
                out.append(body)
                if body.last != 0x0A { out.append(0x0A) }
                out.append(0x0A)
            }
        }
        return out
    }

    /// The body: JSON formatted as the style says, text as it is, files and streams described.
    private func body(_ body: BodySource, contentType: String?) -> Data {
        if body.streamedBody != nil { return Data("[a streamed body, sent as it is read]\n".utf8) }
        var out = Data()
        for segment in body.segments {
            switch segment {
            case .data(let data):
                if contentType?.lowercased().contains("json") == true,
                    let formatted = Printer.formatJSON(data, style: style)
                {
                    out.append(formatted)
                } else if (String(validating: data, as: UTF8.self) != nil && !data.contains(0)) || !terminal {
                    out.append(data)
                } else {
                    out.append(contentsOf: "[\(data.count) bytes of binary data]".utf8)
                }
            case .file(let url):
                let size = Descriptor.status(atPath: url.path)?.size
                out.append(contentsOf: "[the file \(url.path)\(size.map { ", \($0) bytes" } ?? "")]".utf8)
            }
        }
        return out
    }
}
