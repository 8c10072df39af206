import Foundation
import ServerAPIKit
import Testing

@Suite struct ServerSentEventParserTests {
    /// Everything a client sees from one stream: the events, then the parser's state after `finish()`.
    struct Outcome: Equatable {
        var events: [ServerSentEvent]
        var lastEventID: String
        var retry: Duration?
    }

    static func outcome(_ chunks: [[UInt8]], parser: ServerSentEventParser = .init()) throws -> Outcome {
        var parser = parser
        var events: [ServerSentEvent] = []
        for chunk in chunks { events += try parser.feed(chunk) }
        parser.finish()
        return Outcome(events: events, lastEventID: parser.lastEventID, retry: parser.retry)
    }

    /// Parses the stream in one chunk, in two at every byte offset and one byte at a time, and
    /// expects the same outcome each way.
    static func parse(_ input: [UInt8], parser: ServerSentEventParser = .init()) throws -> Outcome {
        let whole = try outcome([input], parser: parser)
        for offset in 0...input.count {
            let split = try outcome([Array(input[..<offset]), Array(input[offset...])], parser: parser)
            #expect(split == whole, "split at byte \(offset)")
        }
        #expect(try outcome(input.map { [$0] }, parser: parser) == whole, "one byte at a time")
        return whole
    }

    static func parse(_ input: String, parser: ServerSentEventParser = .init()) throws -> Outcome {
        try parse(Array(input.utf8), parser: parser)
    }

    static func data(_ input: String) throws -> [String] {
        try parse(input).events.map(\.data)
    }

    // MARK: The specification's examples

    static let stock = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"

    @Test("The stock example: ids set and reset, one leading space removed, a final event dispatched by its blank line")
    func stockExample() throws {
        let outcome = try Self.parse(Self.stock + "\n")
        #expect(
            outcome.events == [
                ServerSentEvent(data: "first event", id: "1"),
                ServerSentEvent(data: "second event", id: ""),
                ServerSentEvent(data: " third event", id: ""),
            ])
        #expect(outcome.lastEventID == "")
    }

    @Test("The stock example without its final blank line: the last event is discarded")
    func stockExampleUnterminated() throws {
        let outcome = try Self.parse(Self.stock)
        #expect(outcome.events.map(\.data) == ["first event", "second event"])
        #expect(outcome.lastEventID == "")
    }

    @Test("Several data lines are joined with line feeds")
    func multiLineData() throws {
        #expect(try Self.data("data: YHOO\ndata: +2\ndata: 10\n\n") == ["YHOO\n+2\n10"])
    }

    @Test("`data` and `data:` lines give empty data; two of them a single line feed; an unfinished block nothing")
    func emptyDataLines() throws {
        #expect(try Self.data("data\n\ndata\ndata\n\ndata:") == ["", "\n"])
        #expect(try Self.data("data:test\n\ndata: test\n\n") == ["test", "test"])
    }

    @Test("The event field names the event; the type resets to message after each dispatch")
    func eventTypes() throws {
        let stream = "event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\ndata: 113411\n\n"
        let events = try Self.parse(stream).events
        #expect(events.map(\.type) == ["add", "remove", "message"])
        #expect(events.map(\.data) == ["73857293", "2153", "113411"])
    }

    // MARK: Lines

    @Test("CRLF, LF and CR line endings, alone or mixed, give the same events", arguments: ["\n", "\r\n", "\r"])
    func lineEndings(ending: String) throws {
        let stream = Self.stock.replacingOccurrences(of: "\n", with: ending) + ending
        #expect(try Self.parse(stream) == Self.parse(Self.stock + "\n"))
        let mixed = "data: a\r\ndata: b\rdata: c\n\r\n" + "event: x\rdata: d\n\r"
        #expect(
            try Self.parse(mixed).events == [ServerSentEvent(data: "a\nb\nc"), ServerSentEvent(type: "x", data: "d")])
    }

    @Test("A block ending in lone CRs is dispatched without waiting for the next chunk")
    func carriageReturnDispatchesPromptly() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.feed(Array("data: now\r\r".utf8)) == [ServerSentEvent(data: "now")])
        // The LF that may follow a CR is not another blank line.
        #expect(try parser.feed(Array("\ndata: later\r\n\r\n".utf8)) == [ServerSentEvent(data: "later")])
    }

    @Test("Comments are ignored, including a keep-alive block of only comments")
    func comments() throws {
        let outcome = try Self.parse(": hello\ndata: a\n:\n:data: b\n\n: keep-alive\n\n")
        #expect(outcome.events == [ServerSentEvent(data: "a")])
    }

    @Test(
        "Field lines: one space removed, the name before the first colon, case-sensitive, unknown names ignored",
        arguments: [
            ("data:  two\n\n", [" two"]),
            ("data:a:b\n\n", ["a:b"]),
            ("data :x\n\n", []),
            ("DATA: x\n\n", []),
            ("foo: bar\ndata: x\nbaz\n\n", ["x"]),
            ("data:\tx\n\n", ["\tx"]),
        ])
    func fields(stream: String, expected: [String]) throws {
        #expect(try Self.data(stream) == expected)
    }

    @Test("A leading byte order mark is stripped once; a second one, or one later, is kept")
    func byteOrderMark() throws {
        #expect(try Self.data("\u{FEFF}data: a\n\n") == ["a"])
        #expect(try Self.data("\u{FEFF}\u{FEFF}data: a\n\ndata: b\n\n") == ["b"])
        #expect(try Self.data("data: a\n\n\u{FEFF}data: b\n\n") == ["a"])
        #expect(try Self.data("data: \u{FEFF}x\n\n") == ["\u{FEFF}x"])
        #expect(try Self.data("\u{FEFF}\n\u{FEFF}data: a\n\n") == [])
    }

    @Test("Each new stream after finish() may start with its own byte order mark")
    func byteOrderMarkPerStream() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.feed(Array("\u{FEFF}data: a\n\n".utf8)).map(\.data) == ["a"])
        parser.finish()
        #expect(try parser.feed(Array("\u{FEFF}data: b\n\n".utf8)).map(\.data) == ["b"])
    }

    @Test("Invalid UTF-8 is replaced with U+FFFD in data, event types and ids")
    func invalidUTF8() throws {
        let stream: [UInt8] =
            Array("event: e".utf8) + [0xFF] + Array("\nid: ".utf8) + [0xC0, 0xAF] + Array("\ndata: a".utf8)
            + [0xE2, 0x82] + Array("\ndata: ".utf8) + [0xF0, 0x9F, 0x98, 0x80] + Array("\n\n".utf8)
        let outcome = try Self.parse(stream)
        #expect(outcome.events == [ServerSentEvent(type: "e\u{FFFD}", data: "a\u{FFFD}\n😀", id: "\u{FFFD}\u{FFFD}")])
    }

    // MARK: Ids

    @Test("The last event id persists across events until an id field changes or empties it")
    func idPersists() throws {
        let outcome = try Self.parse("id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\ndata: d\n\n")
        #expect(outcome.events.map(\.id) == ["1", "1", "", "2"])
        #expect(outcome.lastEventID == "2")
    }

    @Test("An id containing NUL is ignored")
    func idWithNull() throws {
        let outcome = try Self.parse("id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n")
        #expect(outcome.events.map(\.id) == ["1", "1"])
        #expect(outcome.lastEventID == "1")
    }

    @Test("A block without data dispatches nothing but still sets the last event id and clears the type")
    func blockWithoutData() throws {
        let outcome = try Self.parse("id: 7\nevent: ping\n\ndata: x\n\n")
        #expect(outcome.events == [ServerSentEvent(type: "message", data: "x", id: "7")])
        #expect(try Self.parse("id: 7\n\n") == Outcome(events: [], lastEventID: "7"))
    }

    @Test("An id in a block the stream ends in the middle of is not taken")
    func idOfDiscardedBlock() throws {
        #expect(try Self.parse("id: 1\ndata: a\n\nid: 2\ndata: b\n").lastEventID == "1")
        #expect(try Self.parse("id: 3\n").lastEventID == "")
    }

    @Test("A reconnecting parser reports the earlier connection's id until the server sends a new one")
    func idAcrossConnections() throws {
        let seeded = try Self.parse("data: a\n\nid: 9\ndata: b\n\n", parser: ServerSentEventParser(lastEventID: "8"))
        #expect(seeded.events.map(\.id) == ["8", "9"])
        var parser = ServerSentEventParser()
        _ = try parser.feed(Array("id: 5\ndata: a\n\nid: 6\ndata: lost".utf8))
        parser.finish()
        #expect(parser.lastEventID == "5")
        #expect(try parser.feed(Array("data: b\n\n".utf8)) == [ServerSentEvent(data: "b", id: "5")])
    }

    // MARK: Retry

    @Test("A valid retry sets the reconnection time at once and is reported on its own event only")
    func retry() throws {
        let outcome = try Self.parse("retry: 1500\ndata: a\n\ndata: b\n\nretry: 20\n\n")
        #expect(outcome.events.map(\.retry) == [.milliseconds(1500), nil])
        #expect(outcome.retry == .milliseconds(20))
        // The line's end, not a blank line, makes a retry count; an unterminated last line never does.
        #expect(try Self.parse("retry: 0\n").retry == .zero)
        #expect(try Self.parse("retry: 0").retry == nil)
    }

    @Test(
        "A retry that is not only ASCII digits, or overflows, is ignored and the earlier value kept",
        arguments: [
            "retry: 1.5", "retry: -1", "retry: +1", "retry:  10", "retry: 10 ", "retry: 10a", "retry:", "retry",
            "retry: ١٠", "retry: 9223372036854775808", "retry: 99999999999999999999999999999999",
        ])
    func invalidRetry(line: String) throws {
        let outcome = try Self.parse("retry: 3000\ndata: a\n\n" + line + "\ndata: b\n\n")
        #expect(outcome.retry == .milliseconds(3000))
        #expect(outcome.events.map(\.retry) == [.milliseconds(3000), nil])
    }

    @Test("The largest retry that fits in Int64 is accepted")
    func largestRetry() throws {
        #expect(try Self.parse("retry: 9223372036854775807\n\n").retry == .milliseconds(Int64.max))
    }

    // MARK: End of stream

    @Test(
        "An event without its final blank line is discarded, even when the next stream starts with one",
        arguments: ["data: a\n\ndata: b\n", "data: a\n\ndata: b", "data: a\n\ndata: b\r", "data: a\r\n\r\ndata: b\r\n"])
    func missingFinalBlankLine(stream: String) throws {
        #expect(try Self.data(stream) == ["a"])
        var parser = ServerSentEventParser()
        _ = try parser.feed(Array(stream.utf8))
        parser.finish()
        #expect(try parser.feed(Array("\n".utf8)) == [])
    }

    // MARK: Limits

    @Test("Event data up to the limit passes, counting the line feeds between data lines")
    func dataAtTheLimit() throws {
        let parser = ServerSentEventParser(maximumDataSize: 5)
        #expect(
            try Self.parse("data: ab\ndata: cd\n\ndata: abcde\n\n", parser: parser).events.map(\.data) == [
                "ab\ncd", "abcde",
            ])
    }

    @Test(
        "Event data over the limit fails with responseTooLarge, and keeps failing until finish()",
        arguments: ["data: abcdef\n", "data: ab\ndata: cde\n", "data: abc\ndata\ndata\ndata\n"])
    func dataOverTheLimit(stream: String) throws {
        var parser = ServerSentEventParser(maximumDataSize: 5)
        #expect(parser.maximumDataSize == 5)
        let error = #expect(throws: ServerAPIError.self) { try parser.feed(Array(stream.utf8)) }
        #expect(error?.kind == .responseTooLarge)
        #expect(error?.message.contains("5 bytes") == true)
        let again = #expect(throws: ServerAPIError.self) { try parser.feed(Array("\n".utf8)) }
        #expect(again?.kind == .responseTooLarge)
        parser.finish()
        #expect(try parser.feed(Array("data: ok\n\n".utf8)).map(\.data) == ["ok"])
    }

    @Test("A line over the line limit fails with responseTooLarge instead of buffering")
    func lineOverTheLimit() throws {
        var parser = ServerSentEventParser(maximumLineLength: 10)
        #expect(parser.maximumLineLength == 10)
        #expect(try parser.feed(Array("data: 1234\n\n".utf8)).map(\.data) == ["1234"])
        _ = try parser.feed(Array("data: ".utf8))
        let error = #expect(throws: ServerAPIError.self) { try parser.feed(Array("12345".utf8)) }
        #expect(error?.kind == .responseTooLarge)
        #expect(error?.message.contains("line") == true)
    }

    // MARK: API

    @Test("The callback form delivers the same events and passes the callback's error on")
    func callbackForm() throws {
        struct Stop: Error {}
        var parser = ServerSentEventParser()
        var seen: [String] = []
        #expect(throws: Stop.self) {
            try parser.feed(Data("data: a\n\ndata: b\n\ndata: c\n\n".utf8)) { event in
                seen.append(event.data)
                if seen.count == 2 { throw Stop() }
            }
        }
        #expect(seen == ["a", "b"])
    }

    @Test("A new event defaults to a message with empty data, no id and no retry")
    func eventDefaults() {
        let event = ServerSentEvent()
        #expect(event.type == "message")
        #expect(event.data.isEmpty && event.id.isEmpty && event.retry == nil)
    }
}
