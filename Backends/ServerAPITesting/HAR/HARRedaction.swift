import Foundation
import ServerAPIKit

/// What a recording replaces before anything is written: credentials by default, and the headers, query
/// parameters and JSON body fields a test names.
///
/// ```swift
/// let redaction = HARRedaction(headers: ["X-API-Key"], queryParameters: ["token"], jsonFields: ["password"])
/// ```
/// By default the values of `Authorization` and `Proxy-Authorization` (the scheme is kept: `Bearer REDACTED`),
/// `Cookie` and `Set-Cookie` (each cookie's name and attributes are kept: `session=REDACTED; Path=/`) are
/// replaced. Named headers are replaced whole, named query parameters keep their name, and a JSON body
/// (request or response) has the value of every named key replaced, at any depth.
///
/// A `ReplayingTransport` applies the same redaction to the requests it is asked, so a request whose secret
/// was redacted in the file still matches its entry.
public struct HARRedaction: Sendable, Hashable {
    /// The headers whose values are replaced (compared without case).
    public var headers: Set<String>
    /// The query parameters whose values are replaced.
    public var queryParameters: Set<String>
    /// The JSON object keys whose values are replaced, at any depth of a JSON body.
    public var jsonFields: Set<String>
    /// What replaces a value.
    public var replacement: String

    /// The credential headers redacted by default.
    public static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// Redacts the credential headers and, besides, these.
    /// - Parameters:
    ///   - headers: More headers to redact.
    ///   - queryParameters: Query parameters to redact.
    ///   - jsonFields: JSON object keys to redact in request and response bodies.
    ///   - replacement: What replaces a value.
    ///   - includingCredentials: Whether `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` are
    ///     redacted too (`true` unless a test really means to keep them).
    public init(
        headers: Set<String> = [], queryParameters: Set<String> = [], jsonFields: Set<String> = [],
        replacement: String = "REDACTED", includingCredentials: Bool = true
    ) {
        self.headers = Set(headers.map { $0.lowercased() }).union(includingCredentials ? Self.credentialHeaders : [])
        self.queryParameters = queryParameters
        self.jsonFields = jsonFields
        self.replacement = replacement
    }

    /// Credentials only: the default.
    public static let `default` = HARRedaction()

    /// Nothing redacted: what `sapi --har --show-credentials` writes.
    public static let none = HARRedaction(includingCredentials: false)

    /// Whether nothing is redacted.
    public var isEmpty: Bool { headers.isEmpty && queryParameters.isEmpty && jsonFields.isEmpty }

    /// Whether every credential is redacted: the credential headers, and with `Authorization` the password
    /// of a URL's user-info. A file recorded without it is written readable by its owner only (0600).
    public var redactsCredentials: Bool { headers.isSuperset(of: Self.credentialHeaders) }

    // MARK: Applying

    /// A header's value as it is written.
    /// - Parameters:
    ///   - name: The header's name.
    ///   - value: Its value.
    public func redact(header name: String, value: String) -> String {
        let lowered = name.lowercased()
        guard headers.contains(lowered) else { return value }
        switch lowered {
        case "authorization", "proxy-authorization":
            // The scheme says how the call authenticated; only the credentials are secret.
            if let space = value.firstIndex(of: " ") { return String(value[..<space]) + " " + replacement }
            return replacement
        case "cookie":
            return value.split(separator: ";").map { pair in
                let trimmed = pair.trimmingCharacters(in: .whitespaces)
                guard let equals = trimmed.firstIndex(of: "=") else { return replacement }
                return String(trimmed[..<equals]) + "=" + replacement
            }.joined(separator: "; ")
        case "set-cookie":
            var parts = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            if let equals = parts.first?.firstIndex(of: "=") {
                parts[0] = String(parts[0][..<equals]) + "=" + replacement
            } else if !parts.isEmpty {
                parts[0] = replacement
            }
            return parts.joined(separator: ";")
        default:
            return replacement
        }
    }

    /// The headers as they are written.
    public func redact(_ fields: HTTPHeaders) -> HTTPHeaders {
        guard !headers.isEmpty else { return fields }
        return HTTPHeaders(
            fields.map { HTTPHeaders.Field(name: $0.name, value: redact(header: $0.name, value: $0.value)) })
    }

    /// The URL with the password of its user-info replaced when `Authorization` is redacted (it is a
    /// credential of the same kind), and the named query parameters' values replaced (order and encoding of
    /// the rest kept).
    public func redact(_ url: URL) -> URL {
        var url = url
        if headers.contains("authorization"), url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        {
            components.percentEncodedPassword =
                replacement.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "REDACTED"
            url = components.url ?? url
        }
        guard !queryParameters.isEmpty,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let items = components.percentEncodedQueryItems
        else { return url }
        var changed = false
        components.percentEncodedQueryItems = items.map { item in
            let name = item.name.removingPercentEncoding ?? item.name
            guard queryParameters.contains(name), item.value != nil else { return item }
            changed = true
            return URLQueryItem(name: item.name, value: replacement)
        }
        return changed ? (components.url ?? url) : url
    }

    /// A body with the named JSON fields' values replaced; other bodies, and JSON with none of them, unchanged.
    /// - Parameters:
    ///   - body: The bytes.
    ///   - mimeType: Its media type; only JSON types (`application/json`, `…+json`) are looked into.
    public func redact(body: Data, mimeType: String) -> Data {
        guard !jsonFields.isEmpty, !body.isEmpty, Self.isJSON(mimeType),
            let value = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        else { return body }
        var changed = false
        let redacted = redact(json: value, changed: &changed)
        guard changed,
            let data = try? JSONSerialization.data(withJSONObject: redacted, options: [.sortedKeys, .fragmentsAllowed])
        else { return body }
        return data
    }

    private func redact(json: Any, changed: inout Bool) -> Any {
        if let object = json as? [String: Any] {
            var copy: [String: Any] = [:]
            for (key, value) in object {
                if jsonFields.contains(key) {
                    copy[key] = replacement
                    changed = true
                } else {
                    copy[key] = redact(json: value, changed: &changed)
                }
            }
            return copy
        }
        if let array = json as? [Any] { return array.map { redact(json: $0, changed: &changed) } }
        return json
    }

    // MARK: Echoed secrets

    /// The secret values a request carries that this redaction replaces: the credentials after their scheme,
    /// cookie values, named headers, query parameters and JSON fields. A server that echoes its request
    /// (httpbin, a debugging endpoint, an error page) would put them in the response: `scrub` removes them.
    /// - Parameters:
    ///   - fields: The request's headers.
    ///   - url: The request's URL.
    ///   - body: The request's body.
    ///   - mimeType: The body's media type.
    public func secrets(headers fields: HTTPHeaders, url: URL, body: Data, mimeType: String) -> [String] {
        var found: [String] = []
        for field in fields where headers.contains(field.name.lowercased()) {
            switch field.name.lowercased() {
            case "authorization", "proxy-authorization":
                // The credentials after the scheme, as `redact(header:value:)` keeps the scheme.
                if let space = field.value.firstIndex(of: " ") {
                    found.append(field.value[field.value.index(after: space)...].trimmingCharacters(in: .whitespaces))
                } else {
                    found.append(field.value)
                }
            case "cookie":
                for pair in field.value.split(separator: ";") {
                    if let equals = pair.firstIndex(of: "=") {
                        found.append(String(pair[pair.index(after: equals)...]))
                    }
                }
            case "set-cookie":
                let first = field.value.split(separator: ";").first ?? ""
                if let equals = first.firstIndex(of: "=") { found.append(String(first[first.index(after: equals)...])) }
            default:
                found.append(field.value)
            }
        }
        if headers.contains("authorization"),
            let password = URLComponents(url: url, resolvingAgainstBaseURL: false)?.password
        {
            found.append(password)
        }
        if !queryParameters.isEmpty, let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems {
            for item in items where queryParameters.contains(item.name) {
                if let value = item.value { found.append(value) }
            }
        }
        if !jsonFields.isEmpty, Self.isJSON(mimeType),
            let value = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        {
            collectJSONSecrets(value, into: &found)
        }
        // Short values ("1", "yes") would blank out unrelated text; a secret is longer than that.
        return Array(Set(found.filter { $0.count >= 4 && $0 != replacement })).sorted { $0.count > $1.count }
    }

    private func collectJSONSecrets(_ json: Any, into found: inout [String]) {
        if let object = json as? [String: Any] {
            for (key, value) in object {
                if jsonFields.contains(key) {
                    if let text = value as? String {
                        found.append(text)
                    } else if let number = value as? NSNumber {
                        found.append(number.stringValue)
                    }
                } else {
                    collectJSONSecrets(value, into: &found)
                }
            }
        } else if let array = json as? [Any] {
            for value in array { collectJSONSecrets(value, into: &found) }
        }
    }

    /// Text (an error message) with the URLs in it redacted as `redact(_:)` redacts a URL.
    func redact(text: String) -> String {
        let text =
            headers.contains("authorization")
            ? SecretRedaction.redactPasswords(in: text, replacement: replacement) : text
        guard !queryParameters.isEmpty else { return text }
        return text.split(separator: " ", omittingEmptySubsequences: false).map { word in
            guard word.contains("://"), let url = URL(string: String(word)) else { return String(word) }
            return redact(url).absoluteString
        }.joined(separator: " ")
    }

    /// Text with every occurrence of the secrets (and of their percent-encoded forms) replaced.
    /// - Parameters:
    ///   - text: The text.
    ///   - secrets: What `secrets(headers:url:body:mimeType:)` found.
    public func scrub(_ text: String, secrets: [String]) -> String {
        var text = text
        for secret in secrets {
            text = text.replacingOccurrences(of: secret, with: replacement)
            if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != secret {
                text = text.replacingOccurrences(of: encoded, with: replacement)
            }
        }
        return text
    }

    /// Whether a media type is JSON (`application/json`, `application/problem+json`, …).
    static func isJSON(_ mimeType: String) -> Bool {
        let type =
            mimeType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type == "application/json" || type.hasSuffix("+json") || type == "text/json"
    }
}
