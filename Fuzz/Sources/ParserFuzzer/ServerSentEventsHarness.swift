import Foundation

@testable import ServerAPIKit

/// Server-sent events (and the line splitter under them): the same bytes split anywhere give the same
/// events, the same last event id and the same retry; the same lines, for the line splitter.
enum ServerSentEventsHarness {
    struct Outcome: Equatable {
        var events: [ServerSentEvent] = []
        var lastEventID = ""
        var retry: Duration?
        var failed = false
    }

    static func run(_ data: Data) {
        let bytes = [UInt8](data)
        let whole = parse([bytes[...]])
        // Two cut points from the input itself, then every byte on its own.
        let first = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        let second = bytes.isEmpty ? 0 : first + (Int(bytes[bytes.count - 1]) % (bytes.count - first + 1))
        let cut = parse([bytes[..<first], bytes[first..<second], bytes[second...]])
        require(cut == whole, "cut at \(first) and \(second): \(cut), whole: \(whole)", input: data)
        if bytes.count <= 512 {
            let single = parse(bytes.indices.map { bytes[$0...$0] })
            require(single == whole, "byte by byte: \(single), whole: \(whole)", input: data)
        }
        let lines = splitLines([bytes[...]])
        let cutLines = splitLines([bytes[..<first], bytes[first..<second], bytes[second...]])
        require(lines == cutLines, "the line splitter depends on the chunks", input: data)
    }

    static func parse(_ chunks: [ArraySlice<UInt8>]) -> Outcome {
        // Small limits, so that the fuzzer reaches them.
        var parser = ServerSentEventParser(maximumLineLength: 300, maximumDataSize: 600)
        var outcome = Outcome()
        do {
            // The callback form: events dispatched before an error in the same chunk count (the array
            // form drops them, so its result depends on where the chunks were cut).
            for chunk in chunks { try parser.feed(chunk) { outcome.events.append($0) } }
        } catch {
            outcome.failed = true
        }
        parser.finish()
        outcome.lastEventID = parser.lastEventID
        outcome.retry = parser.retry
        return outcome
    }

    static func splitLines(_ chunks: [ArraySlice<UInt8>]) -> [[UInt8]]? {
        var splitter = LineSplitter(maximumLineLength: 300)
        var lines: [[UInt8]] = []
        do {
            for chunk in chunks { lines += try splitter.feed(chunk) }
        } catch {
            return nil
        }
        if let last = splitter.finish() { lines.append(last) }
        return lines
    }
}
