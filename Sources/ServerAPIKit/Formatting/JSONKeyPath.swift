/// A path to a value inside a JSON document: `data.shop.products`, `list[0]`, `a.b[2].c`, `[0]`,
/// `#.items` (relative to an envelope's data key) or `~.meta` (from the root of the document).
///
/// Syntax:
/// - Keys are separated by `.`; an array element is `[n]` with `n` ≥ 0 (`list[0]`, `[0]` for a root array,
///   `matrix[1][2]`).
/// - A key is taken literally (spaces, Unicode and emoji included). A backslash escapes the next
///   character, so `a\.b` is the single key `a.b`; a key can also be quoted: `["a.b"]`, `["say \"hi\""]`.
/// - A leading `#` anchors the path at the envelope's data value (`#`, `#.items`, `#[0]`); a leading
///   `~` anchors it at the root of the document (`~`, `~.meta`). Without an anchor the formatter
///   decides: `EnvelopeFormatter` reads it below the data key, `PlainFormatter` from the root (for
///   which `#` and `~` both mean the root). Escape a key that starts with `#` or `~`: `\#tag`.
/// - An empty path is the whole document (or the whole data value, for an envelope).
///
/// Keys are compared with the document's keys by their Unicode scalars, after JSON escapes are
/// decoded (the key path `a"b` finds the JSON key `"a\"b"`); no Unicode normalisation is applied.
/// When an object has the same key twice, the first one counts (as with `JSONDecoder`).
public struct JSONKeyPath: Sendable, Hashable, CustomStringConvertible {
    /// Where a key path starts.
    public enum Anchor: Sendable, Hashable {
        /// Where the formatter starts by default (the data value of an envelope, the root otherwise).
        case automatic
        /// The envelope's data value (`#`).
        case data
        /// The root of the document (`~`).
        case root
    }

    /// One step of a key path.
    public enum Component: Sendable, Hashable, CustomStringConvertible {
        /// A member of an object.
        case key(String)
        /// An element of an array, from 0.
        case index(Int)

        /// The step as written in a key path: `name` (escaped as needed) or `[n]`.
        public var description: String {
            switch self {
            case .key(let key): JSONKeyPath.escaped(key)
            case .index(let index): "[\(index)]"
            }
        }
    }

    /// Where the path starts.
    public var anchor: Anchor
    /// The steps, in order.
    public var components: [Component]

    /// Creates a key path from its parts.
    /// - Parameters:
    ///   - anchor: Where the path starts.
    ///   - components: The steps.
    public init(anchor: Anchor = .automatic, components: [Component] = []) {
        self.anchor = anchor
        self.components = components
    }

    /// Parses a key path.
    /// - Parameter text: The key path, such as `data.items[0].name`.
    /// - Throws: `ServerAPIError` of kind `invalidRequest` naming the key path and what is wrong in it.
    public init(parsing text: String) throws(ServerAPIError) {
        if let simple = Self.dottedKeys(text) {
            self = simple
            return
        }
        var parser = Parser(text: text)
        self = try parser.parse()
    }

    /// The common case, `a.b.c` with no brackets, escapes or anchors, read without building
    /// characters; `nil` sends anything else to the full parser (which also reports errors).
    private static func dottedKeys(_ text: String) -> JSONKeyPath? {
        var components: [Component] = []
        var start = text.utf8.startIndex
        let utf8 = text.utf8
        var index = start
        while index < utf8.endIndex {
            switch utf8[index] {
            case UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "#"),
                UInt8(ascii: "~"):
                return nil
            case UInt8(ascii: "."):
                guard start < index else { return nil }
                components.append(.key(String(text[start..<index])))
                start = utf8.index(after: index)
            default:
                break
            }
            index = utf8.index(after: index)
        }
        guard start < utf8.endIndex else { return nil }
        components.append(.key(String(text[start..<utf8.endIndex])))
        return JSONKeyPath(components: components)
    }

    /// Whether the path has no steps (it designates its anchor itself).
    public var isEmpty: Bool { components.isEmpty }

    /// The key path as text, in the syntax `init(parsing:)` reads.
    public var description: String {
        let prefix: String
        switch anchor {
        case .automatic: prefix = ""
        case .data: prefix = "#"
        case .root: prefix = "~"
        }
        return prefix + Self.describe(components, anchored: anchor != .automatic)
    }

    /// The text of a list of components, such as `data.items[0]`.
    static func describe(_ components: some Collection<Component>, anchored: Bool = false) -> String {
        var text = ""
        for component in components {
            switch component {
            case .key:
                if anchored || !text.isEmpty { text += "." }
            case .index:
                break
            }
            text += component.description
        }
        return text
    }

    /// A key as written in a key path: `.`, `[`, `]` and `\` (and a leading `#` or `~`) escaped.
    static func escaped(_ key: String) -> String {
        if key.isEmpty { return "[\"\"]" }
        // By scalars, as the parser reads: a key may start with a combining mark, which must not join the
        // `.` or `\\` written before it.
        var text = String.UnicodeScalarView()
        for (offset, scalar) in key.unicodeScalars.enumerated() {
            let special = scalar == "." || scalar == "[" || scalar == "]" || scalar == "\\"
            if special || (offset == 0 && (scalar == "#" || scalar == "~")) { text.append("\\") }
            text.append(scalar)
        }
        return String(text)
    }
}

extension JSONKeyPath {
    /// A hand-written parser: key paths are short, and errors must say exactly what is wrong.
    ///
    /// It reads Unicode scalars, not characters: a `.`, `[` or `\\` followed by a combining mark is one
    /// character, yet still a separator (as in the fast path, which splits the UTF-8 bytes at `.`).
    private struct Parser {
        let text: String
        let characters: [Unicode.Scalar]
        var position = 0

        init(text: String) {
            self.text = text
            self.characters = Array(text.unicodeScalars)
        }

        mutating func parse() throws(ServerAPIError) -> JSONKeyPath {
            var path = JSONKeyPath()
            if let first = characters.first, first == "#" || first == "~" {
                path.anchor = first == "#" ? .data : .root
                position = 1
                guard position == characters.count || characters[position] == "." || characters[position] == "[" else {
                    throw failure(
                        "\"\(first)\" must be followed by \".\" or \"[\" (escape a key that starts with it: \\\(first))"
                    )
                }
                if position < characters.count, characters[position] == "." {
                    position += 1
                    guard position < characters.count else { throw failure("it ends with \".\"") }
                }
            }
            var expectKey = path.anchor == .automatic || position > 1
            while position < characters.count {
                let character = characters[position]
                if character == "[" {
                    path.components.append(try bracket())
                    expectKey = false
                } else if character == "." {
                    guard !expectKey, position + 1 < characters.count else {
                        throw failure(
                            position + 1 == characters.count
                                ? "it ends with \".\"" : "it has an empty key at offset \(position)")
                    }
                    position += 1
                    expectKey = true
                    if characters[position] == "." { throw failure("it has an empty key at offset \(position)") }
                } else {
                    guard expectKey else { throw failure("\"\(character)\" at offset \(position) must follow a \".\"") }
                    path.components.append(.key(try bareKey()))
                    expectKey = false
                }
            }
            return path
        }

        /// A key up to the next unescaped `.` or `[`.
        mutating func bareKey() throws(ServerAPIError) -> String {
            var key = ""
            while position < characters.count {
                let character = characters[position]
                if character == "." || character == "[" { break }
                if character == "]" { throw failure("it has an unmatched \"]\" at offset \(position)") }
                if character == "\\" {
                    position += 1
                    guard position < characters.count else { throw failure("it ends with a lone \"\\\"") }
                    key.unicodeScalars.append(characters[position])
                } else {
                    key.unicodeScalars.append(character)
                }
                position += 1
            }
            return key
        }

        /// `[12]` or `["quoted key"]`.
        mutating func bracket() throws(ServerAPIError) -> Component {
            let open = position
            position += 1
            guard position < characters.count else { throw failure("it has an unclosed \"[\" at offset \(open)") }
            if characters[position] == "\"" {
                position += 1
                var key = ""
                while position < characters.count, characters[position] != "\"" {
                    if characters[position] == "\\" {
                        position += 1
                        guard position < characters.count else { break }
                    }
                    key.unicodeScalars.append(characters[position])
                    position += 1
                }
                guard position + 1 < characters.count, characters[position] == "\"", characters[position + 1] == "]"
                else { throw failure("it has an unclosed quoted key at offset \(open)") }
                position += 2
                return .key(key)
            }
            var digits = ""
            while position < characters.count, characters[position] != "]" {
                digits.unicodeScalars.append(characters[position])
                position += 1
            }
            guard position < characters.count else { throw failure("it has an unclosed \"[\" at offset \(open)") }
            position += 1
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let index = Int(digits) else {
                throw failure("\"[\(digits)]\" at offset \(open) is not an array index (a whole number from 0)")
            }
            return .index(index)
        }

        func failure(_ reason: String) -> ServerAPIError {
            ServerAPIError(.invalidRequest, "key path \"\(text)\" is not valid: \(reason)", keyPath: text)
        }
    }
}
