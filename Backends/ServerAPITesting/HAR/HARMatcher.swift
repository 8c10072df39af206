import Foundation
import ServerAPIKit

/// What a request is matched on: method, origin (`ws` and `wss` as `http` and `https`), path, query (order not
/// significant), and the body.
struct HARRequestKey: Sendable, Hashable {
    var method: String
    var origin: String
    var path: String
    var query: [String]
    var body: Data

    /// The key of a request as it is asked (after the recording's redaction, which the file also went through).
    init(_ request: TransportRequest, body: Data, redaction: HARRedaction, ignoredQuery: Set<String>) {
        let url = redaction.redact(request.url)
        let mimeType = request.headers["Content-Type"] ?? ""
        var redacted = redaction.redact(body: body, mimeType: mimeType)
        // As the recording scrubbed the request's secrets from a text body, so is the asked one.
        let secrets = redaction.secrets(headers: request.headers, url: request.url, body: body, mimeType: mimeType)
        if !secrets.isEmpty, let text = HARArchive.text(redacted, mimeType: mimeType) {
            redacted = Data(redaction.scrub(text, secrets: secrets).utf8)
        }
        self.init(method: request.method.rawValue, url: url, body: redacted, ignoredQuery: ignoredQuery)
    }

    /// The key of a recorded request; `nil` when its URL cannot be read.
    init?(_ request: HARArchive.Request, ignoredQuery: Set<String>) {
        guard let url = URL(string: request.url) else { return nil }
        var body = Data()
        if let postData = request.postData {
            if let text = postData.text {
                let base64 = postData.encoding?.lowercased() == "base64"
                body = base64 ? HARArchive.base64Bytes(text) ?? Data() : Data(text.utf8)
            } else if let params = postData.params {
                var components = URLComponents()
                components.queryItems = params.map { URLQueryItem(name: $0.name, value: $0.value ?? "") }
                body = Data((components.percentEncodedQuery ?? "").utf8)
            }
        }
        self.init(method: request.method, url: url, body: body, ignoredQuery: ignoredQuery)
    }

    private init(method: String, url: URL, body: Data, ignoredQuery: Set<String>) {
        self.method = method.uppercased()
        // A WebSocket's handshake is an HTTP request: its `ws://` URL (as browsers record it) is an `http://` one.
        let url = WebSocketHandshakeRule.httpForm(of: url.absoluteString).flatMap(URL.init(string:)) ?? url
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        origin = ServerOrigin(url).description
        let rawPath = components?.percentEncodedPath ?? ""
        path = (rawPath.removingPercentEncoding ?? rawPath).isEmpty ? "/" : (rawPath.removingPercentEncoding ?? rawPath)
        query = (components?.percentEncodedQueryItems ?? []).compactMap { item in
            let name = (item.name.replacingOccurrences(of: "+", with: " ")).removingPercentEncoding ?? item.name
            guard !ignoredQuery.contains(name) else { return nil }
            let value = item.value.map { ($0.replacingOccurrences(of: "+", with: " ")).removingPercentEncoding ?? $0 }
            return value.map { "\(name)=\($0)" } ?? name
        }.sorted()
        self.body = body
    }

    /// What differs from a recorded key, in words; empty when they match.
    func differences(from recorded: HARRequestKey, comparingBody: Bool) -> [String] {
        var differences: [String] = []
        if method != recorded.method { differences.append("method (recorded \(recorded.method))") }
        if origin != recorded.origin { differences.append("origin (recorded \(recorded.origin))") }
        if path != recorded.path { differences.append("path (recorded \(recorded.path))") }
        if query != recorded.query {
            let missing = recorded.query.filter { !query.contains($0) }
            let extra = query.filter { !recorded.query.contains($0) }
            var text = "query ("
            if !missing.isEmpty { text += "recorded " + missing.joined(separator: "&") }
            if !missing.isEmpty && !extra.isEmpty { text += "; " }
            if !extra.isEmpty { text += "not recorded " + extra.joined(separator: "&") }
            if missing.isEmpty && extra.isEmpty { text += "repeated parameters differ" }
            differences.append(text + ")")
        }
        if comparingBody, !Self.sameBody(body, recorded.body) {
            differences.append("body (recorded \(recorded.body.count) bytes, asked \(body.count))")
        }
        return differences
    }

    /// How far a recorded key is: a path counts most, then method and origin, then query and body.
    func distance(to recorded: HARRequestKey, comparingBody: Bool) -> Int {
        var distance = 0
        if path != recorded.path { distance += 8 }
        if method != recorded.method { distance += 4 }
        if origin != recorded.origin { distance += 4 }
        if query != recorded.query { distance += 2 }
        if comparingBody, !Self.sameBody(body, recorded.body) { distance += 1 }
        return distance
    }

    /// Bodies match byte for byte, as the same JSON value (key order and spacing aside), or as the same
    /// form fields in another order.
    static func sameBody(_ lhs: Data, _ rhs: Data) -> Bool {
        if lhs == rhs { return true }
        if let left = try? JSONValue(parsing: lhs), let right = try? JSONValue(parsing: rhs) { return left == right }
        let fields = { (data: Data) -> [Substring]? in
            guard let text = String(validating: data, as: UTF8.self), text.contains("="), !text.contains("\n") else {
                return nil
            }
            return text.split(separator: "&").sorted()
        }
        guard let left = fields(lhs), let right = fields(rhs) else { return false }
        return left == right
    }
}

extension ServerAPIError.Kind {
    /// A `ReplayingTransport` has no recorded entry for the request (its message names the closest one and
    /// what differed).
    public static let notRecorded = ServerAPIError.Kind(rawValue: "not recorded")
}
