import Foundation
@_spi(Transport) import ServerAPIKit
import ServerAPITestSupport
import Testing

@Suite("ResponseBodyStream: a bounded buffer between a transport and its reader")
struct ResponseBodyStreamTests {
    private func bytes(_ text: String) -> Data { Data(text.utf8) }

    @Test("chunks arrive in order, then the end")
    func order() async throws {
        let (stream, source) = ResponseBodyStream.makeStream()
        let reader = Task { try await stream.collect(upTo: 1 << 20) }
        for index in 0..<100 { source.yield(bytes("\(index),")) }
        source.finish(metrics: TransportMetrics(transport: "t", bytesReceived: 7))
        let data = try await reader.value
        #expect(String(decoding: data, as: UTF8.self) == (0..<100).map { "\($0)," }.joined())
        #expect(stream.metrics?.bytesReceived == 7)
        #expect(stream.isFinished)
    }

    @Test("a full buffer asks the transport to pause, and draining half of it resumes it")
    func backpressure() async throws {
        let resumed = EventCounter()
        let (stream, source) = ResponseBodyStream.makeStream(bufferSize: 100, onResume: { resumed.fire() })
        #expect(source.yield(Data(count: 60)) == .more)
        #expect(source.yield(Data(count: 60)) == .pause)
        // Still kept: a transport may deliver what it had already read.
        #expect(source.yield(Data(count: 10)) == .pause)
        var chunks = stream.makeAsyncIterator()
        #expect(try await chunks.next()?.count == 60)
        // 70 bytes left: above half the buffer, so no resume yet.
        #expect(resumed.count == 0)
        #expect(try await chunks.next()?.count == 60)
        #expect(resumed.count == 1)
        #expect(source.yield(Data(count: 5)) == .more)
        source.finish(metrics: nil)
        #expect(try await chunks.next()?.count == 10)
        #expect(try await chunks.next()?.count == 5)
        #expect(try await chunks.next() == nil)
        #expect(try await chunks.next() == nil)
        #expect(resumed.count == 1)
    }

    @Test("a failure after chunks is delivered after them")
    func failureAfterChunks() async throws {
        let (stream, source) = ResponseBodyStream.makeStream()
        source.yield(bytes("a"))
        source.finish(throwing: ServerAPIError(.network, "dropped"), metrics: nil)
        var chunks = stream.makeAsyncIterator()
        #expect(try await chunks.next() == bytes("a"))
        let error = await #expect(throws: ServerAPIError.self) { try await chunks.next() }
        #expect(error?.kind == .network)
        #expect(try await chunks.next() == nil)
    }

    @Test("cancel() ends a waiting reader with cancelled and tells the transport once")
    func cancelWhileWaiting() async throws {
        let terminated = EventCounter()
        let (stream, source) = ResponseBodyStream.makeStream(onTermination: { terminated.fire() })
        let reader = Task { () -> ServerAPIError? in
            do {
                _ = try await stream.collect(upTo: 100)
                return nil
            } catch { return error as? ServerAPIError }
        }
        source.yield(bytes("x"))
        stream.cancel()
        stream.cancel()
        #expect(await reader.value?.kind == .cancelled)
        #expect(terminated.count == 1)
        #expect(source.yield(bytes("y")) == .stopped)
        #expect(source.isTerminated)
    }

    @Test("leaving a for-await loop early stops the transfer")
    func leavingTheLoop() async throws {
        let terminated = EventCounter()
        let (stream, source) = ResponseBodyStream.makeStream(onTermination: { terminated.fire() })
        source.yield(bytes("first"))
        source.yield(bytes("second"))
        for try await chunk in stream {
            #expect(chunk == bytes("first"))
            break
        }
        await terminated.wait()
        #expect(source.yield(bytes("third")) == .stopped)
    }

    @Test("a stream dropped without being read stops the transfer")
    func droppedUnread() async {
        let terminated = EventCounter()
        var source: ResponseBodyStream.Source?
        do {
            let made = ResponseBodyStream.makeStream(onTermination: { terminated.fire() })
            source = made.source
            _ = made.stream
        }
        await terminated.wait()
        #expect(source?.isTerminated == true)
    }

    @Test("a reader that saw the end does not cancel anything when it leaves")
    func endThenLeave() async throws {
        let terminated = EventCounter()
        let (stream, source) = ResponseBodyStream.makeStream(onTermination: { terminated.fire() })
        source.yield(bytes("a"))
        source.finish(metrics: nil)
        for try await _ in stream {}
        #expect(terminated.count == 0)
    }

    @Test("cancelling the reading task ends the wait with cancelled")
    func taskCancellation() async throws {
        let terminated = EventCounter()
        let (stream, _) = ResponseBodyStream.makeStream(onTermination: { terminated.fire() })
        let reader = Task { () -> ServerAPIError? in
            do {
                for try await _ in stream {}
                return nil
            } catch { return error as? ServerAPIError }
        }
        reader.cancel()
        #expect(await reader.value?.kind == .cancelled)
        await terminated.wait()
    }

    @Test("the body can be read once")
    func readOnce() async throws {
        let stream = ResponseBodyStream(chunks: [Data("a".utf8)])
        var first = stream.makeAsyncIterator()
        var second = stream.makeAsyncIterator()
        let error = await #expect(throws: ServerAPIError.self) { try await second.next() }
        #expect(error?.kind == .invalidRequest)
        #expect(try await first.next() == Data("a".utf8))
    }

    @Test("collect(upTo:) refuses a body over its limit and stops the transfer")
    func collectLimit() async throws {
        let terminated = EventCounter()
        let (stream, source) = ResponseBodyStream.makeStream(onTermination: { terminated.fire() })
        source.yield(Data(count: 10))
        source.yield(Data(count: 10))
        let error = await #expect(throws: ServerAPIError.self) { try await stream.collect(upTo: 15) }
        #expect(error?.kind == .responseTooLarge)
        await terminated.wait()
    }

    @Test("producer and reader on different threads see every byte, under pressure")
    func concurrentProducer() async throws {
        let resumed = EventCounter()
        let (stream, source) = ResponseBodyStream.makeStream(bufferSize: 4096, onResume: { resumed.fire() })
        let total = 2_000
        let producer = Task.detached {
            var paused = 0
            for index in 0..<total {
                if source.yield(Data(repeating: UInt8(index % 251), count: 97)) == .pause {
                    paused += 1
                    // Wait for the reader to make room, as a transport does.
                    await resumed.wait(for: paused)
                }
            }
            source.finish(metrics: nil)
            return paused
        }
        var count = 0
        var sum = 0
        for try await chunk in stream {
            count += chunk.count
            sum += chunk.reduce(0) { $0 + Int($1) }
        }
        let pauses = await producer.value
        #expect(count == total * 97)
        #expect(sum == (0..<total).reduce(0) { $0 + ($1 % 251) * 97 })
        #expect(pauses > 0)
    }

    /// An endless body of one-byte chunks that counts what was pulled from it and fires `ended` when its iterator
    /// goes away (the task reading it has stopped).
    private struct Endless: AsyncSequence, Sendable {
        let pulled: EventCounter
        let ended: EventCounter
        final class Lifetime: Sendable {
            let ended: EventCounter
            init(_ ended: EventCounter) { self.ended = ended }
            deinit { ended.fire() }
        }
        struct AsyncIterator: AsyncIteratorProtocol {
            let pulled: EventCounter
            let lifetime: Lifetime
            mutating func next() async throws -> Data? {
                pulled.fire()
                return Data([0x61])
            }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pulled: pulled, lifetime: Lifetime(ended)) }
    }

    @Test("a stream fed from an async sequence: chunks in order, then the end's metrics and trailers")
    func streamingSequence() async throws {
        let (chunks, writer) = AsyncStream<Data>.makeStream()
        let stream = ResponseBodyStream(streaming: chunks) {
            (TransportMetrics(transport: "own", bytesReceived: 6), ["X-Checksum": "abc"])
        }
        writer.yield(bytes("one,"))
        writer.yield(Data())
        writer.yield(bytes("two"))
        writer.finish()
        #expect(String(decoding: try await stream.collect(upTo: 100), as: UTF8.self) == "one,two")
        #expect(stream.metrics?.transport == "own")
        #expect(stream.trailers["X-Checksum"] == "abc")
    }

    @Test("a stream fed from an async sequence reads no further than its buffer, and cancelling it stops the reading")
    func streamingSequenceBounded() async throws {
        let pulled = EventCounter()
        let ended = EventCounter()
        let stream = ResponseBodyStream(streaming: Endless(pulled: pulled, ended: ended), bufferSize: 8)
        var iterator = stream.makeAsyncIterator()
        for _ in 0..<20 { #expect(try await iterator.next() == Data([0x61])) }
        stream.cancel()
        await ended.wait(for: 1)
        // What the reader took, the buffer, and the chunk that filled it: never the endless rest.
        #expect(pulled.count <= 20 + 8 + 1, "pulled \(pulled.count)")
        await #expect(throws: ServerAPIError.self) { _ = try await iterator.next() }
    }

    @Test("an error the sequence throws ends the stream with it, as network when it is not a ServerAPIError")
    func streamingSequenceFails() async throws {
        struct Broken: Error {}
        let (chunks, writer) = AsyncThrowingStream<Data, any Error>.makeStream()
        let stream = ResponseBodyStream(streaming: chunks)
        writer.yield(bytes("part"))
        writer.finish(throwing: Broken())
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == bytes("part"))
        let error = await #expect(throws: ServerAPIError.self) { _ = try await iterator.next() }
        #expect(error?.kind == .network)
        #expect(error?.underlying is Broken)
    }
}
