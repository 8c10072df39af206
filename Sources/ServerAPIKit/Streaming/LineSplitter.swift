#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An incremental splitter that turns a byte stream, fed in chunks split anywhere, into lines.
///
/// A line ends with `\n`, `\r\n` or a lone `\r`; the end-of-line bytes are not part of the line.
/// Only a line that spans chunks is copied, into a buffer the splitter reuses; the line and event views
/// read the others in place.
///
/// ```swift
/// var splitter = LineSplitter()
/// for try await chunk in body {
///     for line in try splitter.feedText(chunk) { print(line) }
/// }
/// if let last = splitter.finishText() { print(last) }
/// ```
///
/// - Important: After `feed` throws `responseTooLarge`, every later `feed` throws it again until
///   `finish()`: the rest of the stream can no longer be split reliably.
@usableFromInline
package struct LineSplitter: Sendable {
    /// The default longest line, in bytes: 1 MiB.
    @usableFromInline
    package static let defaultMaximumLineLength = 1 << 20

    /// The longest line accepted, in bytes, not counting the end-of-line bytes.
    package let maximumLineLength: Int

    // The bytes of the line being assembled; emptied (keeping its capacity) after each line.
    private var line: [UInt8] = []
    // A `\r` ended the last line: a `\n` that comes next belongs to it, even in the next chunk.
    // The line itself was delivered at the `\r`, so a stream that ends lines with lone `\r`
    // is not held back until more bytes arrive.
    private var skipsLineFeed = false
    // Set once a line went over the limit; the splitter then refuses to go on.
    private var overflowed = false

    /// Creates a splitter at the start of a body, with no partial line.
    ///
    /// - Parameter maximumLineLength: The longest line accepted, in bytes, not counting the
    ///   end-of-line bytes; a longer line makes `feed` throw instead of buffering without bound.
    package init(maximumLineLength: Int = LineSplitter.defaultMaximumLineLength) {
        self.maximumLineLength = max(0, maximumLineLength)
    }

    /// Splits the next chunk of the stream, calling `body` with each line it completes.
    ///
    /// A line that the chunk starts but does not end is kept until a later chunk (or `finish()`)
    /// completes it.
    ///
    /// - Parameters:
    ///   - chunk: The next bytes of the stream; any split is fine, including an empty chunk.
    ///   - body: Called with each completed line, in order, without its end-of-line bytes. The array
    ///     is the splitter's own buffer: keeping it is fine (it is copied on write), but costs a copy.
    /// - Throws: `ServerAPIError` of kind `responseTooLarge` when a line is longer than
    ///   `maximumLineLength`; any error `body` throws, after which the rest of the chunk is dropped.
    package mutating func feed(_ chunk: some Collection<UInt8>, forEachLine body: ([UInt8]) throws -> Void) throws {
        try feedBytes(chunk) { line in try body(Array(line)) }
    }

    /// Splits the next chunk, calling `body` with each completed line as a buffer that is valid only
    /// during the call: a line that lies inside the chunk is not copied at all, one that spans chunks
    /// comes from the splitter's own buffer. What the line and event views use.
    mutating func feedBytes(
        _ chunk: some Collection<UInt8>, forEachLine body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        guard !overflowed else { throw lineTooLong() }
        // `Data` and `[UInt8]` are contiguous and split in place; any other collection is copied first.
        let handled: Void? = try chunk.withContiguousStorageIfAvailable { bytes in
            try split(bytes, body)
        }
        if handled == nil {
            try Array(chunk).withUnsafeBufferPointer { bytes in try split(bytes, body) }
        }
    }

    /// Splits the next chunk of the stream and returns the lines it completes.
    ///
    /// - Parameter chunk: The next bytes of the stream; any split is fine.
    /// - Returns: The completed lines, in order, without their end-of-line bytes.
    /// - Throws: `ServerAPIError` of kind `responseTooLarge` when a line is longer than `maximumLineLength`.
    package mutating func feed(_ chunk: some Collection<UInt8>) throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        try feed(chunk) { lines.append($0) }
        return lines
    }

    /// Splits the next chunk of the stream and returns the lines it completes, decoded as UTF-8.
    ///
    /// - Parameter chunk: The next bytes of the stream; any split is fine, even inside a character.
    /// - Returns: The completed lines, in order; invalid UTF-8 is replaced with U+FFFD.
    /// - Throws: `ServerAPIError` of kind `responseTooLarge` when a line is longer than `maximumLineLength`.
    package mutating func feedText(_ chunk: some Collection<UInt8>) throws -> [String] {
        var lines: [String] = []
        try feed(chunk) { lines.append(String(decoding: $0, as: UTF8.self)) }
        return lines
    }

    /// Ends the stream and returns its last line when the stream did not end with an end-of-line.
    ///
    /// The splitter is then empty and ready for a new stream.
    ///
    /// - Returns: The unterminated last line, or `nil` when the stream ended with an end-of-line
    ///   (or was empty).
    package mutating func finish() -> [UInt8]? {
        defer { reset() }
        return line.isEmpty ? nil : line
    }

    /// Ends the stream and returns its unterminated last line, if any, decoded as UTF-8.
    ///
    /// - Returns: The last line with invalid UTF-8 replaced with U+FFFD, or `nil` when there is none.
    package mutating func finishText() -> String? {
        finish().map { String(decoding: $0, as: UTF8.self) }
    }

    private mutating func reset() {
        line = []
        skipsLineFeed = false
        overflowed = false
    }

    private mutating func split(
        _ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws {
        var start = 0
        if skipsLineFeed, !bytes.isEmpty {
            skipsLineFeed = false
            if bytes[0] == .lineFeed { start = 1 }
        }
        var index = start
        let count = bytes.count
        let base = bytes.baseAddress
        // The next LF and the next CR at or after `index` (`count` when there is none), each found with
        // `memchr` and kept until the scan passes it: every byte is looked at once, by a vectorised search.
        var nextLineFeed = -1
        var nextCarriageReturn = -1
        func find(_ byte: UInt8, from offset: Int) -> Int {
            guard let base, offset < count,
                let found = memchr(base + offset, Int32(byte), count - offset)
            else { return count }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        while index < count {
            if nextLineFeed < index { nextLineFeed = find(.lineFeed, from: index) }
            if nextCarriageReturn < index { nextCarriageReturn = find(.carriageReturn, from: index) }
            index = min(nextLineFeed, nextCarriageReturn)
            guard index < count else { break }
            let byte = bytes[index]
            let piece = UnsafeBufferPointer(rebasing: bytes[start..<index])
            if byte == .carriageReturn {
                if index + 1 < count {
                    if bytes[index + 1] == .lineFeed { index += 1 }
                } else {
                    skipsLineFeed = true
                }
            }
            start = index + 1
            index += 1
            if line.isEmpty {
                // The whole line is in this chunk: handed over in place.
                guard piece.count <= maximumLineLength else {
                    overflowed = true
                    throw lineTooLong()
                }
                try body(piece)
            } else {
                try append(piece)
                defer { line.removeAll(keepingCapacity: true) }
                try line.withUnsafeBufferPointer { try body($0) }
            }
        }
        try append(UnsafeBufferPointer(rebasing: bytes[start..<count]))
    }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        // Checked before appending, so a line over the limit never grows the buffer past it.
        guard bytes.count <= maximumLineLength - line.count else {
            overflowed = true
            line = []
            throw lineTooLong()
        }
        line.append(contentsOf: bytes)
    }

    private func lineTooLong() -> ServerAPIError {
        ServerAPIError(
            .responseTooLarge,
            "a line of the streamed body is longer than the limit of \(maximumLineLength) bytes")
    }
}

extension UInt8 {
    static let lineFeed: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
}
