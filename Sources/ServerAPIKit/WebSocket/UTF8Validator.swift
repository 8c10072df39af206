/// Checks UTF-8 as it arrives, piece by piece: what a WebSocket text message split over fragments needs to fail
/// at the first invalid byte (RFC 6455 §8.1 "fail fast") rather than once the message is whole.
///
/// A byte sequence is valid when each piece fed so far continues a valid prefix (no overlong forms, no surrogates,
/// nothing above U+10FFFF: the Unicode Standard's table 3-7), and complete when no character is left unfinished.
package struct UTF8Validator: Sendable, Hashable {
    /// Continuation bytes the character being read still needs.
    private var needed = 0
    /// The range the next continuation byte must fall in (narrower after E0, ED, F0 and F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Creates a validator at the start of a text.
    package init() {}

    /// Whether no character is left unfinished.
    package var isComplete: Bool { needed == 0 }

    /// Takes the next piece.
    /// - Returns: `false` at the first byte no valid UTF-8 text can continue with; the validator is then spent.
    package mutating func feed(_ bytes: some Collection<UInt8>) -> Bool {
        let result = bytes.withContiguousStorageIfAvailable { feed(UnsafeRawBufferPointer($0)) }
        if let result { return result }
        return Array(bytes).withUnsafeBytes { feed($0) }
    }

    private mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            if needed == 0 {
                // ASCII, eight bytes at a time.
                while index + 8 <= count,
                    bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index += 8
                }
                guard index < count else { break }
                let byte = bytes[index]
                index += 1
                switch byte {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: (needed, lower, upper) = (1, 0x80, 0xBF)
                case 0xE0: (needed, lower, upper) = (2, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: (needed, lower, upper) = (2, 0x80, 0xBF)
                case 0xED: (needed, lower, upper) = (2, 0x80, 0x9F)
                case 0xF0: (needed, lower, upper) = (3, 0x90, 0xBF)
                case 0xF1...0xF3: (needed, lower, upper) = (3, 0x80, 0xBF)
                case 0xF4: (needed, lower, upper) = (3, 0x80, 0x8F)
                default: return spend()
                }
            } else {
                let byte = bytes[index]
                index += 1
                guard byte >= lower, byte <= upper else { return spend() }
                needed -= 1
                (lower, upper) = (0x80, 0xBF)
            }
        }
        return true
    }

    private mutating func spend() -> Bool {
        // Nothing continues an invalid text: every later piece fails too.
        (needed, lower, upper) = (1, 1, 0)
        return false
    }
}
