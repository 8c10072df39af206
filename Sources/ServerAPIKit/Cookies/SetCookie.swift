#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `Set-Cookie` parser (RFC 6265 §5.2 and §5.3): pure, never throws, and ignores what it cannot read.
package enum SetCookie {
    /// Parses one `Set-Cookie` line received from `url` into the cookie to store.
    /// - Parameters:
    ///   - line: The field value.
    ///   - url: The URL of the response that carried it (its host and path are the defaults).
    ///   - now: The time of receipt, for `Max-Age` and the creation time.
    /// - Returns: The cookie, or `nil` when the line is malformed or not acceptable from `url`
    ///   (no `=`, an empty name, a control character or `;` in the name or value, a `Domain` the host
    ///   does not match or that is a public suffix, a `Secure` cookie from http). An expired cookie is
    ///   returned: storing it deletes the one it replaces.
    package static func parse(_ line: String, from url: URL, now: Date) -> Cookie? {
        guard let host = CookieRules.canonicalHost(of: url) else { return nil }
        let parts = line.split(separator: ";", omittingEmptySubsequences: false)
        guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { return nil }
        let name = String(HTTPSyntax.trimmed(pair[..<equals]))
        let value = String(HTTPSyntax.trimmed(pair[pair.index(after: equals)...]))
        guard !name.isEmpty, isCookieText(name), isCookieText(value) else { return nil }

        var expires: Date?
        var maxAge: Date?
        var domainAttribute: String?
        var path: String?
        var secure = false
        var httpOnly = false
        var sameSite: Cookie.SameSite?
        for attribute in parts.dropFirst() {
            let key: Substring
            let argument: Substring
            if let eq = attribute.firstIndex(of: "=") {
                key = HTTPSyntax.trimmed(attribute[..<eq])
                argument = HTTPSyntax.trimmed(attribute[attribute.index(after: eq)...])
            } else {
                key = HTTPSyntax.trimmed(attribute)
                argument = ""
            }
            switch key.lowercased() {
            case "expires":
                if let date = parseDate(argument) { expires = date }
            case "max-age":
                guard let first = argument.first, first == "-" || first.isASCII && first.isNumber else { break }
                let digits = first == "-" ? argument.dropFirst() : argument
                guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { break }
                if first == "-" {
                    maxAge = .distantPast
                } else if let seconds = Int64(digits), seconds > 0 {
                    // Capped so that a huge value is a far future, not an overflow.
                    maxAge = now.addingTimeInterval(TimeInterval(min(seconds, 400 * 24 * 3600 * 100)))
                } else {
                    maxAge = .distantPast
                }
            case "domain":
                // §5.2.3: an empty value is ignored; one leading "." is dropped, no more, and a trailing
                // "." stays, so "..example.org" and "example.org." never domain-match and the cookie is
                // refused (http-state domain0010, domain0014, domain0015). The last Domain wins.
                guard !argument.isEmpty else { break }
                domainAttribute = String(argument.first == "." ? argument.dropFirst() : argument).lowercased()
            case "path":
                path = argument.first == "/" ? String(argument) : nil
            case "secure":
                secure = true
            case "httponly":
                httpOnly = true
            case "samesite":
                sameSite = Cookie.SameSite(rawValue: argument.lowercased())
            default:
                break
            }
        }
        if secure, url.scheme?.lowercased() != "https" { return nil }

        var domain = host
        var hostOnly = true
        if let attribute = domainAttribute, !attribute.isEmpty {
            if CookieRules.isPublicSuffix(attribute) || CookieRules.isIPAddress(attribute) {
                // A public suffix (or an IP) is acceptable only as the request's own host, as host-only.
                guard attribute == host else { return nil }
            } else {
                guard CookieRules.domainMatches(host, attribute) else { return nil }
                domain = attribute
                hostOnly = false
            }
        }
        guard isASCIICookieText(domain), path.map(isASCIICookieText) ?? true else { return nil }
        return Cookie(
            name: name, value: value, domain: domain, hostOnly: hostOnly,
            path: path ?? CookieRules.defaultPath(of: url), secure: secure, httpOnly: httpOnly,
            expires: maxAge ?? expires, sameSite: sameSite, created: now)
    }

    /// Splits a field value that may hold several `Set-Cookie` lines joined with ", " (as
    /// FoundationNetworking joins repeated fields): a comma starts a new line only when a `name=`
    /// follows it, so the comma inside an `Expires` date stays where it is.
    package static func split(_ value: String) -> [String] {
        var lines: [String] = []
        var start = value.startIndex
        var index = value.startIndex
        while let comma = value[index...].firstIndex(of: ",") {
            let after = value.index(after: comma)
            if startsNewCookie(value[after...]) {
                lines.append(String(value[start..<comma]))
                start = after
            }
            index = after
        }
        lines.append(String(value[start...]))
        return lines.map { String(HTTPSyntax.trimmed($0)) }.filter { !$0.isEmpty }
    }

    private static func startsNewCookie(_ text: Substring) -> Bool {
        let rest = HTTPSyntax.trimmed(text)
        guard let equals = rest.firstIndex(of: "=") else { return false }
        let name = rest[..<equals]
        return !name.isEmpty && !name.contains(where: { $0 == ";" || $0 == "," || $0 == " " || $0 == "\t" })
    }

    /// Whether a cookie's name or value may go into a `Cookie` header: no `;` and no control bytes
    /// (RFC 6265 §5.2 keeps every other octet as it came, as browsers do). Text beyond ASCII is kept and
    /// sent back as the UTF-8 it arrived as, so the server gets the same bytes; text with U+FFFD is
    /// refused, because a transport puts it where the bytes were not UTF-8, and those bytes are lost.
    package static func isCookieText<S: StringProtocol>(_ text: S) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F && $0 != UInt8(ascii: ";") }
            && !text.unicodeScalars.contains("\u{FFFD}")
    }

    /// Whether a cookie's domain or path may be stored: visible ASCII and spaces, no `;` (a request's host
    /// and percent-encoded path are ASCII, so nothing else could ever match).
    package static func isASCIICookieText<S: StringProtocol>(_ text: S) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ";") }
    }

    // MARK: Dates (RFC 6265 §5.1.1)

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Parses a cookie date the tolerant way RFC 6265 §5.1.1 describes: the tokens for a time, a day
    /// of the month, a month and a year are found wherever they are, so RFC 1123, RFC 850 and asctime
    /// dates all parse.
    /// - Returns: The date, or `nil` when it is not a valid date.
    package static func parseDate<S: StringProtocol>(_ text: S) -> Date? {
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        let tokens = text.split { character in
            guard let ascii = character.asciiValue else { return false }
            return ascii == 0x09 || (0x20...0x2F).contains(ascii) || (0x3B...0x40).contains(ascii)
                || (0x5B...0x60).contains(ascii) || (0x7B...0x7E).contains(ascii)
        }
        for token in tokens {
            if time == nil, let parsed = parseTime(token) {
                time = parsed
            } else if day == nil, let digits = leadingDigits(token, min: 1, max: 2) {
                day = digits
            } else if month == nil, token.count >= 3,
                let index = months.firstIndex(of: token.prefix(3).lowercased())
            {
                month = index + 1
            } else if year == nil, let digits = leadingDigits(token, min: 2, max: 4) {
                year = digits
            }
        }
        guard let (hour, minute, second) = time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, hour <= 23, minute <= 59, second <= 59 else { return nil }
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = day
        components.hour = hour
        components.minute = minute
        components.second = second
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day
        else { return nil }
        return date
    }

    /// `1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT` followed by anything that is not a digit.
    private static func parseTime<S: StringProtocol>(_ token: S) -> (Int, Int, Int)? {
        let fields = token.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3, let hour = leadingDigits(fields[0], min: 1, max: 2, whole: true),
            let minute = leadingDigits(fields[1], min: 1, max: 2, whole: true),
            let second = leadingDigits(fields[2], min: 1, max: 2)
        else { return nil }
        return (hour, minute, second)
    }

    /// `min*max DIGIT` at the start of a token, followed by a non-digit or the end (or nothing, `whole`).
    private static func leadingDigits<S: StringProtocol>(_ token: S, min: Int, max: Int, whole: Bool = false) -> Int? {
        let digits = token.prefix { $0.isASCII && $0.isNumber }
        guard digits.count >= min, digits.count <= max else { return nil }
        if whole, digits.count != token.count { return nil }
        return Int(digits)
    }
}
