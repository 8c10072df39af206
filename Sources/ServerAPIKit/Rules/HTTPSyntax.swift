/// Small pieces of HTTP's grammar (RFC 9110 §5.6), byte by byte, without Foundation.
enum HTTPSyntax {
    /// A field value without the optional whitespace (spaces and tabs) around it.
    static func trimmed<S: StringProtocol>(_ value: S) -> Substring {
        var text = Substring(value)
        while let first = text.utf8.first, isWhitespace(first) { text = text.dropFirst() }
        while let last = text.utf8.last, isWhitespace(last) { text = text.dropLast() }
        return text
    }

    /// A non-negative decimal number: digits only (no sign, no spaces inside), and it must fit an `Int64`.
    static func decimal(_ digits: Substring.UTF8View) -> Int64? {
        guard !digits.isEmpty else { return nil }
        var number: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflowed) = number.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowed, !overflowedAgain else { return nil }
            number = sum
        }
        return number
    }

    /// Calls `body` with each element of a comma-separated field value, trimmed, until `body` returns `false`.
    /// - Returns: `false` when `body` stopped early.
    static func forEachElement(of value: String, _ body: (Substring) -> Bool) -> Bool {
        var rest = Substring(value)
        while true {
            let comma = rest.utf8.firstIndex(of: UInt8(ascii: ","))
            guard body(trimmed(comma.map { rest[..<$0] } ?? rest)) else { return false }
            guard let comma else { return true }
            rest = rest[rest.utf8.index(after: comma)...]
        }
    }

    /// Whether a token equals a lower-case ASCII name, ignoring ASCII case.
    static func equals(_ token: Substring, lowercased name: StaticString) -> Bool {
        let expected = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return token.utf8.elementsEqual(expected) { HTTPHeaders.asciiFolded($0) == $1 }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// `value` without the `character`s at either end (the quotes around a quoted directive argument).
    static func stripping<S: StringProtocol>(_ character: Character, from value: S) -> Substring {
        var text = Substring(value)
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return text
    }

    /// `text` without the Unicode scalars around it that `trim` picks: FoundationEssentials has no
    /// `trimmingCharacters(in:)`. `\.properties.isWhitespace` is Foundation's `.whitespacesAndNewlines`,
    /// `isSpace` its `.whitespaces`.
    static func trimming<S: StringProtocol>(_ text: S, _ trim: (Unicode.Scalar) -> Bool) -> Substring {
        var text = Substring(text)
        while let first = text.unicodeScalars.first, trim(first) {
            text = text[text.unicodeScalars.index(after: text.unicodeScalars.startIndex)...]
        }
        while let last = text.unicodeScalars.last, trim(last) {
            text = text[..<text.unicodeScalars.index(before: text.unicodeScalars.endIndex)]
        }
        return text
    }

    /// Whether `scalar` is a space or a tab in Unicode's sense (Foundation's `CharacterSet.whitespaces`).
    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }
}
