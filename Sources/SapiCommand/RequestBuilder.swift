import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns parsed options into a `ServerAPI`.
enum RequestBuilder {
    /// Expands `:PORT/path` to `http://localhost:PORT/path` and adds `http://` when there is no scheme.
    static func expandURL(_ text: String) -> String {
        if text.hasPrefix(":") {
            let rest = text.dropFirst()
            let port = rest.prefix { $0.isNumber }
            let path = rest.dropFirst(port.count)
            return "http://localhost" + (port.isEmpty ? "" : ":\(port)") + (path.hasPrefix("/") ? path : "/" + path)
        }
        return text.contains("://") ? text : "http://" + text
    }

    /// Whether the URL as given is a WebSocket's: `ws://` or `wss://`, in any case.
    static func isWebSocketURL(_ text: String) -> Bool {
        let lower = text.prefix(6).lowercased()
        return lower.hasPrefix("ws://") || lower.hasPrefix("wss://")
    }

    /// Whether the options have items that make a body (fields, raw JSON, files).
    static func hasBodyItems(_ options: Options) -> Bool {
        options.items.contains {
            switch $0 {
            case .field, .rawJSON, .file: true
            case .header, .query: false
            }
        }
    }

    /// Builds the call the options describe; `stdin` is what standard input carried, when it was read.
    static func build(_ options: Options, stdin: Data? = nil) throws(UsageError) -> ServerAPI {
        let urlText = expandURL(options.url)
        // Sent as written: the URL's own escapes are kept (see `ServerAPI(urlString:)`).
        let schemes = options.webSocket ? ["http", "https", "ws", "wss"] : ["http", "https"]
        guard var api = ServerAPI(urlString: urlText), let scheme = api.url?.scheme?.lowercased(),
            schemes.contains(scheme)
        else {
            throw UsageError(
                message: "\"\(options.url)\" is not a valid \(options.webSocket ? "WebSocket" : "http(s)") URL",
                hint: options.webSocket
                    ? "e.g. wss://example.com/path, or --ws :8080/path" : "e.g. https://example.com/path or :8080/path")
        }
        var jsonFields: [(String, JSONValue)] = []
        var formFields: [(String, String)] = []
        var files: [(String, String)] = []
        for item in options.items {
            switch item {
            case .header(let name, let value): api = api.header(name, value)
            case .query(let name, let value): api = api.query(name, value)
            case .field(let name, let value):
                jsonFields.append((name, .string(value)))
                formFields.append((name, value))
            case .rawJSON(let name, let json):
                guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)) else {
                    throw UsageError(
                        message: "\(name):=\(json) is not valid JSON", hint: "quote strings: name:='\"text\"'")
                }
                jsonFields.append((name, value))
            case .file(let name, let path): files.append((name, path))
            }
        }
        let hasRawJSON = options.items.contains { if case .rawJSON = $0 { true } else { false } }
        if !files.isEmpty {
            guard !hasRawJSON else { throw UsageError(message: "name:=json items cannot go in a multipart body") }
            var parts = formFields.map { MultipartForm.Part.field($0.0, $0.1) }
            for (name, path) in files {
                let fileURL = URL(fileURLWithPath: Paths.expandingTilde(path))
                guard FileManager.default.isReadableFile(atPath: fileURL.path) else {
                    throw UsageError(message: "cannot read the file \(path) for field \"\(name)\"")
                }
                parts.append(.file(name, url: fileURL, contentType: contentType(for: fileURL)))
            }
            api = api.body(.multipart(MultipartForm(parts)))
        } else if options.form {
            guard !hasRawJSON else { throw UsageError(message: "name:=json items need a JSON body, not --form") }
            if !formFields.isEmpty { api = api.body(.form(formFields)) }
        } else if !jsonFields.isEmpty {
            let object = JSONValue.object(Dictionary(jsonFields, uniquingKeysWith: { _, last in last }))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            guard let data = try? encoder.encode(object) else {
                throw UsageError(message: "the JSON body cannot be encoded")
            }
            api = api.body(.data(data, contentType: "application/json"))
            if !api.headers.contains("Accept") { api = api.header("Accept", "application/json, */*;q=0.5") }
        }
        var hasBody = !jsonFields.isEmpty || !files.isEmpty || (options.form && !formFields.isEmpty)
        if let raw = options.rawBody.map({ Data($0.utf8) }) ?? stdin.flatMap({ $0.isEmpty ? nil : $0 }) {
            guard !hasBodyItems(options) else {
                throw UsageError(
                    message: "--raw cannot be combined with body items (name=value, name:=json, field@path)",
                    hint: "put everything in --raw, or use items only")
            }
            // httpie's default: a raw body is JSON, or a form with --form, unless a Content-Type item says otherwise.
            let contentType =
                api.headers["Content-Type"]
                ?? (options.form ? "application/x-www-form-urlencoded; charset=utf-8" : "application/json")
            api = api.body(.data(raw, contentType: contentType))
            if contentType.lowercased().contains("json"), !api.headers.contains("Accept") {
                api = api.header("Accept", "application/json, */*;q=0.5")
            }
            hasBody = true
        }
        api = api.method(options.method ?? (hasBody ? .post : .get))
        if !api.headers.contains("User-Agent") { api = api.header("User-Agent", "sapi/\(Sapi.version)") }
        if !options.subprotocols.isEmpty {
            // `ServerAPI.webSocketProtocols(_:)`'s header, from a list: that modifier is variadic.
            api = api.setHeader("Sec-WebSocket-Protocol", options.subprotocols.joined(separator: ", "))
        }
        if let timeout = options.timeout { api = api.timeout(.milliseconds(Int64(timeout * 1000))) }
        if let stall = options.stallTimeout { api = api.stallTimeout(below: stall.bytesPerSecond, for: stall.duration) }
        if options.retry > 0 { api = api.retry(options.retry) }
        api = api.keyPath(options.keyPath)
        api = api.redirects(options.maxRedirects == 0 ? .none : .follow(max: options.maxRedirects))
        if let socket = options.unixSocket { api = api.unixSocket(socket) }
        switch options.maxRatio {
        case .ratio(let ratio)?: api = api.maxDecompressionRatio(ratio)
        case .unlimited?: api = api.maxDecompressionRatio(nil)
        case nil: break
        }
        // Every status reaches the printer, except those a retry is for: they must fail the attempt.
        api = api.accept(
            options.retry > 0 ? .codes(Set(100...599).subtracting(api.retryPolicy.retryableStatuses)) : .any)
        // The printer formats (envelope, key path) itself, so that error bodies are printed as they came.
        api = api.format(.data)
        // --download: `Download` adds the destination, which may be known only once the head arrives.
        if options.cache != .none { api = api.cache(options.cacheMode ?? .returnCacheElseLoad) }
        // A body sapi reads whole (for --key-path, --envelope, the cache) has sapi's own limit. A download keeps
        // the library's (none on disk), --stream needs none, and a body printed as it arrives is limited only
        // when it must be formatted (`Printer.print(_:timeout:)` applies the limit then).
        if !options.download, !options.stream, !Printer.streams(options) {
            api = api.maxResponseSize(options.maxBodySize)
        }
        return api
    }

    static func contentType(for file: URL) -> String {
        switch file.pathExtension.lowercased() {
        case "json": "application/json"
        case "txt", "md": "text/plain"
        case "html", "htm": "text/html"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "pdf": "application/pdf"
        case "csv": "text/csv"
        case "xml": "application/xml"
        default: "application/octet-stream"
        }
    }
}
