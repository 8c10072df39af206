#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request body read from an `AsyncSequence` of bytes as the transport sends it: a body made while it
/// is sent (a generated export, a pipe, a proxied upload), never held whole in memory. A call sends one
/// as `.body(.stream(_:contentType:))` (`RequestBody.stream`).
///
/// ```swift
/// let body = RequestBodyStream(chunks, length: nil)   // unknown length: sent chunked
/// try await manager.send(ServerAPI(url: uploadURL).method(.post).body(.stream(body)))
/// ```
/// With a `length`, the request carries `Content-Length` and a sequence that ends early or runs long
/// fails the call with `invalidRequest`; without one, HTTP/1.1 sends it with chunked transfer encoding.
///
/// Trailer fields, known only once the body has been produced (a checksum, a signature), follow it when
/// a `trailers` closure is given: it is called once, after the sequence's last chunk.
///
/// ```swift
/// let digest = Digest()   // updated by the sequence as it yields chunks
/// let body = RequestBodyStream(chunks) { ["X-Checksum": digest.hex] }
/// ```
/// A body with trailers is sent with chunked transfer encoding, so it takes no `length`; fields that
/// control framing, routing, authentication or caching may not be trailers (one fails the call with
/// `invalidRequest`).
/// The transport pulls the next chunk only when it has sent the previous one, so a slow network slows
/// the sequence's producer down.
///
/// - Important: The sequence is read once. A call whose streamed body began to be sent is not retried,
///   and a redirect that must send the body again (307, 308) fails. `URLSessionTransport` on Linux
///   cannot stream a request body and refuses one (see its documentation).
public final class RequestBodyStream: Sendable, Hashable {
    /// The body's length in bytes, when known.
    public let length: Int64?
    private let base: any AsyncSequence<Data, any Error> & Sendable
    private let started = Locked(false)
    private let makeTrailers: (@Sendable () -> HTTPHeaders)?

    /// Creates a body from a sequence of `Data` chunks.
    /// - Parameters:
    ///   - chunks: The body's bytes, in order; empty chunks are skipped.
    ///   - length: The total length, when known: sent as `Content-Length`.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int64? = nil)
    where Chunks.Element == Data {
        self.length = length
        self.base = ErasedChunks(base: chunks)
        self.makeTrailers = nil
    }

    /// Creates a body from a sequence of `Data` chunks, followed by trailer fields.
    /// - Parameters:
    ///   - chunks: The body's bytes, in order; empty chunks are skipped.
    ///   - trailers: Called once after the last chunk was read: the trailer fields to send after the body.
    public init<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, trailers: @escaping @Sendable () -> HTTPHeaders
    ) where Chunks.Element == Data {
        self.length = nil
        self.base = ErasedChunks(base: chunks)
        self.makeTrailers = trailers
    }

    /// Whether the body is followed by trailer fields.
    @_spi(Transport) public var hasTrailers: Bool { makeTrailers != nil }

    /// The trailer fields to send after the body, once its last chunk was read.
    /// - Returns: The fields; empty for a body without trailers.
    /// - Throws: `invalidRequest` when a field is not valid or cannot be a trailer (`TrailerRule`).
    @_spi(Transport) public func trailers() throws(ServerAPIError) -> HTTPHeaders {
        guard let makeTrailers else { return [:] }
        return try TrailerRule.outgoing(makeTrailers())
    }

    /// Creates a body from a sequence of byte arrays.
    /// - Parameters:
    ///   - chunks: The body's bytes, in order.
    ///   - length: The total length, when known: sent as `Content-Length`.
    public convenience init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int64? = nil)
    where Chunks.Element == [UInt8] {
        self.init(ErasedChunks(base: chunks, transform: { Data($0) }), length: length)
    }

    /// Whether a transport has begun to read the body: it cannot be sent again.
    @_spi(Transport) public var hasStarted: Bool { started.withLock { $0 } }

    /// Takes the body's chunks, for the one transfer that sends them (the `Transport` SPI's, as are `trailers()`,
    /// `hasTrailers` and `hasStarted`).
    /// - Returns: The chunks, in order, with empty ones skipped.
    /// - Throws: `invalidRequest` when the body was taken before: it can be sent only once.
    @_spi(Transport) public func makeChunks() throws(ServerAPIError) -> Chunks {
        let first = started.withLock { started -> Bool in
            defer { started = true }
            return !started
        }
        guard first else {
            throw ServerAPIError(
                .invalidRequest, "a streamed request body can be sent only once; this one was sent already")
        }
        return Chunks(base: base, length: length)
    }

    public static func == (lhs: RequestBodyStream, rhs: RequestBodyStream) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// A body's chunks, read once by the transport that sends it.
    ///
    /// It checks the declared length: a sequence that ends short of it or goes past it throws
    /// `invalidRequest`, so that a wrong `Content-Length` is never sent silently.
    ///
    /// In the `Transport` SPI (`@_spi(Transport) import ServerAPIKit`): for writing a transport, not for its callers.
    @_spi(Transport) public struct Chunks: AsyncSequence, Sendable {
        public typealias Element = Data
        public typealias Failure = ServerAPIError
        let base: any AsyncSequence<Data, any Error> & Sendable
        let length: Int64?

        public func makeAsyncIterator() -> Iterator {
            Iterator(base: base.makeAsyncIterator(), length: length)
        }

        /// Reads chunks in order.
        public struct Iterator: AsyncIteratorProtocol {
            var base: any AsyncIteratorProtocol<Data, any Error>
            let length: Int64?
            /// Bytes read so far.
            public private(set) var count: Int64 = 0

            public mutating func next() async throws(ServerAPIError) -> Data? {
                try await next(isolation: nil)
            }

            public mutating func next(isolation actor: isolated (any Actor)?) async throws(ServerAPIError) -> Data? {
                while true {
                    let chunk: Data?
                    do {
                        chunk = try await base.next(isolation: actor)
                    } catch {
                        let failure = ServerAPIError.wrap(error)
                        if failure.kind == .cancelled { throw failure }
                        throw ServerAPIError(
                            .invalidRequest, "the streamed request body failed: \(error)", underlying: error)
                    }
                    guard let chunk else {
                        if let length, count != length {
                            throw ServerAPIError(
                                .invalidRequest,
                                "the streamed request body ended after \(count) of its declared \(length) bytes")
                        }
                        return nil
                    }
                    guard !chunk.isEmpty else { continue }
                    count += Int64(chunk.count)
                    if let length, count > length {
                        throw ServerAPIError(
                            .invalidRequest, "the streamed request body is longer than its declared \(length) bytes")
                    }
                    return chunk
                }
            }
        }
    }
}

/// Any sequence of chunks, as one `AsyncSequence<Data, any Error>`.
private struct ErasedChunks<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable {
    typealias Element = Data
    typealias Failure = any Error
    let base: Base
    let transform: @Sendable (Base.Element) -> Data

    init(base: Base, transform: @escaping @Sendable (Base.Element) -> Data) {
        self.base = base
        self.transform = transform
    }

    init(base: Base) where Base.Element == Data {
        self.init(base: base, transform: { $0 })
    }

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), transform: transform) }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let transform: @Sendable (Base.Element) -> Data
        mutating func next() async throws -> Data? {
            guard let element = try await base.next() else { return nil }
            return transform(element)
        }
    }
}
