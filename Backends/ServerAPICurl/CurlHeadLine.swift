import ServerAPIKit

/// One line of a response head as libcurl hands it to the header callback, read into what it says.
///
/// A pure value: the transfer decides what each line means for the exchange, this only reads the
/// bytes, so the reading is unit-tested and fuzzed apart from libcurl. Its texts are views of the line,
/// valid only while the line is: the header callback keeps them as bytes (`HTTPHeaders.addReceived`), not strings.
enum CurlHeadLine {
    /// A blank line: the end of a head (or of the trailers after the body).
    case end
    /// A status line (`HTTP/1.1 200 OK`, `HTTP/2 200`) with its code; 0 when it has no three-digit code.
    case status(Int)
    /// An obsolete folded line (it starts with a space or a tab): more of the previous field's value, trimmed.
    case continuation(UnsafeRawBufferPointer)
    /// A header field, its value trimmed of surrounding spaces and tabs.
    case field(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    /// A line without a colon, which says nothing.
    case ignored

    /// Reads one line, with or without its line break.
    init(_ line: UnsafeRawBufferPointer) {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\r") || line[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        guard end > 0 else {
            self = .end
            return
        }
        let text = UnsafeRawBufferPointer(rebasing: line[..<end])
        if Self.isStatusLine(text) {
            self = .status(Self.code(ofStatusLine: text))
        } else if text[0] == UInt8(ascii: " ") || text[0] == UInt8(ascii: "\t") {
            self = .continuation(Self.trimmed(text))
        } else if let colon = text.firstIndex(of: UInt8(ascii: ":")) {
            self = .field(
                name: UnsafeRawBufferPointer(rebasing: text[..<colon]),
                value: Self.trimmed(UnsafeRawBufferPointer(rebasing: text[(colon + 1)...])))
        } else {
            self = .ignored
        }
    }

    /// Whether the line starts with `HTTP/`: five byte compares, where `starts(with:)` over the literal's
    /// UTF-8 view walks two generic iterators for every line of every head.
    private static func isStatusLine(_ text: UnsafeRawBufferPointer) -> Bool {
        text.count >= 5 && text[0] == UInt8(ascii: "H") && text[1] == UInt8(ascii: "T") && text[2] == UInt8(ascii: "T")
            && text[3] == UInt8(ascii: "P") && text[4] == UInt8(ascii: "/")
    }

    /// The status code of a status line: the three digits after the first space, or 0.
    private static func code(ofStatusLine statusLine: UnsafeRawBufferPointer) -> Int {
        guard let space = statusLine.firstIndex(of: UInt8(ascii: " ")) else { return 0 }
        var code = 0
        for byte in statusLine[(space + 1)...].prefix(3) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return 0 }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return code
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }
}

extension CurlHeadLine {
    /// The line's reading with its texts as strings, to compare and print.
    enum Text: Equatable {
        case end
        case status(Int)
        case continuation(String)
        case field(name: String, value: String)
        case ignored
    }

    var text: Text {
        switch self {
        case .end: .end
        case .status(let code): .status(code)
        case .continuation(let text): .continuation(String(decoding: text, as: UTF8.self))
        case .field(let name, let value):
            .field(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        case .ignored: .ignored
        }
    }
}
