import Foundation
import ServerAPIKit

extension HARArchive.Entry {
    /// An entry for one exchange, redacted.
    /// - Parameters:
    ///   - request: The request as the transport was handed it.
    ///   - body: The request body's bytes.
    ///   - response: The response's head, or `nil` when the call failed before one arrived.
    ///   - responseBody: The response body's bytes (a download's file contents).
    ///   - chunks: How a streamed body arrived; `nil` for a body read whole.
    ///   - error: The failure, before the head (no `response`) or during the body.
    ///   - metrics: What the transport measured (`nil` when it failed before measuring).
    ///   - startedAt: When the call started.
    ///   - elapsed: How long the exchange took, for a failure without metrics.
    ///   - transport: The recording transport's upstream's name.
    ///   - redaction: What to replace before anything is kept.
    init(
        request: TransportRequest, body: Data, response: TransportResponse?, responseBody: Data,
        chunks: [HARArchive.Chunk]?, error: ServerAPIError?, metrics: TransportMetrics?, startedAt: Date,
        elapsed: Duration, transport: String, redaction: HARRedaction
    ) {
        let version = HARArchive.httpVersion(metrics?.httpVersion)
        // Secrets the request carried are also removed wherever a server echoed them.
        let secrets = redaction.secrets(
            headers: request.headers, url: request.url, body: body, mimeType: request.headers["Content-Type"] ?? "")
        let scrub = { (text: String) in secrets.isEmpty ? text : redaction.scrub(text, secrets: secrets) }
        let url = redaction.redact(request.url)
        let requestHeaders = redaction.redact(request.headers)
        var postData: HARArchive.PostData?
        if !body.isEmpty {
            let mimeType = request.headers["Content-Type"] ?? ""
            let bytes = redaction.redact(body: body, mimeType: mimeType)
            if let text = HARArchive.text(bytes, mimeType: mimeType) {
                postData = HARArchive.PostData(mimeType: mimeType, text: scrub(text))
            } else {
                postData = HARArchive.PostData(
                    mimeType: mimeType, text: bytes.base64EncodedString(), encoding: "base64")
            }
        }
        let harRequest = HARArchive.Request(
            method: request.method.rawValue, url: url.absoluteString, httpVersion: version,
            cookies: HARArchive.cookies(requestHeaders.values(for: "Cookie")),
            headers: requestHeaders.map { HARArchive.NameValue(name: $0.name, value: $0.value) },
            queryString: HARArchive.query(url), postData: postData, headersSize: -1, bodySize: body.count)

        let recordedError = error.map { error in
            var recorded = HARArchive.RecordedError(error)
            recorded.message = scrub(redaction.redact(text: recorded.message))
            return recorded
        }
        var harResponse: HARArchive.Response
        if let response {
            let headers = HTTPHeaders(
                redaction.redact(response.headers).map { HTTPHeaders.Field(name: $0.name, value: scrub($0.value)) })
            let mimeType = response.headers["Content-Type"] ?? ""
            let bytes = redaction.redact(body: responseBody, mimeType: mimeType)
            var content = HARArchive.Content(size: bytes.count, mimeType: mimeType)
            if let text = HARArchive.text(bytes, mimeType: mimeType) {
                content.text = scrub(text)
                content.size = content.text?.utf8.count ?? 0
            } else {
                content.text = bytes.base64EncodedString()
                content.encoding = "base64"
            }
            var bodySize = responseBody.count
            if response.headers["Content-Encoding"].map({ $0.lowercased() != "identity" }) == true {
                // Decoded by the transport: the size on the wire is the announced one, when announced.
                bodySize = response.headers["Content-Length"].flatMap(Int.init) ?? -1
                if bodySize >= 0 { content.compression = responseBody.count - bodySize }
            }
            harResponse = HARArchive.Response(
                status: response.status, statusText: HTTPStatus.reason(response.status), httpVersion: version,
                cookies: HARArchive.cookies(setCookies: headers.values(for: "Set-Cookie")),
                headers: headers.map { HARArchive.NameValue(name: $0.name, value: $0.value) }, content: content,
                redirectURL: (300..<400).contains(response.status) ? headers["Location"] ?? "" : "",
                headersSize: -1, bodySize: bodySize, chunks: chunks,
                error: recordedError,
                finalURL: response.url == request.url ? nil : scrub(redaction.redact(response.url).absoluteString))
        } else {
            harResponse = HARArchive.Response(
                status: 0, statusText: "", httpVersion: version, content: HARArchive.Content(), bodySize: -1,
                error: recordedError)
        }
        let total = metrics.map { HARArchive.milliseconds($0.total) } ?? HARArchive.milliseconds(elapsed)
        self.init(
            startedDateTime: HARArchive.timestamp(startedAt), time: total, request: harRequest,
            response: harResponse, timings: HARArchive.timings(metrics, total: total),
            serverIPAddress: HARArchive.ipAddress(request.url), transport: transport)
    }
}

extension HARArchive {
    /// "HTTP/1.1", "HTTP/2": HAR's spelling of a transport's version ("1.1", "2"); "HTTP/1.1" when unknown.
    static func httpVersion(_ version: String?) -> String {
        guard let version, !version.isEmpty else { return "HTTP/1.1" }
        return "HTTP/" + version
    }

    /// A transport's spelling ("1.1", "2") of a HAR version ("HTTP/1.1", "http/2.0", "h2", "HTTP/2").
    static func transportVersion(_ version: String) -> String? {
        var text = version.lowercased()
        if text == "h2" || text == "h2c" { return "2" }
        if text == "h3" { return "3" }
        if text.hasPrefix("http/") { text.removeFirst(5) }
        if text.hasSuffix(".0") { text.removeLast(2) }
        return ["1.0", "1.1", "1", "2", "3"].contains(text) ? (text == "1" ? "1.0" : text) : nil
    }

    /// The body as text when its media type is textual (or it has none) and it is valid UTF-8.
    static func text(_ data: Data, mimeType: String) -> String? {
        let type = mimeType.lowercased()
        let textual =
            type.isEmpty || type.hasPrefix("text/") || type.contains("json") || type.contains("xml")
            || type.contains("javascript") || type.contains("x-www-form-urlencoded") || type.contains("charset=utf-8")
        guard textual else { return nil }
        return String(validating: data, as: UTF8.self)
    }

    static func query(_ url: URL) -> [NameValue] {
        (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map {
            NameValue(name: $0.name, value: $0.value ?? "")
        }
    }

    static func cookies(_ headerValues: [String]) -> [Cookie] {
        headerValues.flatMap { $0.split(separator: ";") }.compactMap { pair in
            let trimmed = pair.trimmingCharacters(in: .whitespaces)
            guard let equals = trimmed.firstIndex(of: "=") else { return nil }
            return Cookie(name: String(trimmed[..<equals]), value: String(trimmed[trimmed.index(after: equals)...]))
        }
    }

    static func cookies(setCookies values: [String]) -> [Cookie] {
        values.compactMap { value in
            var parts = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }[...]
            guard let first = parts.popFirst(), let equals = first.firstIndex(of: "=") else { return nil }
            var cookie = Cookie(name: String(first[..<equals]), value: String(first[first.index(after: equals)...]))
            for attribute in parts {
                let pieces = attribute.split(separator: "=", maxSplits: 1).map(String.init)
                switch pieces[0].lowercased() {
                case "path": cookie.path = pieces.count > 1 ? pieces[1] : nil
                case "domain": cookie.domain = pieces.count > 1 ? pieces[1] : nil
                case "httponly": cookie.httpOnly = true
                case "secure": cookie.secure = true
                default: break
                }
            }
            return cookie
        }
    }

    /// The host when it is an IP literal: the transports do not report the address they connected to.
    static func ipAddress(_ url: URL) -> String? {
        guard let host = url.host else { return nil }
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if bare.contains(":") { return bare }
        let parts = bare.split(separator: ".")
        return parts.count == 4 && parts.allSatisfy({ UInt8($0) != nil }) ? bare : nil
    }

    /// A duration as HAR writes one, in milliseconds to the microsecond; at most a day, the longest a file may give
    /// (`maximumMilliseconds`), so that a recording always replays.
    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        let milliseconds = ((Double(seconds) * 1000 + Double(attoseconds) / 1e15) * 1000).rounded() / 1000
        return min(max(0, milliseconds), maximumMilliseconds)
    }

    /// A HAR duration as a `Duration`: 0 for a negative one (-1: not applicable), at most a day
    /// (`maximumMilliseconds`), so that no number converts past what an `Int64` holds.
    static func duration(milliseconds: Double) -> Duration {
        guard milliseconds > 0 else { return .zero }
        return .microseconds(Int64((min(milliseconds, maximumMilliseconds) * 1000).rounded()))
    }

    /// HAR timings from a transport's metrics: connect up to `connected`, wait up to `firstByte`, receive after.
    static func timings(_ metrics: TransportMetrics?, total: Double) -> Timings {
        guard let metrics else { return Timings(send: 0, wait: total, receive: 0) }
        let connected = metrics.connected.map(milliseconds)
        let firstByte = metrics.firstByte.map(milliseconds) ?? total
        let connect: Double = metrics.reusedConnection == true ? -1 : (connected ?? -1)
        let wait = max(0, firstByte - (connected ?? 0))
        let receive = max(0, total - firstByte)
        return Timings(blocked: -1, dns: -1, connect: connect, send: 0, wait: wait, receive: receive, ssl: -1)
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
