import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Prints JSON as httpie does: four-space indent, keys sorted (or in the body's order), colours on a
/// terminal.
///
/// One token formatter does the indenting and the colouring of any valid JSON text; a `JSONValue` is
/// first written compactly with its keys sorted, then formatted the same way.
struct JSONPrinter {
    /// Colours, or `nil` for none.
    var palette: OutputStyle.Palette?
    /// Show control characters in their visible form (`TerminalText`), as `OutputStyle.visibleControls` says. A
    /// string can hold some raw (DEL, C1 controls, bidirectional overrides) and, read from a `JSONValue`, any
    /// (`quote` escapes C0 controls only).
    var visibleControls = false

    /// A printer with a palette, and control characters as they are.
    init(palette: OutputStyle.Palette?) {
        self.palette = palette
    }

    /// A printer for output in `style`: its palette, and its control characters.
    init(style: OutputStyle) {
        palette = style.palette
        visibleControls = style.visibleControls
    }

    /// The value with its keys sorted: indented, or compact on one line with `pretty: false`.
    func render(_ value: JSONValue, pretty: Bool = true) -> String {
        var compact = ""
        Self.writeCompact(value, into: &compact)
        return String(decoding: format(Data(compact.utf8), indent: pretty), as: UTF8.self)
    }

    /// Valid JSON text indented (whitespace between tokens replaced) or, with `indent: false`, as it is;
    /// coloured with the palette. Keys keep the text's order.
    ///
    /// - Precondition: `json` is valid JSON (check with `JSONScanner.validate` first); anything else is
    ///   copied through without a guarantee about its shape.
    func format(_ json: Data, indent: Bool) -> Data {
        var out = [UInt8]()
        out.reserveCapacity(json.count + json.count / 2)
        // For each open container: is it an object, and is the next string in it a key?
        var containers: [(object: Bool, expectsKey: Bool)] = []
        // Visible before a colour is added: the palette's escapes are the only ones in the output.
        let bytes = [UInt8](visibleControls ? TerminalText.visible(json) : json)
        var index = 0
        func newline(_ depth: Int) {
            guard indent else { return }
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: depth * 4))
        }
        func painted(_ range: Range<Int>, _ color: String?) {
            if let color { out.append(contentsOf: color.utf8) }
            out.append(contentsOf: bytes[range])
            if color != nil { out.append(contentsOf: OutputStyle.Palette.reset.utf8) }
        }
        func nextToken(after position: Int) -> UInt8? {
            var next = position
            while next < bytes.count, Self.isWhitespace(bytes[next]) { next += 1 }
            return next < bytes.count ? bytes[next] : nil
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x22:  // a string
                var end = index + 1
                while end < bytes.count, bytes[end] != 0x22 {
                    end += bytes[end] == 0x5C ? 2 : 1
                }
                end = min(end + 1, bytes.count)
                let isKey = containers.last.map { $0.object && $0.expectsKey } ?? false
                if isKey { containers[containers.count - 1].expectsKey = false }
                painted(index..<end, isKey ? palette?.key : palette?.string)
                index = end
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close: UInt8 = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                out.append(byte)
                if indent, nextToken(after: index + 1) == close {
                    // An empty container stays on one line: {} and [].
                    var next = index + 1
                    while bytes[next] != close { next += 1 }
                    out.append(close)
                    index = next + 1
                    continue
                }
                containers.append((object: byte == UInt8(ascii: "{"), expectsKey: true))
                newline(containers.count)
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !containers.isEmpty { containers.removeLast() }
                newline(containers.count)
                out.append(byte)
                index += 1
            case UInt8(ascii: ","):
                out.append(byte)
                if !containers.isEmpty { containers[containers.count - 1].expectsKey = true }
                newline(containers.count)
                index += 1
            case UInt8(ascii: ":"):
                out.append(byte)
                if indent { out.append(0x20) }
                index += 1
            case _ where Self.isWhitespace(byte):
                if !indent { out.append(byte) }
                index += 1
            default:  // a number or a literal
                var end = index
                while end < bytes.count, !Self.isDelimiter(bytes[end]) { end += 1 }
                let isNumber = byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte)
                painted(index..<max(end, index + 1), isNumber ? palette?.number : palette?.literal)
                index = max(end, index + 1)
            }
        }
        return Data(out)
    }

    /// JSON text coloured, its whitespace kept as it came: how an item printed as it arrives (an event's data, a
    /// WebSocket message) is shown in `style`. `nil` without a palette, or when `data` is not JSON.
    static func coloured(_ data: Data, style: OutputStyle) -> Data? {
        guard style.palette != nil, (try? JSONScanner.validate(data)) != nil else { return nil }
        return JSONPrinter(style: style).format(data, indent: false)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        isWhitespace(byte) || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
            || byte == UInt8(ascii: ":")
    }

    /// The value as compact JSON text, keys sorted.
    static func writeCompact(_ value: JSONValue, into out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .int(let number): out += String(number)
        case .double(let number): out += format(number)
        case .string(let text): out += quote(text)
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                writeCompact(element, into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                out += quote(key) + ":"
                writeCompact(members[key] ?? .null, into: &out)
            }
            out += "}"
        }
    }

    static func format(_ number: Double) -> String {
        guard number.isFinite else { return "null" }
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) + ".0" }
        return String(number)
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
