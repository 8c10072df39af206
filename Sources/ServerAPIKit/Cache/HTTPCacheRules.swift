#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The rules of HTTP caching (RFC 9111) for a private cache, as pure functions: what may be stored, which
/// fields are kept, how fresh and how old a stored response is, whether it may answer a request, and what an
/// unsafe request invalidates. `CacheDecision` applies them; the caches only store and find entries. How the
/// seeds' cache modes layer over them is in the Caching article.
enum HTTPCacheRules {
    /// Statuses that may be stored and reused with heuristic freshness (RFC 9110 §15.1). 206 is left out:
    /// this cache never stores a partial response.
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Statuses whose caching rules this cache understands, for `must-understand`.
    static let understood: Set<Int> = heuristicallyCacheable.union([302, 303, 307, 400, 403, 500, 502, 503, 504])

    /// Fields never stored with a response (RFC 9111 §3.1): the connection's own, besides those `Connection` names.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "te", "transfer-encoding", "upgrade", "proxy-connection", "proxy-authenticate",
        "proxy-authentication-info", "proxy-authorization", "trailer",
    ]

    /// Whether a method is safe (RFC 9110 §9.2.1); any other method invalidates what it names.
    static func isSafe(_ method: HTTPMethod) -> Bool {
        method == .get || method == .head || method == .options || method.rawValue == "TRACE"
    }

    /// Whether a response may be stored (RFC 9111 §3).
    /// - Parameters:
    ///   - status: The response's status.
    ///   - response: Its `Cache-Control`.
    ///   - headers: Its headers (for `Expires`, `Last-Modified`).
    ///   - request: The request's `Cache-Control`.
    ///   - requestHeaders: The request's headers (for `Range`).
    static func mayStore(
        status: Int, response: CacheControl, headers: HTTPHeaders, request: CacheControl, requestHeaders: HTTPHeaders
    ) -> Bool {
        // Never a partial response, nor the answer to a request for part of one: served as a whole it is wrong data.
        guard status != 206, !requestHeaders.contains("Range"), (200..<600).contains(status) else { return false }
        if request.noStore { return false }
        if response.mustUnderstand {
            guard understood.contains(status) else { return false }
        } else if response.noStore {
            return false
        }
        if Vary(headers).isStar { return false }
        if hasExplicitFreshness(response, headers) { return true }
        // Without explicit freshness: a success always (the manager's `defaultCacheTTL`, the offline modes), another
        // status that heuristics may keep fresh only when it has a `Last-Modified` to base them on.
        guard heuristicallyCacheable.contains(status) || response.isPublic else { return false }
        return (200..<300).contains(status) || headers.contains("Last-Modified")
    }

    /// The byte range a request's `Range` asks of a whole body of `length` bytes (RFC 9110 §14.1.2): one
    /// `bytes=first-last`, `bytes=first-` or `bytes=-suffix`, clamped to the body; `nil` for anything else
    /// (several ranges, another unit, an unsatisfiable range), which only the server can answer.
    static func byteRange(_ value: String, length: Int) -> Range<Int>? {
        let trimmed = HTTPSyntax.trimmed(value)
        guard trimmed.lowercased().hasPrefix("bytes="), length > 0 else { return nil }
        let spec = HTTPSyntax.trimmed(trimmed.dropFirst(6))
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let firstText = HTTPSyntax.trimmed(spec[..<dash])
        let lastText = HTTPSyntax.trimmed(spec[spec.index(after: dash)...])
        func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return Int(text)
        }
        if firstText.isEmpty {
            guard let suffix = number(lastText), suffix > 0 else { return nil }
            return max(0, length - suffix)..<length
        }
        guard let first = number(firstText), first < length else { return nil }
        if lastText.isEmpty { return first..<length }
        guard let last = number(lastText), last >= first else { return nil }
        return first..<min(last + 1, length)
    }

    /// Whether a request's own preconditions are met by a stored response, so that the cache answers 304
    /// itself (RFC 9111 §4.3.2): `If-None-Match` first (weak comparison, `*` matches any), else
    /// `If-Modified-Since` against the stored `Last-Modified`, or its `Date` when it has none. `nil` when the
    /// request has no precondition this cache evaluates.
    static func notModified(request: HTTPHeaders, stored: HTTPHeaders) -> Bool? {
        let noneMatch = request.values(for: "If-None-Match")
        if !noneMatch.isEmpty {
            guard let etag = stored["ETag"].map({ comparableTag(HTTPSyntax.trimmed($0)) }) else { return false }
            let tags = noneMatch.flatMap { $0.split(separator: ",") }.map { HTTPSyntax.trimmed($0) }
            return tags.contains("*") || tags.contains { comparableTag($0) == etag }
        }
        if let value = request["If-Modified-Since"], let since = HTTPDate.parse(value) {
            guard let modified = (stored["Last-Modified"] ?? stored["Date"]).flatMap({ HTTPDate.parse($0) }) else {
                return false
            }
            return modified <= since
        }
        return nil
    }

    /// An entity tag as the weak comparison sees it (RFC 9110 §8.8.3.2): its opaque text, without the weakness
    /// prefix and the quotes. A tag written without quotes (invalid, but some servers send one and some callers write
    /// one) is read as the same tag quoted, so that `abcdef` and `"abcdef"` match; what is sent keeps the quotes as
    /// they were written.
    static func comparableTag(_ tag: Substring) -> Substring {
        let opaque = tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
        guard opaque.count >= 2, opaque.hasPrefix("\""), opaque.hasSuffix("\"") else { return opaque }
        return opaque.dropFirst().dropLast()
    }

    /// Whether the response says how long it stays fresh (`max-age` or `Expires`).
    static func hasExplicitFreshness(_ control: CacheControl, _ headers: HTTPHeaders) -> Bool {
        control.maxAge != nil || headers.contains("Expires")
    }

    /// The fields a stored response keeps: all but the hop-by-hop ones, those `Connection` names, and those a
    /// qualified `no-cache` names (RFC 9111 §5.2.2.4: they may not be reused without revalidation, so the rest of
    /// the response is stored without them and may be reused as it is).
    static func storedHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
        var excluded = hopByHop
        for value in headers.values(for: "Connection") {
            for name in value.split(separator: ",") { excluded.insert(HTTPSyntax.trimmed(name).lowercased()) }
        }
        if headers.contains("Cache-Control") { excluded.formUnion(CacheControl(headers).noCacheFields) }
        guard headers.contains(where: { excluded.contains($0.name.lowercased()) }) else { return headers }
        return HTTPHeaders(headers.filter { !excluded.contains($0.name.lowercased()) })
    }

    /// How long a response stays fresh from its generation (RFC 9111 §4.2.1): `max-age`, else `Expires` minus
    /// `Date` (an invalid `Expires` is already expired), else a tenth of the time since `Last-Modified` for a
    /// status cacheable by heuristics; `nil` when none of these applies.
    /// - Parameters:
    ///   - status: The response's status.
    ///   - control: Its `Cache-Control`.
    ///   - headers: Its headers.
    ///   - responseTime: When it was received (stands in for a missing or invalid `Date`).
    static func freshnessLifetime(
        status: Int, control: CacheControl, headers: HTTPHeaders, responseTime: Date
    ) -> TimeInterval? {
        if let maxAge = control.maxAge { return TimeInterval(maxAge) }
        let date = dateValue(headers) ?? responseTime
        let expires = headers.values(for: "Expires")
        if !expires.isEmpty {
            // Several lines, or one that is not an HTTP-date: expired.
            guard expires.count == 1, let expiry = HTTPDate.parse(expires[0], now: responseTime) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        if heuristicallyCacheable.contains(status) || control.isPublic,
            let lastModified = headers["Last-Modified"].flatMap({ HTTPDate.parse($0, now: responseTime) })
        {
            return max(0, date.timeIntervalSince(lastModified) / 10)
        }
        return nil
    }

    /// The response's `Date`, when it is one valid HTTP-date.
    static func dateValue(_ headers: HTTPHeaders) -> Date? {
        let values = headers.values(for: "Date")
        guard values.count == 1 else { return nil }
        return HTTPDate.parse(values[0])
    }

    /// The `Age` a response arrived with (RFC 9111 §5.1): the first field line's first value (before any
    /// parameter), when it is a non-negative integer (larger than 2^31 counts as 2^31); anything else is ignored.
    static func ageValue(_ headers: HTTPHeaders) -> TimeInterval {
        guard let line = headers.values(for: "Age").first else { return 0 }
        let member = line.split(separator: ",", omittingEmptySubsequences: false).first ?? ""
        // A parameter (`3600;foo`) does not hide the number before it.
        let first = HTTPSyntax.trimmed(member.split(separator: ";", omittingEmptySubsequences: false).first ?? "")
        guard !first.isEmpty, first.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return 0 }
        return TimeInterval(Int(first).map { min($0, 2_147_483_648) } ?? 2_147_483_648)
    }

    /// The corrected initial age of a response (RFC 9111 §4.2.3): how old it already was when received.
    /// - Parameters:
    ///   - headers: Its headers (`Date`, `Age`).
    ///   - requestTime: When the request that got it was sent.
    ///   - responseTime: When it was received.
    static func initialAge(headers: HTTPHeaders, requestTime: Date, responseTime: Date) -> TimeInterval {
        let apparentAge = max(0, responseTime.timeIntervalSince(dateValue(headers) ?? responseTime))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        return max(apparentAge, ageValue(headers) + responseDelay)
    }

    /// Stored headers updated with a 304's or a HEAD's (RFC 9111 §3.2, §4.3.4): every field it carries replaces
    /// the stored one, but for those that describe the stored body's framing and the hop-by-hop ones.
    static func merge(_ stored: HTTPHeaders, _ update: HTTPHeaders) -> HTTPHeaders {
        var merged = stored
        let kept: Set<String> = ["content-length", "content-encoding", "content-range"]
        let names = Set(storedHeaders(update).map { $0.name.lowercased() }).subtracting(kept)
        for name in names {
            merged.remove(name: name)
            for value in update.values(for: name) { merged.add(name: name, value: value) }
        }
        return merged
    }

    /// Whether a `200` to a `HEAD` describes the same representation as a stored `GET` response (RFC 9111 §4.3.5):
    /// the same `ETag` when either has one, else the same `Last-Modified` when either has one, and the body's length
    /// when the HEAD gives a `Content-Length`.
    /// - Parameters:
    ///   - stored: The stored response's fields.
    ///   - bodyLength: The stored body's length in bytes.
    ///   - head: The HEAD response's fields.
    static func headDescribes(stored: HTTPHeaders, bodyLength: Int, head: HTTPHeaders) -> Bool {
        if stored.contains("ETag") || head.contains("ETag") {
            guard let etag = head["ETag"], HTTPSyntax.trimmed(etag) == stored["ETag"].map({ HTTPSyntax.trimmed($0) })
            else {
                return false
            }
        } else if stored.contains("Last-Modified") || head.contains("Last-Modified") {
            guard let modified = head["Last-Modified"].flatMap({ HTTPDate.parse($0) }),
                modified == stored["Last-Modified"].flatMap({ HTTPDate.parse($0) })
            else { return false }
        }
        guard let length = head["Content-Length"] else { return true }
        return Int(HTTPSyntax.trimmed(length)) == bodyLength
    }

    /// The URLs an unsafe request's non-error response invalidates (RFC 9111 §4.4): the target URL, and the
    /// `Location` and `Content-Location` URLs of the same origin. Empty for a safe method or an error status.
    static func invalidatedURLs(method: HTTPMethod, status: Int, url: URL, headers: HTTPHeaders) -> [URL] {
        guard !isSafe(method), (200..<400).contains(status) else { return [] }
        var urls = [url]
        for name in ["Location", "Content-Location"] {
            guard let value = headers[name], let target = URL(string: value, relativeTo: url)?.absoluteURL,
                ServerOrigin.same(target, url), target != url
            else { continue }
            urls.append(target)
        }
        return urls
    }
}

/// A response's `Vary` (RFC 9110 §12.5.5): the request fields its content depends on.
struct Vary: Equatable {
    /// The field names, lower-cased, sorted, without duplicates.
    var names: [String]
    /// Whether `*` was among them: the response fits no later request.
    var isStar: Bool

    init(_ headers: HTTPHeaders) {
        var names: Set<String> = []
        var star = false
        for value in headers.values(for: "Vary") {
            for name in value.split(separator: ",") {
                let trimmed = HTTPSyntax.trimmed(name).lowercased()
                if trimmed == "*" { star = true } else if !trimmed.isEmpty { names.insert(trimmed) }
            }
        }
        self.names = names.sorted()
        self.isStar = star
    }
}

extension CacheVariant {
    /// The variant of a request for the given field names: each name with the request's value (its field
    /// lines joined by ", ", normalized as `normalized(_:name:)` says), or none when the request does not carry it.
    init(names: [String], request: HTTPHeaders) {
        self.init(
            fields: names.map { name in
                let values = request.values(for: name)
                return Field(name: name, value: values.isEmpty ? nil : Self.normalized(values, name: name))
            })
    }

    /// The field names this variant depends on.
    var names: [String] { fields.map(\.name) }

    /// Whether a request selects this variant (RFC 9111 §4.1): every field has the same normalized value, or is
    /// absent from both; or, for `Accept-Language`, the stored response's `Content-Language` is a language the
    /// request prefers most (the selection RFC 9111 §4.1 allows "using knowledge of the semantics of the header
    /// field").
    /// - Parameters:
    ///   - request: The request's headers.
    ///   - stored: The stored response's headers (for its `Content-Language`).
    func matches(_ request: HTTPHeaders, stored: HTTPHeaders = [:]) -> Bool {
        fields.allSatisfy { field in
            let values = request.values(for: field.name)
            guard let value = field.value else { return values.isEmpty }
            // The same text as stored needs no normalizing (the common case, checked on every hit).
            if values.count == 1, values[0] == value { return true }
            guard !values.isEmpty else { return false }
            if Self.normalized(values, name: field.name) == value { return true }
            guard field.name == "accept-language", let language = stored["Content-Language"] else { return false }
            return Self.prefers(values, language: language)
        }
    }

    /// A field's value as variants compare it: list members trimmed; for `Accept-Language`, its language ranges
    /// lower-cased (they are case-insensitive, RFC 4647 §2) with their weights, most preferred first and ranges of
    /// one weight in alphabetical order (RFC 9110 §12.5.4 gives them no order), so that `en, de` and `De, EN`
    /// select the same variant.
    static func normalized(_ values: [String], name: String = "") -> String {
        let members = values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { HTTPSyntax.trimmed($0) }
        guard name == "accept-language", let ranges = languageRanges(members) else {
            return members.joined(separator: ", ")
        }
        return ranges.sorted { $0.weight != $1.weight ? $0.weight > $1.weight : $0.range < $1.range }
            .map { $0.weight == 1000 ? $0.range : "\($0.range);q=\(Self.weightText($0.weight))" }
            .joined(separator: ", ")
    }

    /// Whether `language` (a `Content-Language` value naming one language) is among the ranges an
    /// `Accept-Language` weighs highest.
    static func prefers(_ values: [String], language: String) -> Bool {
        let members = values.flatMap { $0.split(separator: ",") }.map { HTTPSyntax.trimmed($0) }
        let tag = HTTPSyntax.trimmed(Substring(language)).lowercased()
        guard !tag.isEmpty, !tag.contains(","), let ranges = languageRanges(members),
            let best = ranges.map(\.weight).max(), best > 0
        else { return false }
        return ranges.contains { $0.weight == best && $0.range == tag }
    }

    /// The language ranges of an `Accept-Language`'s members, lower-cased, with their weights in thousandths
    /// (RFC 9110 §12.4.2); `nil` when a member is not `range` or `range;q=weight`.
    private static func languageRanges(_ members: [Substring]) -> [(range: String, weight: Int)]? {
        var ranges: [(range: String, weight: Int)] = []
        for member in members where !member.isEmpty {
            let parts = member.split(separator: ";").map { HTTPSyntax.trimmed($0) }
            let range = parts[0].lowercased()
            guard !range.isEmpty,
                range.utf8.allSatisfy({
                    $0 == 45 || $0 == 42 || (48...57).contains($0)
                        || (97...122).contains($0)
                })
            else { return nil }
            var weight = 1000
            if parts.count == 2, parts[1].lowercased().hasPrefix("q=") {
                guard let parsed = qualityValue(parts[1].dropFirst(2)) else { return nil }
                weight = parsed
            } else if parts.count != 1 {
                return nil
            }
            ranges.append((range, weight))
        }
        return ranges
    }

    /// A weight `0`, `0.d`, `0.dd`, `0.ddd`, `1`, `1.0`… (RFC 9110 §12.4.2), in thousandths.
    private static func qualityValue(_ text: Substring) -> Int? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts[0] == "0" || parts[0] == "1" else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 3, fraction.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        while fraction.count < 3 { fraction += "0" }
        let value = (parts[0] == "1" ? 1000 : 0) + (Int(fraction) ?? 0)
        return value <= 1000 ? value : nil
    }

    private static func weightText(_ weight: Int) -> String {
        var digits = String(1000 + weight).dropFirst()
        while digits.hasSuffix("0") { digits = digits.dropLast() }
        return digits.isEmpty ? "0" : "0.\(digits)"
    }
}
