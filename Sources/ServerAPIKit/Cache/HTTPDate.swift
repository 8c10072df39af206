#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// HTTP-date (RFC 9110 §5.6.7), strictly: the three forms a recipient must accept and nothing else.
///
/// - IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`
/// - RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year more than 50 years ahead is the past century's)
/// - asctime `Sun Nov  6 08:49:37 1994`
///
/// Names are matched without regard to case. Anything else — another zone than GMT, a two-digit year in the
/// first form, a missing comma, doubled spaces, a one-digit hour — is invalid: for `Expires` that means already
/// expired (RFC 9111 §5.3), never a guess.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let shortDays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// The date a field value names, or `nil` when it is not an HTTP-date.
    /// - Parameters:
    ///   - text: The field value.
    ///   - now: For the RFC 850 form's two-digit year.
    static func parse(_ text: some StringProtocol, now: Date = Date()) -> Date? {
        let value = String(HTTPSyntax.trimmed(text)).lowercased()
        let bytes = Array(value.utf8)
        if let comma = bytes.firstIndex(of: UInt8(ascii: ",")) {
            let day = String(decoding: bytes[..<comma], as: UTF8.self)
            let rest = Array(bytes[(comma + 1)...])
            if comma == 3, shortDays.contains(day) { return imfFixdate(rest) }
            if longDays.contains(day) { return rfc850(rest, now: now) }
            return nil
        }
        return asctime(bytes)
    }

    /// ` 06 Nov 1994 08:49:37 gmt`
    private static func imfFixdate(_ b: [UInt8]) -> Date? {
        guard b.count == 25, b[0] == 32, b[3] == 32, b[7] == 32, b[12] == 32, b[21] == 32,
            String(decoding: b[22...], as: UTF8.self) == "gmt",
            let day = digits(b[1..<3]), let month = month(b[4..<7]), let year = digits(b[8..<12]),
            let time = time(b[13..<21])
        else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    /// ` 06-Nov-94 08:49:37 gmt`
    private static func rfc850(_ b: [UInt8], now: Date) -> Date? {
        guard b.count == 23, b[0] == 32, b[3] == 45, b[7] == 45, b[10] == 32, b[19] == 32,
            String(decoding: b[20...], as: UTF8.self) == "gmt",
            let day = digits(b[1..<3]), let month = month(b[4..<7]), let shortYear = digits(b[8..<10]),
            let time = time(b[11..<19])
        else { return nil }
        let thisYear = Int(now.timeIntervalSince1970 / 31_556_952) + 1970
        var year = thisYear - thisYear % 100 + shortYear
        if year > thisYear + 50 { year -= 100 }
        return date(year: year, month: month, day: day, time: time)
    }

    /// `sun nov  6 08:49:37 1994`
    private static func asctime(_ b: [UInt8]) -> Date? {
        guard b.count == 24, b[3] == 32, b[7] == 32, b[10] == 32, b[19] == 32,
            shortDays.contains(String(decoding: b[0..<3], as: UTF8.self)),
            let month = month(b[4..<7]),
            let day = b[8] == 32 ? digits(b[9..<10]) : digits(b[8..<10]),
            let time = time(b[11..<19]), let year = digits(b[20..<24])
        else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    private static func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return bytes.isEmpty ? nil : value
    }

    private static func month(_ bytes: ArraySlice<UInt8>) -> Int? {
        months.firstIndex(of: String(decoding: bytes, as: UTF8.self)).map { $0 + 1 }
    }

    /// `08:49:37` as seconds into the day.
    private static func time(_ b: ArraySlice<UInt8>) -> Int? {
        let start = b.startIndex
        guard b.count == 8, b[start + 2] == 58, b[start + 5] == 58,
            let hour = digits(b[start..<start + 2]), let minute = digits(b[start + 3..<start + 5]),
            let second = digits(b[start + 6..<start + 8]), hour < 24, minute < 60, second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    /// Days from the civil date (Howard Hinnant's algorithm), so no calendar is needed.
    private static func date(year: Int, month: Int, day: Int, time: Int) -> Date? {
        guard (1...31).contains(day) else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + time))
    }

    /// The IMF-fixdate of a date, for fields the cache writes.
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        // civil_from_days
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekday = ((days % 7) + 7 + 3) % 7  // 1970-01-01 was a Thursday (index 3 from Monday)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let dayName = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][weekday]
        let monthName = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][month - 1]
        let clock = "\(two(time / 3600)):\(two(time % 3600 / 60)):\(two(time % 60))"
        return "\(dayName), \(two(day)) \(monthName) \(year) \(clock) GMT"
    }
}
