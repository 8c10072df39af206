/// An incremental parser that turns a `text/event-stream` body, fed in chunks split anywhere, into events.
///
/// It follows the WHATWG HTML specification's "Parsing an event stream" and "Interpreting an event
/// stream": UTF-8 with one leading byte order mark stripped and invalid bytes replaced with U+FFFD;
/// lines ending in CRLF, LF or CR; a blank line dispatches the event; lines starting with `:` are
/// comments; `event`, `data`, `id` and `retry` fields, all others ignored; an event without data is
/// not dispatched; an event the stream ends in the middle of is discarded.
///
/// ```swift
/// var parser = ServerSentEventParser(lastEventID: savedID)
/// for try await chunk in body {
///     for event in try parser.feed(chunk) where event.type == "price" {
///         show(event.data)
///     }
/// }
/// parser.finish()
/// // To reconnect: wait `parser.retry ?? .seconds(3)`, send `Last-Event-ID: \(parser.lastEventID)`
/// // when it is not empty, and feed the new body to the same parser.
/// ```
///
/// - Important: After `feed` throws `responseTooLarge`, every later `feed` throws it again until
///   `finish()`: the stream can no longer be parsed reliably.
@usableFromInline package struct ServerSentEventParser: Sendable {
    /// The default largest event data, in bytes: 4 MiB.
    @usableFromInline package static let defaultMaximumDataSize = 4 << 20

    /// The largest data an event may carry, in UTF-8 bytes, counting the `"\n"` between `data:` lines.
    package let maximumDataSize: Int
    /// The longest line accepted, in bytes, not counting the end-of-line bytes.
    package var maximumLineLength: Int { splitter.maximumLineLength }

    /// The id to send as `Last-Event-ID` when reconnecting: the last event id as of the last blank line,
    /// as a browser's `EventSource` keeps it; empty when there is none.
    ///
    /// It persists across events and across `finish()`, so one parser can read each reconnection's body.
    package private(set) var lastEventID: String
    /// The reconnection time from the last valid `retry:` field, or `nil` when the server sent none.
    ///
    /// It takes effect as soon as its line is read, even in an event that is never dispatched, and
    /// persists across `finish()`.
    package private(set) var retry: Duration?

    private var splitter: LineSplitter
    // Per stream: the byte order mark may only open the first line, once.
    private var atStreamStart = true
    // The specification's data buffer. Most events carry one `data:` line: its value is decoded straight
    // from the line's bytes into `firstData`, the string the event is dispatched with, and nothing else is
    // copied. From a second line on, the data is kept as bytes in `dataBuffer` (the first line's, then
    // "\n" and each next line's) and decoded once at dispatch. Either way the result is the same as
    // decoding the joined buffer: every separator is ASCII and no UTF-8 sequence can contain one, and the
    // first line's decoded bytes are valid UTF-8 that decodes to itself.
    private var dataLines = 0
    private var firstData = ""
    private var dataBuffer: [UInt8] = []
    // The buffer's size as the specification counts it: each data line's bytes and its "\n".
    private var dataSize = 0
    private var eventTypeBuffer = ""
    private var lastEventIDBuffer: String
    private var eventRetry: Duration?
    private var failure: ServerAPIError?

    /// Creates a parser at the start of an event stream.
    ///
    /// - Parameters:
    ///   - lastEventID: The last event id of an earlier connection, reported on events until the
    ///     server sends an `id:`; empty for a first connection.
    ///   - maximumLineLength: The longest line accepted, in bytes, not counting the end-of-line bytes.
    ///   - maximumDataSize: The largest data an event may carry, in UTF-8 bytes.
    package init(
        lastEventID: String = "", maximumLineLength: Int = LineSplitter.defaultMaximumLineLength,
        maximumDataSize: Int = ServerSentEventParser.defaultMaximumDataSize
    ) {
        self.lastEventID = lastEventID
        self.lastEventIDBuffer = lastEventID
        self.splitter = LineSplitter(maximumLineLength: maximumLineLength)
        self.maximumDataSize = max(0, maximumDataSize)
    }

    /// Parses the next chunk of the body, calling `body` with each event it completes.
    ///
    /// - Parameters:
    ///   - chunk: The next bytes of the body; any split is fine, even inside a character or a CRLF.
    ///   - body: Called with each dispatched event, in order.
    /// - Throws: `ServerAPIError` of kind `responseTooLarge` when a line is longer than `maximumLineLength`
    ///   or an event's data larger than `maximumDataSize`; any error `body` throws, after which the rest
    ///   of the chunk is dropped.
    package mutating func feed(
        _ chunk: some Collection<UInt8>, forEachEvent body: (ServerSentEvent) throws -> Void
    ) throws {
        if let failure { throw failure }
        // The splitter is moved out while it runs, because its line callback mutates the rest of `self`.
        var splitter = self.splitter
        self.splitter = LineSplitter(maximumLineLength: 0)
        defer { self.splitter = splitter }
        try splitter.feedBytes(chunk) { line in
            if let event = try process(line) { try body(event) }
        }
    }

    /// Parses the next chunk of the body into the events view's buffer: each event is moved into its
    /// slot, where the public form's callback would take a copy.
    mutating func feed(_ chunk: some Collection<UInt8>, into events: inout ChunkElements<ServerSentEvent>) throws {
        if let failure { throw failure }
        var splitter = self.splitter
        self.splitter = LineSplitter(maximumLineLength: 0)
        defer { self.splitter = splitter }
        try splitter.feedBytes(chunk) { line in
            if let event = try process(line) { events.append(event) }
        }
    }

    /// Parses the next chunk of the body and returns the events it completes.
    ///
    /// - Parameter chunk: The next bytes of the body; any split is fine.
    /// - Returns: The dispatched events, in order.
    /// - Throws: `ServerAPIError` of kind `responseTooLarge` when a line is longer than `maximumLineLength`
    ///   or an event's data larger than `maximumDataSize`. The events the chunk completed before that are not
    ///   returned: use `feed(_:forEachEvent:)` to have every one of them.
    package mutating func feed(_ chunk: some Collection<UInt8>) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        try feed(chunk) { events.append($0) }
        return events
    }

    /// Ends the body: an event it ended in the middle of is discarded, as the specification says.
    ///
    /// `lastEventID` and `retry` are kept, so the parser can read the next connection's body.
    package mutating func finish() {
        // An unterminated last line is not a line, so even its `retry:` is ignored.
        _ = splitter.finish()
        atStreamStart = true
        dataLines = 0
        firstData = ""
        dataBuffer = []
        dataSize = 0
        eventTypeBuffer = ""
        eventRetry = nil
        failure = nil
        // The specification starts each stream with an empty last-event-id buffer, but browsers carry
        // the id over a reconnection, so an event without `id:` on the new stream keeps reporting it.
        lastEventIDBuffer = lastEventID
    }

    private mutating func process(_ bytes: UnsafeBufferPointer<UInt8>) throws -> ServerSentEvent? {
        var line = bytes[...]
        if atStreamStart {
            atStreamStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
        }
        guard let first = line.first else { return dispatch() }
        if first == .colon { return nil }
        var name = line
        var value = line[line.endIndex...]
        if let colon = line.firstIndex(of: .colon) {
            name = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == .space { value = value.dropFirst() }
        }
        switch Field(name) {
        case .data:
            // The limit is on the data as dispatched: the buffer minus the trailing "\n".
            guard value.count <= maximumDataSize - dataSize else {
                let error = ServerAPIError(
                    .responseTooLarge,
                    "an event's data is larger than the limit of \(maximumDataSize) bytes")
                failure = error
                throw error
            }
            dataSize += value.count + 1
            let bytes = UnsafeBufferPointer(rebasing: value)
            switch dataLines {
            case 0:
                firstData = String(decoding: bytes, as: UTF8.self)
            case 1:
                dataBuffer.removeAll(keepingCapacity: true)
                dataBuffer.append(contentsOf: firstData.utf8)
                firstData = ""
                fallthrough
            default:
                dataBuffer.append(.lineFeed)
                dataBuffer.append(contentsOf: bytes)
            }
            dataLines += 1
        case .event:
            eventTypeBuffer = String(decoding: UnsafeBufferPointer(rebasing: value), as: UTF8.self)
        case .id:
            if !value.contains(0) {
                lastEventIDBuffer = String(decoding: UnsafeBufferPointer(rebasing: value), as: UTF8.self)
            }
        case .retry:
            if let milliseconds = Self.milliseconds(value) {
                retry = .milliseconds(milliseconds)
                eventRetry = retry
            }
        case .other:
            break
        }
        return nil
    }

    /// The fields the specification knows, recognised by their bytes.
    private enum Field {
        case data, event, id, retry, other

        init(_ name: Slice<UnsafeBufferPointer<UInt8>>) {
            let base = name.base.baseAddress! + name.startIndex
            switch name.count {
            case 2 where base[0] == 0x69 && base[1] == 0x64: self = .id  // "id"
            case 4 where base[0] == 0x64 && base[1] == 0x61 && base[2] == 0x74 && base[3] == 0x61: self = .data
            case 5 where base[0] == 0x65 && base[1] == 0x76 && base[2] == 0x65 && base[3] == 0x6E && base[4] == 0x74:
                self = .event
            case 5 where base[0] == 0x72 && base[1] == 0x65 && base[2] == 0x74 && base[3] == 0x72 && base[4] == 0x79:
                self = .retry
            default: self = .other
            }
        }
    }

    private mutating func dispatch() -> ServerSentEvent? {
        lastEventID = lastEventIDBuffer
        let lines = dataLines
        let type = eventTypeBuffer.isEmpty ? "message" : eventTypeBuffer
        let retry = eventRetry
        dataLines = 0
        dataSize = 0
        if !eventTypeBuffer.isEmpty { eventTypeBuffer = "" }
        eventRetry = nil
        switch lines {
        case 0:
            return nil
        case 1:
            // Moved out, not copied: the event takes the string the data line was decoded into.
            var data = ""
            swap(&data, &firstData)
            return ServerSentEvent(type: type, data: data, id: lastEventID, retry: retry)
        default:
            return ServerSentEvent(
                type: type, data: String(decoding: dataBuffer, as: UTF8.self), id: lastEventID, retry: retry)
        }
    }

    // Only ASCII digits count; an empty value is not a number, and one that overflows `Int64` is
    // treated like any other invalid value: ignored.
    private static func milliseconds(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> Int64? {
        guard !digits.isEmpty else { return nil }
        var result: Int64 = 0
        for byte in digits {
            guard (0x30...0x39).contains(byte) else { return nil }
            let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflow1, !overflow2 else { return nil }
            result = sum
        }
        return result
    }
}

extension UInt8 {
    fileprivate static let colon: UInt8 = 0x3A
    fileprivate static let space: UInt8 = 0x20
}
