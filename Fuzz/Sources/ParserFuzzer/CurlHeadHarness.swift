import Foundation

@testable import ServerAPICurl

/// The curl backend's reading of response-head lines: each line of the input, as libcurl would hand it over.
enum CurlHeadHarness {
    static func run(_ data: Data) {
        data.withUnsafeBytes { raw in
            var start = 0
            while start <= raw.count {
                let newline = raw[start...].firstIndex(of: UInt8(ascii: "\n")) ?? raw.count
                let end = min(newline + 1, raw.count)
                check(UnsafeRawBufferPointer(rebasing: raw[start..<end]), data)
                start = newline + 1
            }
        }
    }

    static func check(_ line: UnsafeRawBufferPointer, _ data: Data) {
        let isBlank = line.allSatisfy { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }
        switch CurlHeadLine(line).text {
        case .end:
            require(isBlank, "a line with text read as the end of a head", input: data)
        case .status(let code):
            require(line.starts(with: "HTTP/".utf8), "a status line that does not start with HTTP/", input: data)
            require((0...999).contains(code), "status \(code)", input: data)
        case .continuation(let value):
            require(line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t"), "a continuation", input: data)
            requireTrimmed(value, data)
        case .field(let name, let value):
            require(!name.utf8.contains(UInt8(ascii: ":")), "the field name \(name) holds a colon", input: data)
            require(!name.hasPrefix(" ") && !name.hasPrefix("\t"), "the field name \(name) is folded", input: data)
            requireTrimmed(value, data)
        case .ignored:
            require(!line.contains(UInt8(ascii: ":")) && !isBlank, "a field or blank line was ignored", input: data)
        }
    }

    static func requireTrimmed(_ value: String, _ data: Data) {
        for edge in [value.utf8.first, value.utf8.last] {
            // Spaces and tabs only: a bare CR inside a line is the server's text, kept as it came.
            require(
                edge != UInt8(ascii: " ") && edge != UInt8(ascii: "\t"),
                "the value \(String(reflecting: value)) is not trimmed", input: data)
        }
    }
}
