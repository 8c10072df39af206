/// Reads HTTP/1.1's chunked transfer coding (RFC 9112 §7.1) as it arrives, byte by byte: the data, the
/// trailer fields, and where the body ends.
///
/// A transport that must see the end of a chunked body itself uses it (libcurl, say, does not end a
/// transfer whose response is complete while its request body is still being sent, so a full-duplex call
/// reads the raw chunks). Pure: bytes in, data and the end out.
package struct ChunkedDecoder: Sendable {
    private enum State: Sendable {
        case size(digits: Int, value: Int64, inExtension: Bool)
        case sizeLF(size: Int64)
        case data(remaining: Int64)
        case dataCR
        case dataLF
        case trailerLine
        case ended
    }

    /// The longest chunk-size line (with extensions) accepted, in bytes.
    package static let maximumLineLength = 4096

    private var state = State.size(digits: 0, value: 0, inExtension: false)
    private var line: [UInt8] = []
    private var lineLength = 0
    private var trailerSize = 0

    /// The trailer fields read so far; all of them once `isEnded`.
    package private(set) var trailers = HTTPHeaders()

    /// Creates a decoder at the start of a body.
    package init() {}

    /// Whether the last chunk and the trailer section have been read: the body is over.
    package var isEnded: Bool { if case .ended = state { true } else { false } }

    /// Reads the next bytes of a chunked body.
    /// - Parameters:
    ///   - bytes: The bytes as they came off the connection.
    ///   - data: Called with each piece of the body's data, in order.
    /// - Returns: How many bytes were taken: all of them, or fewer when the body ended inside them.
    /// - Throws: `network` when the bytes are not chunked coding; `responseTooLarge` when the trailer
    ///   section is past `TrailerRule`'s limits.
    @discardableResult
    package mutating func decode(
        _ bytes: UnsafeRawBufferPointer, data: (UnsafeRawBufferPointer) -> Void
    ) throws(ServerAPIError) -> Int {
        var index = 0
        while index < bytes.count {
            switch state {
            case .ended:
                return index
            case .data(let remaining):
                let count = Int(min(remaining, Int64(bytes.count - index)))
                data(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)]))
                index += count
                state = remaining == Int64(count) ? .dataCR : .data(remaining: remaining - Int64(count))
                continue
            default:
                break
            }
            let byte = bytes[index]
            index += 1
            try take(byte)
        }
        return index
    }

    private mutating func take(_ byte: UInt8) throws(ServerAPIError) {
        switch state {
        case .size(let digits, let value, let inExtension):
            lineLength += 1
            guard lineLength <= Self.maximumLineLength else { throw Self.malformed("a chunk-size line is too long") }
            if byte == UInt8(ascii: "\r") {
                guard digits > 0 else { throw Self.malformed("a chunk has no size") }
                state = .sizeLF(size: value)
            } else if byte == UInt8(ascii: "\n") {
                guard digits > 0 else { throw Self.malformed("a chunk has no size") }
                endSizeLine(value)
            } else if inExtension {
                break
            } else if let digit = Self.hexValue(byte) {
                guard digits < 15 else { throw Self.malformed("a chunk is larger than the transport accepts") }
                state = .size(digits: digits + 1, value: value * 16 + Int64(digit), inExtension: false)
            } else if byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                guard digits > 0 else { throw Self.malformed("a chunk has no size") }
                state = .size(digits: digits, value: value, inExtension: true)
            } else {
                throw Self.malformed("a chunk size is not hexadecimal")
            }
        case .sizeLF(let size):
            guard byte == UInt8(ascii: "\n") else { throw Self.malformed("a chunk-size line does not end with CRLF") }
            endSizeLine(size)
        case .dataCR:
            if byte == UInt8(ascii: "\r") {
                state = .dataLF
            } else if byte == UInt8(ascii: "\n") {
                startSizeLine()
            } else {
                throw Self.malformed("a chunk's data is longer than its size")
            }
        case .dataLF:
            guard byte == UInt8(ascii: "\n") else { throw Self.malformed("a chunk's data does not end with CRLF") }
            startSizeLine()
        case .trailerLine:
            if byte == UInt8(ascii: "\n") {
                try endTrailerLine()
            } else {
                line.append(byte)
                trailerSize += 1
                guard trailerSize <= TrailerRule.maximumSize + TrailerRule.maximumCount * 4 else {
                    throw TrailerRule.tooLarge
                }
            }
        case .data, .ended:
            break
        }
    }

    private mutating func endSizeLine(_ size: Int64) {
        state = size == 0 ? .trailerLine : .data(remaining: size)
        line = []
    }

    private mutating func startSizeLine() {
        lineLength = 0
        state = .size(digits: 0, value: 0, inExtension: false)
    }

    private mutating func endTrailerLine() throws(ServerAPIError) {
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        defer { line = [] }
        guard !line.isEmpty else {
            state = .ended
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
            throw Self.malformed("a trailer line is not a field")
        }
        let name = String(decoding: line[..<colon], as: UTF8.self)
        let value = HTTPSyntax.trimmed(String(decoding: line[(colon + 1)...], as: UTF8.self))
        trailers.add(name: name, value: String(value))
        guard !TrailerRule.exceedsLimits(count: trailers.count, size: trailerSize) else { throw TrailerRule.tooLarge }
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }

    private static func malformed(_ what: String) -> ServerAPIError {
        ServerAPIError(.network, "the response's chunked body is malformed: \(what)")
    }
}
