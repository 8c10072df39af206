#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The character sets the formatters decode text in, read from a `Content-Type` header.
///
/// Decoding is strict: bytes that are not valid in the declared charset are a `decoding` error
/// (never silently replaced with U+FFFD), because a repaired string hides a server bug and
/// corrupts data that is saved or sent back. Read the body with the `.data` format to handle
/// such bytes yourself.
enum TextCharset: Hashable, Sendable {
    case utf8
    /// ISO-8859-1: every byte is the code point of the same value (never fails).
    case latin1
    /// Windows-1252, the superset of Latin-1 browsers use (never fails).
    case windows1252
    /// US-ASCII: a byte above 0x7F is an error.
    case ascii
    /// UTF-16; `bigEndian == nil` reads a byte order mark and defaults to big-endian (RFC 2781).
    case utf16(bigEndian: Bool?)
    /// UTF-32; `bigEndian == nil` reads a byte order mark and defaults to big-endian.
    case utf32(bigEndian: Bool?)

    /// The charset of a label such as `utf-8` or `ISO-8859-1`, or `nil` when unsupported.
    init?(label: String) {
        switch label.lowercased() {
        case "utf-8", "utf8", "unicode-1-1-utf-8": self = .utf8
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "iso_8859-1:1987", "latin1", "latin-1", "l1", "iso-ir-100",
            "cp819", "ibm819", "csisolatin1":
            self = .latin1
        case "windows-1252", "cp1252", "x-cp1252": self = .windows1252
        case "us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "csascii", "us": self = .ascii
        case "utf-16", "utf16": self = .utf16(bigEndian: nil)
        case "utf-16be", "utf16be": self = .utf16(bigEndian: true)
        case "utf-16le", "utf16le": self = .utf16(bigEndian: false)
        case "utf-32", "utf32": self = .utf32(bigEndian: nil)
        case "utf-32be", "utf32be": self = .utf32(bigEndian: true)
        case "utf-32le", "utf32le": self = .utf32(bigEndian: false)
        default: return nil
        }
    }

    /// The `charset` parameter of a `Content-Type` value, unquoted, or `nil` when there is none.
    static func label(inContentType contentType: String?) -> String? {
        // Most responses have no parameters at all: one byte search answers them.
        guard let contentType, contentType.utf8.contains(UInt8(ascii: ";")) else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2,
                HTTPSyntax.trimmed(parts[0]).lowercased() == "charset"
            else { continue }
            var value = String(HTTPSyntax.trimmed(parts[1]))
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// The charset a `Content-Type` declares; UTF-8 when it declares none.
    /// - Throws: `decoding` for a charset this library does not decode.
    static func declared(by contentType: String?) throws(ServerAPIError) -> TextCharset {
        guard let label = label(inContentType: contentType) else { return .utf8 }
        guard let charset = TextCharset(label: label) else {
            throw ServerAPIError(
                .decoding,
                "the response's charset \"\(label)\" is not supported (utf-8, iso-8859-1, windows-1252, us-ascii, "
                    + "utf-16 and utf-32 are); read the body with the .data format and decode it yourself")
        }
        return charset
    }

    /// Decodes text strictly; a leading byte order mark of the charset is dropped.
    /// - Throws: `decoding`, saying where the first invalid byte is.
    func decode(_ data: Data) throws(ServerAPIError) -> String {
        switch self {
        case .utf8:
            return try Self.decodeUTF8(data)
        case .latin1:
            return String(String.UnicodeScalarView(data.map { Unicode.Scalar($0) }))
        case .windows1252:
            return String(String.UnicodeScalarView(data.map(Self.windows1252Scalar)))
        case .ascii:
            if let index = data.firstIndex(where: { $0 >= 0x80 }) {
                throw ServerAPIError(
                    .decoding,
                    "the response is not valid US-ASCII text: byte \(Self.hex(data[index])) "
                        + "at offset \(index - data.startIndex)")
            }
            return String(decoding: data, as: UTF8.self)
        case .utf16(let bigEndian):
            return try Self.decodeUTF16(data, bigEndian: bigEndian)
        case .utf32(let bigEndian):
            return try Self.decodeUTF32(data, bigEndian: bigEndian)
        }
    }

    /// The body as UTF-8 bytes for the JSON scanner: as it is for UTF-8, transcoded otherwise.
    func utf8Bytes(_ data: Data) throws(ServerAPIError) -> Data {
        if self == .utf8 { return data }
        return Data(try decode(data).utf8)
    }

    // MARK: Decoders

    private static func decodeUTF8(_ data: Data) throws(ServerAPIError) -> String {
        let text: String? = data.withUnsafeBytes { raw in
            var bytes = raw.bindMemory(to: UInt8.self)[...]
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
            return String(validating: bytes, as: UTF8.self)
        }
        if let text { return text }
        let offset = firstInvalidUTF8Offset(data)
        throw ServerAPIError(
            .decoding,
            "the response is not valid UTF-8 text: invalid byte \(hex(data[data.startIndex + offset])) "
                + "at offset \(offset) (the body is not repaired; read it with the .data format, or have the server "
                + "declare its real charset in Content-Type)")
    }

    /// The offset of the first byte of the first invalid UTF-8 sequence.
    private static func firstInvalidUTF8Offset(_ data: Data) -> Int {
        data.withUnsafeBytes { raw in
            JSONCursor.withCursor(over: raw) { cursor in
                while !cursor.atEnd {
                    if cursor.current < 0x80 {
                        cursor.position += 1
                    } else {
                        do throws(JSONSyntaxError) {
                            try cursor.skipUTF8Sequence()
                        } catch {
                            return error.offset
                        }
                    }
                }
                return 0
            }
        }
    }

    private static func decodeUTF16(_ data: Data, bigEndian: Bool?) throws(ServerAPIError) -> String {
        guard data.count % 2 == 0 else {
            throw ServerAPIError(
                .decoding, "the response is not valid UTF-16 text: it has an odd number of bytes (\(data.count))")
        }
        var bytes = [UInt8](data)
        var big = bigEndian ?? true
        if bytes.count >= 2 {
            let mark = (bytes[0], bytes[1])
            if mark == (0xFE, 0xFF), bigEndian != false {
                big = true
                bytes.removeFirst(2)
            } else if mark == (0xFF, 0xFE), bigEndian != true {
                big = false
                bytes.removeFirst(2)
            }
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = 0
        while index < bytes.count {
            let (first, second) = (UInt16(bytes[index]), UInt16(bytes[index + 1]))
            units.append(big ? first << 8 | second : second << 8 | first)
            index += 2
        }
        guard let text = String(validating: units, as: UTF16.self) else {
            throw ServerAPIError(.decoding, "the response is not valid UTF-16 text: it has an unpaired surrogate")
        }
        return text
    }

    private static func decodeUTF32(_ data: Data, bigEndian: Bool?) throws(ServerAPIError) -> String {
        guard data.count % 4 == 0 else {
            throw ServerAPIError(
                .decoding, "the response is not valid UTF-32 text: its length (\(data.count)) is not a multiple of 4")
        }
        let bytes = [UInt8](data)
        var big = bigEndian ?? true
        var start = 0
        if bytes.count >= 4 {
            if bytes[0...3] == [0, 0, 0xFE, 0xFF], bigEndian != false {
                big = true
                start = 4
            } else if bytes[0...3] == [0xFF, 0xFE, 0, 0], bigEndian != true {
                big = false
                start = 4
            }
        }
        var scalars = String.UnicodeScalarView()
        var index = start
        while index < bytes.count {
            let word = bytes[index..<index + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let value = big ? word : word.byteSwapped
            guard let scalar = Unicode.Scalar(value) else {
                throw ServerAPIError(
                    .decoding,
                    "the response is not valid UTF-32 text: 0x\(String(value, radix: 16)) at offset \(index) "
                        + "is not a code point")
            }
            scalars.append(scalar)
            index += 4
        }
        return String(scalars)
    }

    /// A byte as `0xAB`.
    private static func hex(_ byte: UInt8) -> String {
        "0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
    }

    /// Windows-1252: Latin-1 except 0x80–0x9F, which hold punctuation and a few letters
    /// (the five unassigned bytes map to the C1 controls, as browsers do).
    private static func windows1252Scalar(_ byte: UInt8) -> Unicode.Scalar {
        guard (0x80...0x9F).contains(byte) else { return Unicode.Scalar(byte) }
        let table: [UInt32] = [
            0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,
            0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
            0x0153, 0x9D, 0x017E, 0x0178,
        ]
        return Unicode.Scalar(table[Int(byte - 0x80)]) ?? Unicode.Scalar(byte)
    }
}
