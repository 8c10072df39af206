#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A parsed `Content-Disposition` header value (RFC 6266): its type and parameters, with the file
/// name a download would be saved under.
///
/// Parsing is lenient where browsers are (unknown parameters, a parameter without a value, a
/// stray `;`) and strict where a wrong answer would be harmful: a `filename*` that is not valid
/// RFC 5987 (`UTF-8''%E2%82%AC.txt`) is ignored rather than guessed at, and `fileName` is never a
/// path. A pure value: no I/O, so it can be unit-tested and fuzzed.
package struct ContentDisposition: Sendable, Hashable {
    /// The disposition type, lowercased: `attachment`, `inline`, `form-data`, ...
    package var type: String
    /// The parameters by lowercased name, their values unquoted and (for `name*`) decoded; the first
    /// of a repeated parameter wins.
    package var parameters: [String: String]

    /// Creates a value from its type (`attachment`, `inline`) and parameters such as `filename`.
    package init(type: String, parameters: [String: String] = [:]) {
        self.type = type
        self.parameters = parameters
    }

    /// Parses a header value.
    /// - Parameter value: The `Content-Disposition` field value.
    /// - Returns: `nil` when the value does not start with a disposition type (a token).
    package init?(_ value: String) {
        var scanner = Scanner(Array(value.unicodeScalars))
        scanner.skipSpaces()
        let type = scanner.token()
        guard !type.isEmpty else { return nil }
        scanner.skipSpaces()
        guard scanner.isAtEnd || scanner.peek == ";" else { return nil }
        self.type = type.lowercased()
        parameters = [:]
        while scanner.skip(";") {
            scanner.skipSpaces()
            let name = scanner.token().lowercased()
            scanner.skipSpaces()
            guard !name.isEmpty, scanner.skip("=") else {
                scanner.skipParameter()
                continue
            }
            scanner.skipSpaces()
            let raw: String?
            if scanner.peek == "\"" {
                raw = scanner.quotedString()
            } else {
                let token = scanner.extendedToken()
                raw = token.isEmpty ? nil : token
            }
            scanner.skipSpaces()
            guard let raw, scanner.isAtEnd || scanner.peek == ";" else {
                scanner.skipParameter()
                continue
            }
            let decoded = name.hasSuffix("*") ? Self.decodeExtended(raw) : raw
            if let decoded, parameters[name] == nil { parameters[name] = decoded }
        }
    }

    /// The file name the sender suggests: `filename*` when it decodes, else `filename`, made safe
    /// with `safeFileName(_:)`; `nil` when there is none or nothing safe is left of it.
    package var fileName: String? {
        if let extended = parameters["filename*"].flatMap(Self.safeFileName) { return extended }
        return parameters["filename"].flatMap(Self.safeFileName)
    }

    /// Makes a suggested name safe to create in the current directory: only its last path component
    /// (after `/` or `\`), without control characters, surrounding spaces or leading dots (no hidden
    /// files, no `..`), at most 200 UTF-8 bytes.
    /// - Parameter name: A name from a header or a URL.
    /// - Returns: The safe name, or `nil` when nothing is left.
    package static func safeFileName(_ name: String) -> String? {
        // Split by scalars, not characters: `\` followed by a combining mark is one character, yet still
        // a path separator to the file system.
        let lastComponent = name.unicodeScalars.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last ?? []
        var safe = String(String.UnicodeScalarView(lastComponent.filter { !isControl($0) }))
        // ". .x" must not become ".x": strip spaces and dots until neither is left in front.
        while let first = safe.unicodeScalars.first, first == "." || first.properties.isWhitespace {
            safe.unicodeScalars.removeFirst()
        }
        while safe.utf8.count > 200 { safe.removeLast() }
        // Trimmed after the cut, which may end the name on a space.
        safe = String(HTTPSyntax.trimmed(safe))
        return safe.isEmpty ? nil : safe
    }

    /// Decodes an RFC 5987 value, `charset'language'percent-encoded`; UTF-8 and ISO-8859-1 only.
    static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var bytes: [UInt8] = []
        var iterator = parts[2].utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        switch parts[0].lowercased() {
        case "utf-8": return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1": return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default: return nil
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// A cursor over the value's scalars.
    private struct Scanner {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var isAtEnd: Bool { index >= scalars.count }
        var peek: Unicode.Scalar? { isAtEnd ? nil : scalars[index] }

        mutating func skip(_ scalar: Unicode.Scalar) -> Bool {
            guard peek == scalar else { return false }
            index += 1
            return true
        }

        mutating func skipSpaces() {
            while let scalar = peek, scalar == " " || scalar == "\t" { index += 1 }
        }

        /// An RFC 9110 token.
        mutating func token() -> String {
            var text = String.UnicodeScalarView()
            while let scalar = peek, Self.isTokenCharacter(scalar) {
                text.append(scalar)
                index += 1
            }
            return String(text)
        }

        /// A token, leniently: anything up to `;`, a space or a quote (servers send unquoted names
        /// with characters a token does not allow, such as `filename=a,b.txt` or non-ASCII).
        mutating func extendedToken() -> String {
            var text = String.UnicodeScalarView()
            while let scalar = peek, scalar != ";", scalar != " ", scalar != "\t", scalar != "\"" {
                text.append(scalar)
                index += 1
            }
            return String(text)
        }

        /// A quoted string with backslash escapes; `nil` when it is not closed.
        mutating func quotedString() -> String? {
            guard skip("\"") else { return nil }
            var text = String.UnicodeScalarView()
            while let scalar = peek {
                index += 1
                switch scalar {
                case "\"": return String(text)
                case "\\":
                    guard let escaped = peek else { return nil }
                    text.append(escaped)
                    index += 1
                default: text.append(scalar)
                }
            }
            return nil
        }

        /// Skips a malformed parameter: up to the next `;` outside a quoted string.
        mutating func skipParameter() {
            var quoted = false
            while let scalar = peek {
                if !quoted && scalar == ";" { return }
                index += 1
                if scalar == "\"" {
                    quoted.toggle()
                } else if quoted && scalar == "\\" && !isAtEnd {
                    index += 1
                }
            }
        }

        static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
            guard scalar.isASCII, scalar.value > 0x20, scalar.value < 0x7F else { return false }
            return !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains(scalar)
        }
    }
}
