import Foundation
import ServerAPIKit
import Testing

@Suite struct LineSplitterTests {
    /// The lines of one stream fed as the given chunks, with `finish()`'s unterminated line last.
    static func lines(_ chunks: [[UInt8]], maximumLineLength: Int = 100) throws -> [String] {
        var splitter = LineSplitter(maximumLineLength: maximumLineLength)
        var lines: [String] = []
        for chunk in chunks { lines += try splitter.feedText(chunk) }
        if let last = splitter.finishText() { lines.append("<unterminated>" + last) }
        return lines
    }

    /// Splits the stream in one chunk, in two at every byte offset and one byte at a time, and
    /// expects the same lines each way.
    static func linesOfEverySplit(_ input: [UInt8], maximumLineLength: Int = 100) throws -> [String] {
        let whole = try lines([input], maximumLineLength: maximumLineLength)
        for offset in 0...input.count {
            let split = try lines(
                [Array(input[..<offset]), Array(input[offset...])], maximumLineLength: maximumLineLength)
            #expect(split == whole, "split at byte \(offset)")
        }
        #expect(try lines(input.map { [$0] }, maximumLineLength: maximumLineLength) == whole, "one byte at a time")
        return whole
    }

    @Test(
        "LF, CRLF and a lone CR each end a line, however the stream is split",
        arguments: [
            ("a\nbc\n", ["a", "bc"]),
            ("a\r\nbc\r\n", ["a", "bc"]),
            ("a\rbc\r", ["a", "bc"]),
            ("a\r\n\r\nb\n\rc", ["a", "", "b", "", "<unterminated>c"]),
            ("\n\n", ["", ""]),
            ("\r\r\n\n\r", ["", "", "", ""]),
            ("\n\r", ["", ""]),
            ("no end", ["<unterminated>no end"]),
            ("", []),
        ])
    func lineEndings(input: String, expected: [String]) throws {
        #expect(try Self.linesOfEverySplit(Array(input.utf8)) == expected)
    }

    @Test("A CR ending a chunk delivers its line at once, and an LF starting the next chunk adds no empty line")
    func carriageReturnAtChunkEnd() throws {
        var splitter = LineSplitter()
        #expect(try splitter.feedText(Array("a\r".utf8)) == ["a"])
        #expect(try splitter.feedText([UInt8]()) == [])
        #expect(try splitter.feedText(Array("\nb\r".utf8)) == ["b"])
        #expect(try splitter.feedText(Array("\r".utf8)) == [""])
        #expect(splitter.finish() == nil)
    }

    @Test("finish() returns the unterminated last line once and leaves the splitter ready for a new stream")
    func finishAndReuse() throws {
        var splitter = LineSplitter()
        #expect(try splitter.feed(Array("one\ntw".utf8)) == [Array("one".utf8)])
        #expect(splitter.finish() == Array("tw".utf8))
        #expect(splitter.finish() == nil)
        // A CR pending from the old stream must not swallow the new stream's leading LF.
        _ = try splitter.feed(Array("x\r".utf8))
        _ = splitter.finish()
        #expect(try splitter.feedText(Array("\ny\n".utf8)) == ["", "y"])
    }

    @Test("Lines come out as bytes, and as text with invalid UTF-8 replaced by U+FFFD")
    func bytesAndText() throws {
        let input: [UInt8] = [0x61, 0xFF, 0x62, 0x0A, 0xE2, 0x82, 0x0A, 0xC3, 0xA9, 0x0A]
        var splitter = LineSplitter()
        #expect(try splitter.feed(input) == [[0x61, 0xFF, 0x62], [0xE2, 0x82], [0xC3, 0xA9]])
        #expect(try Self.linesOfEverySplit(input) == ["a\u{FFFD}b", "\u{FFFD}", "é"])
    }

    @Test("Data and collections without contiguous storage split the same as arrays")
    func otherCollections() throws {
        let input = Array("a\r\nb\rc\nd".utf8)
        var fromArray = LineSplitter()
        var fromData = LineSplitter()
        var fromLazy = LineSplitter()
        let expected = try fromArray.feed(input)
        #expect(try fromData.feed(Data(input)) == expected)
        #expect(try fromLazy.feed(input.lazy.map { $0 }) == expected)
        #expect(fromData.finish() == Array("d".utf8))
        #expect(fromLazy.finish() == Array("d".utf8))
    }

    @Test("A line of exactly the maximum length passes; the end-of-line bytes do not count")
    func lineAtTheLimit() throws {
        let input = Array("abcd\r\nefgh\rijkl\nmnop".utf8)
        #expect(
            try Self.linesOfEverySplit(input, maximumLineLength: 4) == ["abcd", "efgh", "ijkl", "<unterminated>mnop"])
    }

    @Test(
        "A line over the maximum length fails with responseTooLarge, in one chunk or across several",
        arguments: [["abcde\n"], ["abc", "de"], ["ab\nabcde"], ["a", "b", "c", "d", "e"]])
    func lineOverTheLimit(chunks: [String]) {
        var splitter = LineSplitter(maximumLineLength: 4)
        var thrown: ServerAPIError?
        do {
            for chunk in chunks { _ = try splitter.feed(Array(chunk.utf8)) }
        } catch {
            thrown = error as? ServerAPIError
        }
        #expect(thrown?.kind == .responseTooLarge)
        #expect(thrown?.message.contains("line") == true)
        #expect(thrown?.message.contains("4 bytes") == true)
    }

    @Test("After a line over the limit the splitter keeps failing until finish()")
    func overflowIsSticky() throws {
        var splitter = LineSplitter(maximumLineLength: 2)
        let long = #expect(throws: ServerAPIError.self) { try splitter.feed(Array("abc".utf8)) }
        #expect(long?.kind == .responseTooLarge)
        // The tail of the long line must not come out as a line of its own.
        let tail = #expect(throws: ServerAPIError.self) { try splitter.feed(Array("\nok\n".utf8)) }
        #expect(tail?.kind == .responseTooLarge)
        #expect(splitter.finish() == nil)
        #expect(try splitter.feedText(Array("ok\n".utf8)) == ["ok"])
    }

    @Test("An error thrown by the line callback reaches the caller")
    func callbackError() {
        struct Stop: Error {}
        var splitter = LineSplitter()
        var seen: [[UInt8]] = []
        #expect(throws: Stop.self) {
            try splitter.feed(Array("a\nb\nc\n".utf8)) { line in
                seen.append(line)
                if seen.count == 2 { throw Stop() }
            }
        }
        #expect(seen == [[0x61], [0x62]])
    }
}
