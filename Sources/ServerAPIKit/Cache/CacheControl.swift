#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `Cache-Control` directives of a request or a response (RFC 9111 §5.2), read from headers.
///
/// Parsed as §5.2 says: directive names are case-insensitive; an argument is a token or a quoted
/// string (a comma inside quotes does not end a directive); when a directive appears more than once,
/// the first occurrence counts. An argument that is not a non-negative integer where one is required
/// (`max-age=-1`, `max-age='60'`, `max-age=1.5`) makes the response stale (`maxAge == 0`), as §4.2.1
/// allows; in a request such a directive is ignored. Which directives the manager's cache acts on and
/// how is said in the Caching article.
package struct CacheControl: Sendable, Hashable {
    /// The response must not be stored (`no-store`; in a request: neither stored nor the response to it).
    package var noStore = false
    /// A stored response must be revalidated before each use (`no-cache`); in a request, the cache
    /// revalidates instead of answering from storage. In a response, the qualified form
    /// (`no-cache="Set-Cookie"`) sets `noCacheFields` instead: only those fields need revalidation.
    package var noCache = false
    /// The field names of a qualified `no-cache` in a response, lower-cased: the manager's cache stores the
    /// response without them.
    package var noCacheFields: [String] = []
    /// Seconds the response stays fresh from when it was generated (`max-age`); in a request, the
    /// oldest stored response the client accepts.
    package var maxAge: Int?
    /// A shared cache's `max-age` (`s-maxage`); a private cache ignores it.
    package var sharedMaxAge: Int?
    /// Once stale, the response is never served without a successful revalidation (`must-revalidate`).
    package var mustRevalidate = false
    /// `must-revalidate` for shared caches only (`proxy-revalidate`).
    package var proxyRevalidate = false
    /// The response is for one user (`private`); a private cache may store it.
    package var isPrivate = false
    /// Any cache may store the response, even a status that is not cacheable by default (`public`).
    package var isPublic = false
    /// The response will not change while fresh (`immutable`).
    package var immutable = false
    /// Seconds past freshness in which the response may be served while it is revalidated in the
    /// background (`stale-while-revalidate`, RFC 5861).
    package var staleWhileRevalidate: Int?
    /// Seconds past freshness in which the response may be served when revalidation fails
    /// (`stale-if-error`, RFC 5861).
    package var staleIfError: Int?
    /// Store only when the status's caching rules are understood, whatever `no-store` says (`must-understand`).
    package var mustUnderstand = false
    /// In a request: a stale response is accepted, up to this many seconds past freshness
    /// (`max-stale=N`), or any stale response (`max-stale` alone, `Int.max`).
    package var maxStale: Int?
    /// In a request: the response must stay fresh for at least this many seconds more (`min-fresh`).
    package var minFresh: Int?
    /// In a request: answer only from storage (`only-if-cached`).
    package var onlyIfCached = false

    /// No directives.
    package init() {}

    /// Reads every `Cache-Control` field of `headers`.
    /// - Parameters:
    ///   - headers: Request or response headers.
    ///   - isRequest: Whether they are a request's: an invalid `max-age` is then ignored rather than
    ///     making the response stale.
    package init(_ headers: HTTPHeaders, isRequest: Bool = false) {
        // A handful of directives: a list is cheaper than a set (this runs on every cache hit).
        var seen: [String] = []
        for value in headers.values(for: "Cache-Control") {
            Self.forEachDirective(in: value) { name, argument in
                // Every `no-cache` counts: a plain one anywhere wins over field names, which add up.
                if name == "no-cache" {
                    applyNoCache(argument, isRequest: isRequest)
                    return
                }
                guard !seen.contains(name) else { return }
                seen.append(name)
                apply(name, argument, isRequest: isRequest)
            }
        }
    }

    /// Whether any directive was present.
    package var isEmpty: Bool { self == CacheControl() }

    private mutating func apply(_ name: String, _ argument: Argument?, isRequest: Bool) {
        switch name {
        case "no-store": noStore = true
        case "max-age":
            let seconds = Self.seconds(argument)
            maxAge = isRequest ? seconds : (seconds ?? 0)
        case "s-maxage": sharedMaxAge = Self.seconds(argument) ?? 0
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "private": isPrivate = true
        case "public": isPublic = true
        case "immutable": immutable = true
        case "must-understand": mustUnderstand = true
        case "stale-while-revalidate": staleWhileRevalidate = Self.seconds(argument)
        case "stale-if-error": staleIfError = Self.seconds(argument)
        case "max-stale": maxStale = argument == nil ? Int.max : Self.seconds(argument)
        case "min-fresh": minFresh = Self.seconds(argument)
        case "only-if-cached": onlyIfCached = true
        default: break
        }
    }

    /// `no-cache`: plain (or in a request, or with no field name) the whole response; with field names, those.
    private mutating func applyNoCache(_ argument: Argument?, isRequest: Bool) {
        let fields =
            argument?.text.split(separator: ",").map { HTTPSyntax.trimmed($0).lowercased() }.filter { !$0.isEmpty }
            ?? []
        if isRequest || fields.isEmpty {
            noCache = true
        } else {
            for field in fields where !noCacheFields.contains(field) { noCacheFields.append(field) }
        }
    }

    /// A directive's argument: its text, and whether it was a quoted string.
    struct Argument: Equatable {
        var text: String
        var quoted: Bool
    }

    /// A delta-seconds argument (RFC 9111 §1.2.2): digits only, token or quoted form; a value too large
    /// to represent is the largest (2^31, as the RFC asks). `nil` when invalid or missing.
    static func seconds(_ argument: Argument?) -> Int? {
        guard let text = argument?.text, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            return nil
        }
        return Int(text).map { min($0, 2_147_483_648) } ?? 2_147_483_648
    }

    /// Calls `body` with each directive of one field value, in order, its name lower-cased. A comma inside a
    /// quoted string does not end a directive; a directive without a name (or with whitespace around its `=`) is
    /// skipped.
    static func forEachDirective(in value: String, _ body: (String, Argument?) -> Void) {
        var bytes = Substring(value).utf8
        while !bytes.isEmpty {
            // The name: up to '=' or ','.
            let nameEnd = bytes.firstIndex { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ",") } ?? bytes.endIndex
            let rawName = Substring(bytes[..<nameEnd])
            var name = String(HTTPSyntax.trimmed(rawName))
            if name.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) {
                name = name.lowercased()
            }
            bytes = bytes[nameEnd...]
            var argument: Argument?
            if bytes.first == UInt8(ascii: "=") {
                bytes = bytes.dropFirst()
                // No whitespace around '=' (RFC 9111 §5.2): `max-age = 5` is not a max-age.
                let spaced =
                    rawName.utf8.last.map(HTTPSyntax.isWhitespace) == true
                    || bytes.first.map(HTTPSyntax.isWhitespace) == true
                if spaced { name = "" }
                if bytes.first == UInt8(ascii: "\"") {
                    // A quoted string: backslash escapes the next byte.
                    var text: [UInt8] = []
                    var index = bytes.index(after: bytes.startIndex)
                    while index < bytes.endIndex, bytes[index] != UInt8(ascii: "\"") {
                        if bytes[index] == UInt8(ascii: "\\"), bytes.index(after: index) < bytes.endIndex {
                            index = bytes.index(after: index)
                        }
                        text.append(bytes[index])
                        index = bytes.index(after: index)
                    }
                    bytes = bytes[(index < bytes.endIndex ? bytes.index(after: index) : index)...]
                    argument = Argument(text: String(decoding: text, as: UTF8.self), quoted: true)
                    // Anything after the closing quote up to the comma is not part of the argument.
                    let comma = bytes.firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
                    bytes = bytes[comma...]
                } else {
                    let end = bytes.firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
                    argument = Argument(text: String(HTTPSyntax.trimmed(Substring(bytes[..<end]))), quoted: false)
                    bytes = bytes[end...]
                }
            }
            if bytes.first == UInt8(ascii: ",") { bytes = bytes.dropFirst() }
            if !name.isEmpty { body(name, argument) }
        }
    }
}
