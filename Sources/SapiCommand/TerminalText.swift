#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Text that came from the network in the form sapi shows it where a terminal reads it: its control characters
/// made visible, as `less`, `git` and xh show them, so that a server's bytes cannot set the terminal's title, clear
/// its screen or move its cursor.
///
/// - C0 controls and DEL in caret notation: ESC is `^[`, BEL `^G`, NUL `^@`, DEL `^?`. A line feed and a tab stay,
///   and so does a carriage return directly followed by a line feed (a CRLF line end); a lone carriage return, which
///   would let what follows overwrite the line, is `^M`.
/// - C1 controls (U+0080 to U+009F; U+009B is an 8-bit CSI to some terminals) as `<U+009B>`.
/// - The bidirectional embeddings, overrides and isolates (U+202A to U+202E, U+2066 to U+2069) as `<U+202E>`: they
///   reorder the text that follows them on screen, so that what is shown is not what was sent ("Trojan Source",
///   CVE-2021-42574). The directional marks (U+200E, U+200F, U+061C) stay: they reorder no run of text.
///
/// Standard error always shows this form (`StandardError`); standard output shows it on a terminal
/// (`OutputStyle.visibleControls`) and is otherwise written exactly as received. It applies to the pieces that came
/// from the network, before sapi's own colours are added around them.
enum TerminalText {
    /// The visible form of `text`: `text` itself when nothing in it is shown differently.
    static func visible(_ text: String) -> String {
        let scalars = text.unicodeScalars
        var out = String.UnicodeScalarView()
        // Up to where `text` has been copied into `out`: the common case, nothing to replace, copies nothing.
        var copied = scalars.startIndex
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let next = scalars.index(after: index)
            if let form = form(of: scalars[index], before: next < scalars.endIndex ? scalars[next] : nil) {
                out.append(contentsOf: scalars[copied..<index])
                out.append(contentsOf: form.unicodeScalars)
                copied = next
            }
            index = next
        }
        guard copied > scalars.startIndex else { return text }
        out.append(contentsOf: scalars[copied...])
        return String(out)
    }

    /// The visible form of a body's bytes read as UTF-8 (a byte that is not UTF-8 shows as U+FFFD): the bytes
    /// themselves when they are printable ASCII, line feeds and tabs.
    static func visible(_ data: Data) -> Data {
        guard data.contains(where: { ($0 < 0x20 && $0 != 0x0A && $0 != 0x09) || $0 >= 0x7F }) else { return data }
        return Data(visible(String(decoding: data, as: UTF8.self)).utf8)
    }

    /// How `scalar` is shown when `following` comes after it; `nil` when it is shown as it is.
    private static func form(of scalar: Unicode.Scalar, before following: Unicode.Scalar?) -> String? {
        switch scalar.value {
        case 0x0A, 0x09: nil
        case 0x0D: following == "\n" ? nil : "^M"
        case 0x00..<0x20: "^" + String(Unicode.Scalar(UInt8(scalar.value + 0x40)))
        case 0x7F: "^?"
        case 0x80...0x9F, 0x202A...0x202E, 0x2066...0x2069:
            "<U+" + String(repeating: "0", count: scalar.value < 0x100 ? 2 : 0)
                + String(scalar.value, radix: 16, uppercase: true) + ">"
        default: nil
        }
    }
}

extension TerminalText {
    /// A body shown on a terminal as it arrives: the visible form of what each chunk completes. A character split
    /// between two chunks waits for its end, and a carriage return at the end of a chunk for what follows it (a line
    /// feed keeps it).
    struct Chunks {
        private var carried = Data()

        /// The visible form of what `chunk` completes (possibly nothing yet); `nil` when the body is not text, not
        /// UTF-8 or with a NUL, which a terminal does not show (`Printer.binaryNote`).
        mutating func visible(_ chunk: Data) -> Data? {
            let bytes = carried + chunk
            if bytes.contains(0) { return nil }
            // Where an incomplete sequence at the end starts: its lead byte is among the last three bytes.
            var cut = bytes.endIndex
            var index = bytes.endIndex
            while index > bytes.startIndex, bytes.endIndex - index < 4 {
                index -= 1
                let byte = bytes[index]
                if byte & 0xC0 == 0x80 { continue }
                let needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                if bytes.endIndex - index < needed { cut = index }
                break
            }
            if cut == bytes.endIndex, cut > bytes.startIndex, bytes[cut - 1] == UInt8(ascii: "\r") { cut -= 1 }
            carried = Data(bytes[cut...])
            guard String(validating: bytes[..<cut], as: UTF8.self) != nil else { return nil }
            return TerminalText.visible(Data(bytes[..<cut]))
        }

        /// What is still held at the end of the body, in its visible form: a last carriage return (`^M`), or a
        /// character cut short (U+FFFD).
        mutating func finish() -> Data {
            defer { carried = Data() }
            return TerminalText.visible(carried)
        }
    }
}
