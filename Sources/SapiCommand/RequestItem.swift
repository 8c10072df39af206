/// One `ITEM` argument in httpie's syntax.
enum RequestItem: Equatable {
    /// `Header:Value`
    case header(name: String, value: String)
    /// `name==value`
    case query(name: String, value: String)
    /// `name=value`: a string field (JSON body, or form field with `--form`).
    case field(name: String, value: String)
    /// `name:=json`: a raw JSON value.
    case rawJSON(name: String, json: String)
    /// `field@path`: a file part (makes the body multipart).
    case file(name: String, path: String)

    /// The separators, longest first where two start alike, so `:=` wins over `:` and `==` over `=`.
    private static let separators: [(String, @Sendable (String, String) -> RequestItem)] = [
        (":=", { .rawJSON(name: $0, json: $1) }),
        ("==", { .query(name: $0, value: $1) }),
        ("=", { .field(name: $0, value: $1) }),
        ("@", { .file(name: $0, path: $1) }),
        (":", { .header(name: $0, value: $1) }),
    ]

    /// Parses an item; the first separator (left to right) decides its kind, and a backslash
    /// escapes a separator character (`a\=b=c` is the field `a=b` with value `c`).
    /// - Returns: The item, or `nil` when the argument has no separator.
    static func parse(_ argument: String) -> RequestItem? {
        let chars = Array(argument)
        var name = ""
        var index = 0
        while index < chars.count {
            let char = chars[index]
            if char == "\\", index + 1 < chars.count, ":=@\\".contains(chars[index + 1]) {
                name.append(chars[index + 1])
                index += 2
                continue
            }
            for (separator, make) in separators {
                let sep = Array(separator)
                if index + sep.count <= chars.count, Array(chars[index..<(index + sep.count)]) == sep {
                    guard !name.isEmpty || separator == ":" else { return nil }
                    let value = String(chars[(index + sep.count)...])
                    if separator == ":" && name.isEmpty { return nil }
                    return make(name, value)
                }
            }
            name.append(char)
            index += 1
        }
        return nil
    }
}
