import Foundation
import ServerAPIKit
import Testing

/// A chunk that completes elements and then fails (an over-long line, data over the limit): the elements
/// come first, then the error — whatever the network's cut, nothing completed is lost (found by fuzzing).
@Suite("Streamed lines and events: what a chunk completed before a failure")
struct StreamFailureOrderTests {
    @Test("events completed earlier in the failing chunk are delivered before the error")
    func events() async throws {
        let body = ResponseBodyStream(chunks: [
            Data("data: a\n\ndata: b\n\ndata: \(String(repeating: "x", count: 64))\n".utf8)
        ])
        var iterator = ServerSentEvents(body, maximumLineLength: 32).makeAsyncIterator()
        #expect(try await iterator.next()?.data == "a")
        #expect(try await iterator.next()?.data == "b")
        let error = await #expect(throws: ServerAPIError.self) { _ = try await iterator.next() }
        #expect(error?.kind == .responseTooLarge)
        #expect(try await iterator.next() == nil)
    }

    @Test("lines completed earlier in the failing chunk are delivered before the error")
    func lines() async throws {
        let body = ResponseBodyStream(chunks: [Data("one\ntwo\n\(String(repeating: "x", count: 64))\n".utf8)])
        var iterator = ResponseLines(body, maximumLineLength: 32).makeAsyncIterator()
        #expect(try await iterator.next() == "one")
        #expect(try await iterator.next() == "two")
        let error = await #expect(throws: ServerAPIError.self) { _ = try await iterator.next() }
        #expect(error?.kind == .responseTooLarge)
        #expect(try await iterator.next() == nil)
    }

    @Test("the same events arrive before the error however the body is cut", arguments: [1, 3, 7, 100])
    func anyCut(size: Int) async throws {
        let text = Data("id: 1\ndata: a\n\ndata: b\n\ndata: \(String(repeating: "x", count: 64))\n".utf8)
        let chunks = stride(from: 0, to: text.count, by: size).map { text[$0..<min($0 + size, text.count)] }
        var received: [String] = []
        var failure: ServerAPIError?
        do {
            for try await event in ServerSentEvents(
                ResponseBodyStream(chunks: chunks.map { Data($0) }), maximumLineLength: 32)
            {
                received.append(event.data)
            }
        } catch {
            failure = error
        }
        #expect(received == ["a", "b"])
        #expect(failure?.kind == .responseTooLarge)
    }
}
