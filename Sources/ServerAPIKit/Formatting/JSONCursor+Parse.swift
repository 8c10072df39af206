extension JSONCursor {
    /// Parses the value at the current position (whitespace already skipped) into a `JSONValue`.
    ///
    /// Integers that fit in 64 bits stay exact (`.int`); larger integers, fractions and exponents
    /// become `.double`. When an object repeats a key, the first value counts (as with `JSONDecoder`).
    mutating func parseValue(depth: Int = 0) throws(JSONSyntaxError) -> JSONValue {
        guard position < end else { throw unexpected("a value") }
        switch base[position] {
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "{"):
            try enterContainer(depth: depth)
            var object: [String: JSONValue] = [:]
            if try isEmptyContainer(closing: UInt8(ascii: "}")) { return .object(object) }
            while true {
                guard position < end, base[position] == UInt8(ascii: "\"") else {
                    throw unexpected("a key (a string in double quotes)")
                }
                let key = try parseString()
                try skipColon()
                let value = try parseValue(depth: depth + 1)
                if object[key] == nil { object[key] = value }
                if try endOfMember(closing: UInt8(ascii: "}")) { return .object(object) }
            }
        case UInt8(ascii: "["):
            try enterContainer(depth: depth)
            var array: [JSONValue] = []
            if try isEmptyContainer(closing: UInt8(ascii: "]")) { return .array(array) }
            while true {
                array.append(try parseValue(depth: depth + 1))
                if try endOfMember(closing: UInt8(ascii: "]")) { return .array(array) }
            }
        case UInt8(ascii: "t"):
            try skipLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try skipLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try skipLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw unexpected("a value")
        }
    }

    /// Parses a string; the cursor is on its opening quote.
    mutating func parseString() throws(JSONSyntaxError) -> String {
        position += 1
        let start = position
        let escaped = try skipStringBody()
        return decodeString(start..<(position - 1), escaped: escaped)
    }

    /// Parses a number: `.int` when it is written as an integer that fits in `Int64`, else `.double`.
    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = position
        let integer = try skipNumber()
        let literal = UnsafeBufferPointer(start: base + start, count: position - start)
        if integer, let value = Self.int64(literal) { return .int(value) }
        let text = String(decoding: literal, as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONSyntaxError(
                offset: start, reason: "the number \(text) does not fit in a Double", malformed: false)
        }
        return .double(value)
    }

    /// The value of an integer literal (optional `-`, digits), or `nil` when it overflows `Int64`.
    static func int64(_ literal: UnsafeBufferPointer<UInt8>) -> Int64? {
        let negative = literal.first == UInt8(ascii: "-")
        var value: Int64 = 0
        // Accumulate negatively so that Int64.min is representable.
        for byte in literal.dropFirst(negative ? 1 : 0) {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(Int64(byte &- UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// Reads the scalar at the current position as text, for envelope codes and messages: a
    /// string's text, a number in normal form (see `normalizedNumber`), `true`/`false`;
    /// `nil` for null, an object or an array (the cursor does not move then).
    mutating func readScalarText() throws(JSONSyntaxError) -> String? {
        guard position < end else { throw unexpected("a value") }
        switch base[position] {
        case UInt8(ascii: "\""):
            return try parseString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return try parseValue() == .bool(true) ? "true" : "false"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = position
            _ = try skipNumber()
            return Self.normalizedNumber(
                String(decoding: UnsafeBufferPointer(start: base + start, count: position - start), as: UTF8.self))
        default:
            return nil
        }
    }

    /// A number literal in normal form, so that equal numbers compare equal as text: a whole number
    /// that fits in `Int64` as its decimal digits (`0.0`, `-0` and `1e2` become `0`, `0` and `100`),
    /// an integer beyond `Int64` as its digits, anything else as the shortest `Double` text (`1.50` is `1.5`).
    /// Text that is not a JSON number is returned unchanged.
    static func normalizedNumber(_ literal: String) -> String {
        var copy = literal
        return copy.withUTF8 { bytes -> String in
            guard let base = bytes.baseAddress, !bytes.isEmpty, bytes[0] == UInt8(ascii: "-") || isDigit(bytes[0])
            else { return literal }
            var scanner = JSONCursor(base: base, count: bytes.count)
            guard let integer = try? scanner.skipNumber(), scanner.position == bytes.count else { return literal }
            if integer {
                if let value = int64(bytes) { return String(value) }
                return literal
            }
            guard let value = Double(literal), value.isFinite else { return literal }
            if value.rounded() == value, abs(value) < 9.2e18 { return String(Int64(value)) }
            return String(value)
        }
    }
}
