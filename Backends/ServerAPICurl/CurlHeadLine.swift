import ServerAPIKit

/// One line of a response head as libcurl hands it to the header callback, read into what it says.
///
/// A pure value: the transfer decides what each line means for the exchange, this only reads the
/// bytes, so the reading is unit-tested and fuzzed apart from libcurl.
enum CurlHeadLine: Equatable {
    /// A blank line: the end of a head (or of the trailers after the body).
    case end
    /// A status line (`HTTP/1.1 200 OK`, `HTTP/2 200`) with its code; 0 when it has no three-digit code.
    case status(Int)
    /// An obsolete folded line (it starts with a space or a tab): more of the previous field's value, trimmed.
    case continuation(String)
    /// A header field, its value trimmed of surrounding spaces and tabs.
    case field(name: String, value: String)
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
                name: String(decoding: UnsafeRawBufferPointer(rebasing: text[..<colon]), as: UTF8.self),
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

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> String {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }
}

extension HTTPHeaders {
    /// Folds an obsolete continuation line (`CurlHeadLine.continuation`) into the last field's value.
    /// - Returns: Whether there was a field to continue.
    @discardableResult
    mutating func continueLastField(with text: String) -> Bool {
        var fields = self.fields
        guard !fields.isEmpty else { return false }
        fields[fields.count - 1].value += " " + text
        self = HTTPHeaders(fields)
        return true
    }
}
