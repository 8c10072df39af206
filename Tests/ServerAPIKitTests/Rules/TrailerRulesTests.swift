import Foundation
import ServerAPIKit
import Testing

@Suite("Trailer fields and chunked coding")
struct TrailerRulesTests {
    /// Decodes `wire` fed in pieces of `step` bytes.
    private func decode(_ wire: String, step: Int) throws -> (data: String, decoder: ChunkedDecoder, taken: Int) {
        var decoder = ChunkedDecoder()
        var data = Data()
        var taken = 0
        let bytes = Array(wire.utf8)
        var start = 0
        while start < bytes.count {
            let piece = Array(bytes[start..<min(start + step, bytes.count)])
            taken += try piece.withUnsafeBytes { buffer in
                try decoder.decode(buffer) { data.append(contentsOf: $0) }
            }
            start += step
        }
        return (String(decoding: data, as: UTF8.self), decoder, taken)
    }

    @Test("chunks, extensions and trailers decode the same whatever the pieces", arguments: [1, 2, 3, 7, 1000])
    func chunked(step: Int) throws {
        let wire = "5;name=value\r\nHello\r\n6\r\n World\r\n0\r\nX-Checksum: abc123\r\nX-Two:  2 \r\n\r\nEXTRA"
        let (data, decoder, taken) = try decode(wire, step: step)
        #expect(data == "Hello World")
        #expect(decoder.isEnded)
        #expect(decoder.trailers == ["X-Checksum": "abc123", "X-Two": "2"])
        // The bytes after the body are not taken.
        #expect(taken == wire.utf8.count - "EXTRA".utf8.count)
    }

    @Test("an empty chunked body ends at once, without trailers")
    func empty() throws {
        let (data, decoder, _) = try decode("0\r\n\r\n", step: 1)
        #expect(data.isEmpty)
        #expect(decoder.isEnded)
        #expect(decoder.trailers.isEmpty)
    }

    @Test("malformed chunked coding is a network error", arguments: ["zz\r\n", "\r\n", "3\r\nabcd\r\n", "3\rx"])
    func malformed(wire: String) {
        let error = #expect(throws: ServerAPIError.self) { try decode(wire, step: 1) }
        #expect(error?.kind == .network)
    }

    @Test("a trailer section past the limits is responseTooLarge")
    func tooManyTrailers() throws {
        // The documented limits (the Streaming article: "past 100 fields or 64 KiB"), as literals.
        #expect(TrailerRule.maximumCount == 100)
        #expect(TrailerRule.maximumSize == 64 << 10)
        let hundred = (0..<100).map { "X-F\($0): v\r\n" }.joined()
        #expect(try decode("0\r\n" + hundred + "\r\n", step: 64).decoder.trailers.count == 100)
        let fields = (0..<101).map { "X-F\($0): v\r\n" }.joined()
        let error = #expect(throws: ServerAPIError.self) { try decode("0\r\n" + fields + "\r\n", step: 64) }
        #expect(error?.kind == .responseTooLarge)
    }

    @Test("received trailers lose the fields that cannot be trailers")
    func received() throws {
        let fields: HTTPHeaders = [
            "X-Checksum": "abc", "Content-Length": "5", "set-cookie": "a=b", "Server-Timing": "db;dur=3",
        ]
        #expect(try TrailerRule.received(fields) == ["X-Checksum": "abc", "Server-Timing": "db;dur=3"])
    }

    @Test("trailers to send must be valid fields that may be trailers")
    func outgoing() throws {
        #expect(try TrailerRule.outgoing(["X-Checksum": "abc"]) == ["X-Checksum": "abc"])
        for fields: HTTPHeaders in [["Transfer-Encoding": "chunked"], ["Authorization": "x"], ["Bad Name": "x"]] {
            let error = #expect(throws: ServerAPIError.self) { try TrailerRule.outgoing(fields) }
            #expect(error?.kind == .invalidRequest)
        }
    }
}
