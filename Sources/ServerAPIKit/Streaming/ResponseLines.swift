#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A streamed body read as lines of UTF-8 text: ends of line `\n`, `\r\n` and `\r`, split wherever the
/// chunks fall (see `LineSplitter`). NDJSON feeds, log tails and line protocols read this way.
///
/// ```swift
/// let response = try await manager.stream(ServerAPI(url: feedURL))
/// for try await line in response.lines { print(line) }
/// ```
/// An unterminated last line is delivered too. Invalid UTF-8 is replaced with U+FFFD.
public struct ResponseLines: AsyncSequence, Sendable {
    public typealias Element = String
    public typealias Failure = ServerAPIError

    /// The body the lines are read from.
    public let body: ResponseBodyStream
    /// The longest line accepted, in bytes; a longer one ends the sequence with `responseTooLarge`.
    public let maximumLineLength: Int

    /// Reads a body as lines.
    public init(_ body: ResponseBodyStream, maximumLineLength: Int = LineSplitter.defaultMaximumLineLength) {
        self.body = body
        self.maximumLineLength = maximumLineLength
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(chunks: body.makeAsyncIterator(), splitter: LineSplitter(maximumLineLength: maximumLineLength))
    }

    /// Reads lines in order.
    public struct Iterator: AsyncIteratorProtocol {
        var chunks: ResponseBodyStream.Iterator
        var splitter: LineSplitter
        @usableFromInline var pending = ChunkElements<String>()
        var ended = false

        init(chunks: ResponseBodyStream.Iterator, splitter: LineSplitter) {
            self.chunks = chunks
            self.splitter = splitter
        }

        @inlinable
        public mutating func next() async throws(ServerAPIError) -> String? {
            try await next(isolation: nil)
        }

        // Inlinable, so that the caller's loop takes a line the last chunk completed without an async call;
        // only the first line of each chunk goes through `nextChunk`.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ServerAPIError) -> String? {
            if let line = pending.next() { return line }
            return try await nextChunk(isolation: actor)
        }

        /// Reads chunks until one completes a line, or the body ends.
        @usableFromInline
        mutating func nextChunk(isolation actor: isolated (any Actor)?) async throws(ServerAPIError) -> String? {
            while true {
                if let line = pending.next() { return line }
                if let failure = pending.takeFailure() { throw failure }
                guard !ended else { return nil }
                guard let chunk = try await chunks.next(isolation: actor) else {
                    ended = true
                    return splitter.finishText()
                }
                do {
                    try pending.refill { lines in
                        try splitter.feedBytes(chunk) { lines.append(String(decoding: $0, as: UTF8.self)) }
                    }
                } catch {
                    // The lines the chunk completed before the failure come first, then the failure.
                    ended = true
                    pending.fail(ServerAPIError.wrap(error))
                }
            }
        }
    }
}

/// A streamed `text/event-stream` body read as server-sent events, parsed as the WHATWG HTML
/// specification says (see `ServerSentEventParser`).
///
/// ```swift
/// let response = try await manager.stream(ServerAPI(url: completionsURL).method(.post).body(.json(prompt)))
/// for try await event in response.events where event.type == "message" {
///     print(event.data)
/// }
/// ```
/// An event the body ends in the middle of is dropped. To reconnect after a dropped connection with
/// `Last-Event-ID`, use `ServerAPIManager.eventSource(_:configuration:)`.
public struct ServerSentEvents: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = ServerAPIError

    /// The body the events are read from.
    public let body: ResponseBodyStream
    let makeParser: @Sendable () -> ServerSentEventParser

    /// Reads a body as events.
    /// - Parameters:
    ///   - body: The body.
    ///   - lastEventID: The last event id of an earlier connection, reported until the server sends one.
    ///   - maximumLineLength: The longest line accepted, in bytes.
    ///   - maximumDataSize: The largest data an event may carry, in bytes.
    public init(
        _ body: ResponseBodyStream, lastEventID: String = "",
        maximumLineLength: Int = LineSplitter.defaultMaximumLineLength,
        maximumDataSize: Int = ServerSentEventParser.defaultMaximumDataSize
    ) {
        self.body = body
        self.makeParser = {
            ServerSentEventParser(
                lastEventID: lastEventID, maximumLineLength: maximumLineLength, maximumDataSize: maximumDataSize)
        }
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(chunks: body.makeAsyncIterator(), parser: makeParser())
    }

    /// Reads events in order.
    public struct Iterator: AsyncIteratorProtocol {
        var chunks: ResponseBodyStream.Iterator
        /// The parser, with the last event id and the server's `retry` so far.
        package private(set) var parser: ServerSentEventParser
        @usableFromInline var pending = ChunkElements<ServerSentEvent>()
        var ended = false

        init(chunks: ResponseBodyStream.Iterator, parser: ServerSentEventParser) {
            self.chunks = chunks
            self.parser = parser
        }

        @inlinable
        public mutating func next() async throws(ServerAPIError) -> ServerSentEvent? {
            try await next(isolation: nil)
        }

        // Inlinable, so that the caller's loop takes an event the last chunk completed without an async
        // call: each chunk is parsed in one synchronous pass, and only its first event goes through
        // `nextChunk`.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ServerAPIError)
            -> ServerSentEvent?
        {
            if let event = pending.next() { return event }
            return try await nextChunk(isolation: actor)
        }

        /// Reads chunks until one completes an event, or the body ends.
        @usableFromInline
        mutating func nextChunk(isolation actor: isolated (any Actor)?) async throws(ServerAPIError)
            -> ServerSentEvent?
        {
            while true {
                if let event = pending.next() { return event }
                if let failure = pending.takeFailure() { throw failure }
                guard !ended else { return nil }
                let chunk: Data?
                do {
                    chunk = try await chunks.next(isolation: actor)
                } catch {
                    ended = true
                    parser.finish()
                    throw error
                }
                guard let chunk else {
                    ended = true
                    parser.finish()
                    return nil
                }
                do {
                    try pending.refill { events in try parser.feed(chunk, into: &events) }
                } catch {
                    // The events the chunk completed before the failure come first, then the failure.
                    ended = true
                    pending.fail(ServerAPIError.wrap(error))
                }
            }
        }
    }
}

/// The elements one chunk produced, handed out one per `next()`, and the failure that ended the chunk, handed
/// out after them: what the line and event iterators share. Nothing a chunk completed is lost to an error
/// later in the same chunk, however the network cut the body.
///
/// `next()` moves each element out of its slot (`Optional.take()`): no copy and no reference counting per
/// element, and it is inlined into the reader's loop. The slots are kept and overwritten by the next
/// chunk's elements, so a chunk costs no array teardown either.
@usableFromInline
struct ChunkElements<Element> {
    // Slots below `count` hold the current chunk's elements until `next()` takes them; slots at or
    // above `count` are empty, as are all slots once the chunk has been handed out.
    @usableFromInline var slots: [Element?] = []
    @usableFromInline var count = 0
    @usableFromInline var index = 0
    private var failure: ServerAPIError?

    @usableFromInline init() {}

    /// Records the failure that ended the current chunk, to be thrown once its elements are handed out.
    mutating func fail(_ error: ServerAPIError) { failure = error }

    /// The recorded failure, once; `nil` after that.
    mutating func takeFailure() -> ServerAPIError? {
        defer { failure = nil }
        return failure
    }

    /// The next element of the current chunk, if one is left.
    @inlinable
    mutating func next() -> Element? {
        guard index < count else { return nil }
        defer { index += 1 }
        return slots[index].take()
    }

    /// Adds an element of the chunk being filled.
    mutating func append(_ element: consuming Element) {
        if count < slots.count {
            slots[count] = element
        } else {
            slots.append(element)
        }
        count += 1
    }

    /// Starts over with the elements `fill` appends; those it appended before throwing are handed out too.
    /// - Precondition: The current chunk's elements have all been handed out.
    mutating func refill(_ fill: (inout ChunkElements) throws -> Void) rethrows {
        count = 0
        index = 0
        try fill(&self)
    }
}

/// The sequence `StreamedResponse.decodedLines(_:decoder:)` returns.
struct DecodedLines<Model: Decodable & Sendable>: AsyncSequence, Sendable {
    typealias Element = Model
    typealias Failure = ServerAPIError

    let lines: ResponseLines
    let makeDecoder: @Sendable () -> JSONDecoder

    func makeAsyncIterator() -> Iterator { Iterator(lines: lines.makeAsyncIterator(), decoder: makeDecoder()) }

    /// Decodes lines in order.
    struct Iterator: AsyncIteratorProtocol {
        var lines: ResponseLines.Iterator
        let decoder: JSONDecoder
        var number = 0

        mutating func next() async throws(ServerAPIError) -> Model? {
            try await next(isolation: nil)
        }

        mutating func next(isolation actor: isolated (any Actor)?) async throws(ServerAPIError) -> Model? {
            while let line = try await lines.next(isolation: actor) {
                number += 1
                guard !line.allSatisfy(\.isWhitespace) else { continue }
                do {
                    return try decoder.decode(Model.self, from: Data(line.utf8))
                } catch {
                    throw ServerAPIError(
                        .decoding,
                        "line \(number) of the streamed body is not a \(Model.self): \(ServerAPIError.excerpt(Data(line.utf8)) ?? "")",
                        underlying: error)
                }
            }
            return nil
        }
    }
}

extension StreamedResponse {
    /// The body as JSON lines (NDJSON, JSON Lines, httpbin's `/stream/N`), each decoded as a `Model`.
    ///
    /// ```swift
    /// for try await entry in response.decodedLines(LogEntry.self) { show(entry) }
    /// ```
    /// Blank lines are skipped. A line that does not decode ends the sequence with a `decoding` error that
    /// quotes the start of the line.
    /// - Parameters:
    ///   - type: The model of each line.
    ///   - decoder: Makes the decoder to use; a plain `JSONDecoder` by default.
    public func decodedLines<Model: Decodable & Sendable>(
        _ type: Model.Type, decoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) -> some AsyncSequence<Model, ServerAPIError> & Sendable {
        DecodedLines(lines: lines, makeDecoder: decoder)
    }
}

extension ServerSentEvent {
    /// The event's data decoded as JSON: what an LLM completion or a price feed sends in each event.
    /// - Parameters:
    ///   - type: The model.
    ///   - decoder: The decoder; a plain `JSONDecoder` by default.
    /// - Returns: The model.
    /// - Throws: `ServerAPIError` of kind `decoding`, quoting the start of the data.
    public func decode<Model: Decodable>(_ type: Model.Type, decoder: JSONDecoder = JSONDecoder())
        throws(ServerAPIError)
        -> Model
    {
        do {
            return try decoder.decode(Model.self, from: Data(data.utf8))
        } catch {
            throw ServerAPIError(
                .decoding,
                "the event's data is not a \(Model.self): \(ServerAPIError.excerpt(Data(data.utf8)) ?? "empty")",
                underlying: error)
        }
    }
}
