import ServerAPIKit

/// Prints JSON as httpie does: keys sorted, four-space indent, colours on a terminal.
struct JSONPrinter {
    var colors: Bool

    private enum Color: String {
        case key = "\u{1B}[34m"
        case string = "\u{1B}[32m"
        case number = "\u{1B}[36m"
        case literal = "\u{1B}[35m"
        case reset = "\u{1B}[0m"
    }

    /// The value pretty-printed, or compact on one line with `pretty: false`.
    func render(_ value: JSONValue, pretty: Bool = true) -> String {
        var out = ""
        write(value, indent: 0, pretty: pretty, into: &out)
        return out
    }

    private func paint(_ text: String, _ color: Color) -> String {
        colors ? color.rawValue + text + Color.reset.rawValue : text
    }

    private func write(_ value: JSONValue, indent: Int, pretty: Bool, into out: inout String) {
        let pad = pretty ? String(repeating: " ", count: indent + 4) : ""
        let closePad = pretty ? String(repeating: " ", count: indent) : ""
        let newline = pretty ? "\n" : ""
        switch value {
        case .null: out += paint("null", .literal)
        case .bool(let flag): out += paint(flag ? "true" : "false", .literal)
        case .int(let number): out += paint(String(number), .number)
        case .double(let number): out += paint(Self.format(number), .number)
        case .string(let text): out += paint(Self.quote(text), .string)
        case .array(let elements):
            guard !elements.isEmpty else {
                out += "[]"
                return
            }
            out += "[" + newline
            for (index, element) in elements.enumerated() {
                out += pad
                write(element, indent: indent + 4, pretty: pretty, into: &out)
                out += (index < elements.count - 1 ? "," : "") + newline
            }
            out += closePad + "]"
        case .object(let members):
            guard !members.isEmpty else {
                out += "{}"
                return
            }
            out += "{" + newline
            let keys = members.keys.sorted()
            for (index, key) in keys.enumerated() {
                out += pad + paint(Self.quote(key), .key) + (pretty ? ": " : ":")
                write(members[key] ?? .null, indent: indent + 4, pretty: pretty, into: &out)
                out += (index < keys.count - 1 ? "," : "") + newline
            }
            out += closePad + "}"
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
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
