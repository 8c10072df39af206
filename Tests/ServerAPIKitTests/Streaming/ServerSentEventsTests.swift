import Foundation
import ServerAPIKit
import Testing

/// The events and lines views of a streamed body (`response.events`, `response.lines`) parse each chunk in
/// one pass and hand the results out one per `next()`: whatever the chunks, they must give what the
/// parser gives for the whole body at once.
@Suite("Streamed events and lines: the same result however the body is cut")
struct ServerSentEventsTests {
    /// A stream with every rule the parser keeps: a byte order mark, LF, CRLF and CR line ends, comments, a
    /// field without a colon, values with and without the one leading space, an event type, multi-line data
    /// (between single-line events, so the data buffer is reused both ways), empty data, an id with NUL
    /// (ignored), an empty id (reset), retry (valid and not), unknown fields, an event without data (not
    /// dispatched), invalid UTF-8, and a last event without its blank line (not dispatched).
    static let rich: [UInt8] =
        [0xEF, 0xBB, 0xBF] + Array("id: 1\ndata: first\n\n".utf8)
        + Array(": a comment\r\nevent: update\r\ndata:  two\r\ndata:lines\r\n\r\n".utf8)
        + Array("data: single\rid\r\r".utf8)
        + Array("data\ndata:\n\n".utf8)
        + Array("id: 4\u{0}5\nretry: 1500\ndata: a\ndata: b\ndata: c\n\n".utf8)
        + Array("retry: 12x\nfoo: bar\nid: 6\nevent: ping\n\n".utf8)
        + Array("data: é".utf8) + [0xFF, 0xE2, 0x82] + Array("\n\ndata: after\n\n".utf8)
        + Array("id: 7\ndata: lost\n".utf8)

    static let expected = [
        ServerSentEvent(data: "first", id: "1"),
        ServerSentEvent(type: "update", data: " two\nlines", id: "1"),
        ServerSentEvent(data: "single", id: ""),
        ServerSentEvent(data: "\n", id: ""),
        ServerSentEvent(data: "a\nb\nc", id: "", retry: .milliseconds(1500)),
        ServerSentEvent(data: "é\u{FFFD}\u{FFFD}", id: "6"),
        ServerSentEvent(data: "after", id: "6"),
    ]

    /// Reads `chunks` through the events view; returns the events, then the iterator's last id and retry.
    static func events(_ chunks: [[UInt8]]) async throws -> ([ServerSentEvent], String, Duration?) {
        var iterator = ServerSentEvents(ResponseBodyStream(chunks: chunks.map { Data($0) })).makeAsyncIterator()
        var events: [ServerSentEvent] = []
        while let event = try await iterator.next() { events.append(event) }
        return (events, iterator.parser.lastEventID, iterator.parser.retry)
    }

    @Test("The parser, fed the whole stream at once, gives the expected events")
    func wholeStream() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.feed(Self.rich) == Self.expected)
        parser.finish()
        #expect(parser.lastEventID == "6")
        #expect(parser.retry == .milliseconds(1500))
    }

    @Test("Cut in two at every byte, or into single bytes, the events view gives the unsplit parse")
    func everyCut() async throws {
        let whole = try await Self.events([Self.rich])
        #expect(whole.0 == Self.expected)
        #expect(whole.1 == "6" && whole.2 == .milliseconds(1500))
        for offset in 0...Self.rich.count {
            let split = try await Self.events([Array(Self.rich[..<offset]), Array(Self.rich[offset...])])
            #expect(split.0 == whole.0, "cut at byte \(offset)")
            #expect(split.1 == whole.1 && split.2 == whole.2, "cut at byte \(offset)")
        }
        let bytes = try await Self.events(Self.rich.map { [$0] })
        #expect(bytes.0 == whole.0 && bytes.1 == whole.1 && bytes.2 == whole.2, "one byte at a time")
    }

    @Test("Cut in three at every pair of bytes, the events view gives the unsplit parse")
    func everyTwoCuts() async throws {
        let input = Array("id: 1\r\ndata: a\r\ndata: b\r\n\r\nid: 2\rdata: c\r\rdata: d\n\n".utf8)
        var parser = ServerSentEventParser()
        let whole = try parser.feed(input)
        #expect(whole.map(\.data) == ["a\nb", "c", "d"])
        for first in 0...input.count {
            for second in first...input.count {
                let chunks = [Array(input[..<first]), Array(input[first..<second]), Array(input[second...])]
                #expect(try await Self.events(chunks).0 == whole, "cut at bytes \(first) and \(second)")
            }
        }
    }

    @Test("Many events in one chunk come out in order, each once, and the next chunk's after them")
    func manyEventsPerChunk() async throws {
        let first = (1...500).map { "id: \($0)\ndata: event \($0)\n\n" }.joined()
        let second = (501...700).map { "id: \($0)\ndata: event \($0)\n\n" }.joined()
        let (events, lastID, _) = try await Self.events([Array(first.utf8), Array(second.utf8)])
        #expect(events.map(\.data) == (1...700).map { "event \($0)" })
        #expect(events.map(\.id) == (1...700).map { String($0) })
        #expect(lastID == "700")
    }

    @Test("Cut in two at every byte, the lines view gives the lines of the whole body")
    func linesEveryCut() async throws {
        let input = Array("one\r\ntwo\rthree\n\nfour é".utf8) + [0xFF] + Array("\r\n\rlast".utf8)
        var splitter = LineSplitter()
        var whole = try splitter.feedText(input)
        if let last = splitter.finishText() { whole.append(last) }
        #expect(whole == ["one", "two", "three", "", "four é\u{FFFD}", "", "last"])
        for offset in 0...input.count {
            let chunks = [Array(input[..<offset]), Array(input[offset...])].map { Data($0) }
            var lines: [String] = []
            for try await line in ResponseLines(ResponseBodyStream(chunks: chunks)) { lines.append(line) }
            #expect(lines == whole, "cut at byte \(offset)")
        }
    }
}
