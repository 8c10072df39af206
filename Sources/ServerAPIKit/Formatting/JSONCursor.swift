/// Where and why a JSON text is malformed.
struct JSONSyntaxError: Error {
    /// The byte offset, from the start of the scanned buffer.
    var offset: Int
    /// What is wrong, such as `unexpected "}" (expected a value)`.
    var reason: String
    /// Whether the text breaks the JSON grammar (`false`: valid JSON this library cannot represent,
    /// such as a number beyond the range of `Double`).
    var malformed = true
}

/// The kind of a JSON value, read from its first byte.
enum JSONKind: Sendable, Hashable {
    case null, boolean, number, string, array, object

    /// The kind's name with an article, as in error messages ("an object", "null").
    var name: String {
        switch self {
        case .null: "null"
        case .boolean: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    init(firstByte byte: UInt8) {
        switch byte {
        case UInt8(ascii: "{"): self = .object
        case UInt8(ascii: "["): self = .array
        case UInt8(ascii: "\""): self = .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): self = .boolean
        case UInt8(ascii: "n"): self = .null
        default: self = .number
        }
    }
}

/// A forward-only reader over UTF-8 JSON bytes that skips values without building them,
/// validating as it goes (RFC 8259: grammar, escapes, surrogate pairs, UTF-8, nesting depth).
///
/// - Important: The cursor holds a raw pointer: use it only inside the `withUnsafeBytes` closure
///   that produced the buffer. Offsets are from the start of that buffer.
struct JSONCursor {
    /// The deepest nesting accepted, as `JSONSerialization` and `JSONDecoder` do.
    static let maxDepth = 512

    let base: UnsafePointer<UInt8>
    let end: Int
    var position: Int

    /// Creates a cursor at the start of `count` bytes at `base`.
    init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.end = count
        self.position = 0
    }

    /// Runs `body` with a cursor at the start of `buffer`, which may be empty.
    static func withCursor<R>(over buffer: UnsafeRawBufferPointer, _ body: (inout JSONCursor) -> R) -> R {
        if let base = buffer.baseAddress, buffer.count > 0 {
            var cursor = JSONCursor(base: base.assumingMemoryBound(to: UInt8.self), count: buffer.count)
            return body(&cursor)
        }
        // An empty buffer may have no address; `end == 0` guards every read of this one.
        let zero: UInt8 = 0
        return withUnsafePointer(to: zero) { pointer in
            var cursor = JSONCursor(base: pointer, count: 0)
            return body(&cursor)
        }
    }

    // MARK: Bytes and whitespace

    @inline(__always)
    var atEnd: Bool { position >= end }

    @inline(__always)
    var current: UInt8 { base[position] }

    @inline(__always)
    mutating func skipWhitespace() {
        while position < end {
            let byte = base[position]
            // Anything above a space ends whitespace: one comparison for the common case.
            if byte > 0x20 { return }
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            position += 1
        }
    }

    /// Skips a UTF-8 byte order mark at the start (RFC 8259 §8.1 lets parsers ignore it).
    mutating func skipByteOrderMark() {
        if end >= 3, position == 0, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { position = 3 }
    }

    /// Checks that only whitespace follows the value that was just read.
    mutating func expectEnd() throws(JSONSyntaxError) {
        skipWhitespace()
        guard atEnd else { throw unexpected("the end of the body after the JSON value") }
    }

    // MARK: Errors

    /// A syntax error at the current position.
    func unexpected(_ expected: String) -> JSONSyntaxError {
        guard position < end else {
            return JSONSyntaxError(offset: position, reason: "unexpected end of the body (expected \(expected))")
        }
        return JSONSyntaxError(
            offset: position, reason: "unexpected \(Self.describe(byte: base[position])) (expected \(expected))")
    }

    static func describe(byte: UInt8) -> String {
        switch byte {
        case 0x21...0x7E: "\"\(Character(Unicode.Scalar(byte)))\""
        case 0x20: "a space"
        default: "byte 0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
        }
    }

    // MARK: Skipping values

    /// Skips the value at the current position (whitespace already skipped), validating it.
    mutating func skipValue(depth: Int = 0) throws(JSONSyntaxError) {
        guard position < end else { throw unexpected("a value") }
        switch base[position] {
        case UInt8(ascii: "\""):
            position += 1
            _ = try skipStringBody()
        case UInt8(ascii: "{"):
            try skipObject(depth: depth)
        case UInt8(ascii: "["):
            try skipArray(depth: depth)
        case UInt8(ascii: "t"):
            try skipLiteral("true")
        case UInt8(ascii: "f"):
            try skipLiteral("false")
        case UInt8(ascii: "n"):
            try skipLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try skipNumber()
        default:
            throw unexpected("a value")
        }
    }

    /// Skips an object; the cursor is on its `{`.
    mutating func skipObject(depth: Int) throws(JSONSyntaxError) {
        try enterContainer(depth: depth)
        if try isEmptyContainer(closing: UInt8(ascii: "}")) { return }
        while true {
            try skipKey()
            try skipValue(depth: depth + 1)
            if try endOfMember(closing: UInt8(ascii: "}")) { return }
        }
    }

    /// Skips an array; the cursor is on its `[`.
    mutating func skipArray(depth: Int) throws(JSONSyntaxError) {
        try enterContainer(depth: depth)
        if try isEmptyContainer(closing: UInt8(ascii: "]")) { return }
        while true {
            try skipValue(depth: depth + 1)
            if try endOfMember(closing: UInt8(ascii: "]")) { return }
        }
    }

    @inline(__always)
    mutating func enterContainer(depth: Int) throws(JSONSyntaxError) {
        guard depth < Self.maxDepth else {
            throw JSONSyntaxError(offset: position, reason: "the JSON is nested more than \(Self.maxDepth) levels deep")
        }
        position += 1
        skipWhitespace()
    }

    /// After `{` or `[` and whitespace: consumes the closing bracket of an empty container.
    @inline(__always)
    mutating func isEmptyContainer(closing: UInt8) throws(JSONSyntaxError) -> Bool {
        guard position < end else {
            throw unexpected(closing == UInt8(ascii: "}") ? "a key or \"}\"" : "a value or \"]\"")
        }
        if base[position] == closing {
            position += 1
            return true
        }
        return false
    }

    /// After a member's value: consumes `,` (returns `false`, cursor on the next member) or the
    /// closing bracket (returns `true`).
    @inline(__always)
    mutating func endOfMember(closing: UInt8) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard position < end else {
            throw unexpected(closing == UInt8(ascii: "}") ? "\",\" or \"}\"" : "\",\" or \"]\"")
        }
        let byte = base[position]
        if byte == UInt8(ascii: ",") {
            position += 1
            skipWhitespace()
            return false
        }
        if byte == closing {
            position += 1
            return true
        }
        throw unexpected(closing == UInt8(ascii: "}") ? "\",\" or \"}\"" : "\",\" or \"]\"")
    }

    /// Skips `"key"` and the `:` after it, leaving the cursor on the value.
    @inline(__always)
    mutating func skipKey() throws(JSONSyntaxError) {
        guard position < end, base[position] == UInt8(ascii: "\"") else {
            throw unexpected("a key (a string in double quotes)")
        }
        position += 1
        _ = try skipStringBody()
        try skipColon()
    }

    @inline(__always)
    mutating func skipColon() throws(JSONSyntaxError) {
        skipWhitespace()
        guard position < end, base[position] == UInt8(ascii: ":") else { throw unexpected("\":\" after the key") }
        position += 1
        skipWhitespace()
    }

    /// Reads a key, leaving the cursor on its value: the range of its text (between the quotes)
    /// and whether that text has escapes.
    @inline(__always)
    mutating func readKey() throws(JSONSyntaxError) -> (range: Range<Int>, escaped: Bool) {
        guard position < end, base[position] == UInt8(ascii: "\"") else {
            throw unexpected("a key (a string in double quotes)")
        }
        position += 1
        let start = position
        let escaped = try skipStringBody()
        let range = start..<(position - 1)
        try skipColon()
        return (range, escaped)
    }

    mutating func skipLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        let bytes = literal.utf8Start
        for offset in 0..<count {
            guard position + offset < end, base[position + offset] == bytes[offset] else {
                position += offset
                throw unexpected("\"\(literal)\"")
            }
        }
        position += count
    }

    /// Skips a number, validating its grammar; returns whether it is an integer (no fraction or exponent).
    mutating func skipNumber() throws(JSONSyntaxError) -> Bool {
        var integer = true
        if base[position] == UInt8(ascii: "-") { position += 1 }
        guard position < end, Self.isDigit(base[position]) else { throw unexpected("a digit") }
        if base[position] == UInt8(ascii: "0") {
            position += 1
            if position < end, Self.isDigit(base[position]) {
                throw JSONSyntaxError(offset: position - 1, reason: "a number has a leading zero")
            }
        } else {
            skipDigits()
        }
        if position < end, base[position] == UInt8(ascii: ".") {
            integer = false
            position += 1
            guard position < end, Self.isDigit(base[position]) else { throw unexpected("a digit after \".\"") }
            skipDigits()
        }
        if position < end, base[position] | 0x20 == UInt8(ascii: "e") {
            integer = false
            position += 1
            if position < end, base[position] == UInt8(ascii: "+") || base[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < end, Self.isDigit(base[position]) else { throw unexpected("a digit in the exponent") }
            skipDigits()
        }
        return integer
    }

    @inline(__always)
    mutating func skipDigits() {
        while position < end, Self.isDigit(base[position]) { position += 1 }
    }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    // MARK: Strings

    /// Skips the rest of a string whose opening quote was consumed, validating escapes, surrogate
    /// pairs and UTF-8; returns whether the string has escapes. The cursor ends after the closing quote.
    @inline(__always)
    mutating func skipStringBody() throws(JSONSyntaxError) -> Bool {
        var escaped = false
        while true {
            // Eight bytes at a time while none of them needs a look: no quote, backslash,
            // control character or non-ASCII byte.
            while position &+ 8 <= end {
                let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
                let special = Self.specialBytes(word)
                if special != 0 {
                    position &+= special.trailingZeroBitCount &>> 3
                    break
                }
                position &+= 8
            }
            guard position < end else {
                throw JSONSyntaxError(offset: position, reason: "unexpected end of the body inside a string")
            }
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return escaped
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                try skipEscape()
            } else if byte < 0x20 {
                throw JSONSyntaxError(
                    offset: position,
                    reason: "a string has an unescaped control character (\(Self.describe(byte: byte)))")
            } else if byte >= 0x80 {
                try skipUTF8Sequence()
            } else {
                position += 1
            }
        }
    }

    /// A mask with the high bit set in (at least) the first byte of `word` that is a quote, a
    /// backslash, below 0x20 or above 0x7F; zero when there is none. Borrows can only mark bytes
    /// after a real match, so the lowest set bit is exact (little-endian load).
    @inline(__always)
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let hasQuote = (quotes &- ones) & ~quotes
        let hasBackslash = (backslashes &- ones) & ~backslashes
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highs
    }

    /// Skips `\x` or `\uXXXX` (with its low surrogate when it is a high one).
    mutating func skipEscape() throws(JSONSyntaxError) {
        let start = position
        position += 1
        guard position < end else {
            throw JSONSyntaxError(offset: start, reason: "unexpected end of the body inside an escape")
        }
        switch base[position] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 1
        case UInt8(ascii: "u"):
            let unit = try readHexUnit(escapeStart: start)
            if (0xD800...0xDBFF).contains(unit) {
                guard position + 1 < end, base[position] == UInt8(ascii: "\\"), base[position + 1] == UInt8(ascii: "u")
                else {
                    throw JSONSyntaxError(
                        offset: start,
                        reason: "a string has a lone high surrogate \\u\(Self.hex(unit)) (no low surrogate follows)")
                }
                let lowStart = position
                position += 1
                let low = try readHexUnit(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONSyntaxError(
                        offset: start,
                        reason: "a string has a high surrogate \\u\(Self.hex(unit)) followed by "
                            + "\\u\(Self.hex(low)), not a low surrogate")
                }
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw JSONSyntaxError(offset: start, reason: "a string has a lone low surrogate \\u\(Self.hex(unit))")
            }
        default:
            throw JSONSyntaxError(
                offset: start, reason: "a string has an invalid escape \\\(Self.describeEscaped(base[position]))")
        }
    }

    /// Reads the four hex digits after `\u` (the cursor is on the `u`).
    mutating func readHexUnit(escapeStart: Int) throws(JSONSyntaxError) -> UInt16 {
        position += 1
        var unit: UInt16 = 0
        for _ in 0..<4 {
            guard position < end, let digit = Self.hexValue(base[position]) else {
                throw JSONSyntaxError(offset: escapeStart, reason: "a string has a \\u escape without four hex digits")
            }
            unit = unit << 4 | UInt16(digit)
            position += 1
        }
        return unit
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func hex(_ unit: UInt16) -> String { String(unit, radix: 16, uppercase: true).leftPadded(to: 4) }

    private static func describeEscaped(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? String(Character(Unicode.Scalar(byte))) : describe(byte: byte)
    }

    /// Skips one multi-byte UTF-8 sequence, rejecting overlong forms, surrogates and values above U+10FFFF.
    mutating func skipUTF8Sequence() throws(JSONSyntaxError) {
        let lead = base[position]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: throw invalidUTF8()
        }
        guard position + length <= end else { throw invalidUTF8() }
        let second = base[position + 1]
        guard second >= low && second <= high else { throw invalidUTF8() }
        for offset in 2..<max(2, length) where base[position + offset] & 0xC0 != 0x80 { throw invalidUTF8() }
        position += length
    }

    private func invalidUTF8() -> JSONSyntaxError {
        JSONSyntaxError(offset: position, reason: "a string is not valid UTF-8")
    }

    /// Whether the key text at `range` (between the quotes) equals `wanted`'s UTF-8 bytes.
    @inline(__always)
    func key(at range: Range<Int>, escaped: Bool, equals wanted: [UInt8]) -> Bool {
        if !escaped {
            guard range.count == wanted.count else { return false }
            return wanted.withUnsafeBufferPointer { wantedBytes in
                memoryEquals(base + range.lowerBound, wantedBytes.baseAddress, count: range.count)
            }
        }
        return decodeString(range, escaped: true).utf8.elementsEqual(wanted)
    }

    @inline(__always)
    private func memoryEquals(_ lhs: UnsafePointer<UInt8>, _ rhs: UnsafePointer<UInt8>?, count: Int) -> Bool {
        guard count > 0, let rhs else { return true }
        for offset in 0..<count where lhs[offset] != rhs[offset] { return false }
        return true
    }

    /// The text of a validated string (the range between its quotes), escapes decoded.
    func decodeString(_ range: Range<Int>, escaped: Bool) -> String {
        let raw = UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)
        guard escaped else { return String(decoding: raw, as: UTF8.self) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                index += 1
                continue
            }
            let kind = raw[index + 1]
            index += 2
            switch kind {
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = UInt32(Self.hexUnit(raw, at: index))
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    // Validation guaranteed the low surrogate: `\uDC00`…`\uDFFF`.
                    let low = UInt32(Self.hexUnit(raw, at: index + 2))
                    index += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                Self.appendUTF8(scalar, to: &bytes)
            default: bytes.append(kind)  // `"`, `\` and `/` stand for themselves
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexUnit(_ raw: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt16 {
        var unit: UInt16 = 0
        for offset in 0..<4 { unit = unit << 4 | UInt16(hexValue(raw[index + offset]) ?? 0) }
        return unit
    }

    private static func appendUTF8(_ scalar: UInt32, to bytes: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            bytes.append(UInt8(scalar))
        case 0x80..<0x800:
            bytes.append(UInt8(0xC0 | scalar >> 6))
            bytes.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            bytes.append(UInt8(0xE0 | scalar >> 12))
            bytes.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | scalar & 0x3F))
        default:
            bytes.append(UInt8(0xF0 | scalar >> 18))
            bytes.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            bytes.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
