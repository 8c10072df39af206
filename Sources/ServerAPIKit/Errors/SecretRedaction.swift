#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one redaction of secrets in text a user did not ask for: the password of a URL's user-info, and the
/// values of query keys that carry credentials (`token`, `password`, `api_key`, …). `LoggingPlugin`,
/// `ServerAPIError`'s descriptions, `sapi`'s lines and HAR files all apply it.
package enum SecretRedaction {
    /// What replaces a redacted value.
    package static let redacted = "<redacted>"

    /// Query keys whose values are secrets (compared without case): `LoggingPlugin.defaultRedactedQueryKeys`.
    package static let queryKeys: Set<String> = [
        "token", "access_token", "refresh_token", "id_token", "password", "passwd", "secret", "client_secret",
        "api_key", "apikey", "key", "signature", "sig", "code",
    ]

    /// A URL as text, with its user-info password and the values of `queryKeys` replaced.
    /// - Parameters:
    ///   - url: The URL.
    ///   - queryKeys: The query keys whose values go (lowercased).
    ///   - replacement: What replaces a value.
    package static func redact(
        _ url: URL, queryKeys: Set<String> = SecretRedaction.queryKeys, replacement: String = redacted
    ) -> String {
        var text = redactPasswords(in: url.absoluteString, replacement: replacement)
        guard let mark = text.firstIndex(of: "?") else { return text }
        let hash = text[mark...].firstIndex(of: "#") ?? text.endIndex
        let query = text[text.index(after: mark)..<hash].split(separator: "&", omittingEmptySubsequences: false)
            .map { pair -> String in
                guard let equals = pair.firstIndex(of: "="), isSecret(pair[..<equals], queryKeys) else {
                    return String(pair)
                }
                return String(pair[...equals]) + replacement
            }.joined(separator: "&")
        text = String(text[...mark]) + query + String(text[hash...])
        return text
    }

    /// Text (an error message) with every URL's user-info password replaced, and the value of every
    /// `key=value` whose key is one of `queryKeys`.
    /// - Parameters:
    ///   - text: The text.
    ///   - queryKeys: The query keys whose values go (lowercased).
    ///   - replacement: What replaces a value.
    package static func redact(
        text: String, queryKeys: Set<String> = SecretRedaction.queryKeys, replacement: String = redacted
    ) -> String {
        let text = redactPasswords(in: text, replacement: replacement)
        guard !queryKeys.isEmpty, text.contains("=") else { return text }
        var output = ""
        var rest = Substring(text)
        while let equals = rest.firstIndex(of: "=") {
            let before = rest[..<equals]
            let nameStart = before.lastIndex { !isNameCharacter($0) }.map(before.index(after:)) ?? before.startIndex
            let name = before[nameStart...]
            output += rest[...equals]
            rest = rest[rest.index(after: equals)...]
            guard !name.isEmpty, isSecret(name, queryKeys) else { continue }
            let end = rest.firstIndex { "&\" ]\n)',;".contains($0) } ?? rest.endIndex
            output += replacement
            rest = rest[end...]
        }
        return output + rest
    }

    /// Text with the password of every `scheme://user:password@` in it replaced (the user name stays).
    /// - Parameters:
    ///   - text: The text.
    ///   - replacement: What replaces a password.
    package static func redactPasswords(in text: String, replacement: String = redacted) -> String {
        // Most text has no user-info at all.
        guard text.contains("@"), text.contains("://") else { return text }
        var output = ""
        var rest = Substring(text)
        while let scheme = rest.firstRange(of: "://") {
            output += rest[..<scheme.upperBound]
            rest = rest[scheme.upperBound...]
            // The authority ends at the path, query, fragment, or anything that cannot be in a URL.
            let end = rest.firstIndex { "/?#\"'<> \n\t]".contains($0) } ?? rest.endIndex
            let authority = rest[..<end]
            guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
                continue
            }
            output += authority[...colon] + replacement
            rest = rest[at...]
        }
        return output + rest
    }

    private static func isSecret(_ name: Substring, _ keys: Set<String>) -> Bool {
        keys.contains((PercentEncoding.decode(name) ?? String(name)).lowercased())
    }

    private static func isNameCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_" || character == "-" || character == "%"
            || character == "."
    }
}
