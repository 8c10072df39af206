import Foundation
import Testing

@_spi(Transport) @testable import ServerAPIKit

@Suite("WebSocket framing: the wire format a raw transport reads and writes")
struct WebSocketFrameCodecTests {
    /// A frame as a server sends it: unmasked.
    static func serverFrame(_ opcode: UInt8, _ payload: [UInt8], final: Bool = true) -> Data {
        var bytes: [UInt8] = [(final ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            bytes.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        return Data(bytes + payload)
    }

    @Test("a client frame is masked, with the minimal length form, and unmasks to the payload")
    func encodesMasked() {
        for count in [0, 125, 126, 65535, 65536] {
            let payload = Data((0..<count).map { UInt8($0 & 0xFF) })
            let bytes = WebSocketFrameCodec.encode(WebSocketFrame(.binary, payload: payload), mask: 0x0102_0304)
            #expect(bytes[0] == 0x82)
            #expect(bytes[1] & 0x80 == 0x80, "a client's frames are masked")
            let header = count < 126 ? 2 : count <= 0xFFFF ? 4 : 10
            #expect(bytes[1] & 0x7F == (count < 126 ? UInt8(count) : count <= 0xFFFF ? 126 : 127))
            #expect(Array(bytes[header..<header + 4]) == [1, 2, 3, 4])
            let unmasked = bytes[(header + 4)...].enumerated().map { $0.element ^ UInt8($0.offset % 4 + 1) }
            #expect(Data(unmasked) == payload)
        }
    }

    @Test("frames split anywhere across reads make the same messages, in order")
    func decodesAcrossReads() throws {
        let stream =
            Self.serverFrame(0x1, Array("hello".utf8)) + Self.serverFrame(0x2, Array(repeating: 7, count: 300))
            + Self.serverFrame(0x9, [1, 2])
        for split in 1..<stream.count {
            var codec = WebSocketFrameCodec(maxFramePayload: 1 << 20)
            var frames = try codec.decode(stream.prefix(split))
            frames += try codec.decode(stream.dropFirst(split))
            var assembler = WebSocketMessageAssembler(maxMessageSize: 1 << 20)
            let events = frames.compactMap { assembler.receive($0) }
            #expect(
                events == [
                    .message(.text("hello")), .message(.binary(Data(repeating: 7, count: 300))), .ping(Data([1, 2])),
                ],
                "split at \(split)")
            #expect(codec.bufferedCount == 0)
        }
    }

    @Test("a data frame arriving over many reads is handed out as it arrives, not held until whole")
    func streamsLargeFrames() throws {
        let payload = (0..<100_000).map { UInt8($0 % 251) }
        let stream = Self.serverFrame(0x2, payload, final: false) + Self.serverFrame(0x0, [9, 9])
        var codec = WebSocketFrameCodec(maxFramePayload: 1 << 20)
        var frames: [WebSocketFrame] = []
        var start = 0
        while start < stream.count {
            let end = min(stream.count, start + 4096)
            frames += try codec.decode(stream[start..<end])
            // At most a header waits: the payload itself goes out with each read.
            #expect(codec.bufferedCount <= 14)
            start = end
        }
        #expect(frames.count > 20)
        #expect(frames.first?.opcode == .binary)
        #expect(frames.dropFirst().allSatisfy { $0.opcode == .continuation })
        #expect(frames.dropLast().allSatisfy { !$0.isFinal })
        #expect(frames.last?.isFinal == true)
        #expect(frames.reduce(Data()) { $0 + $1.payload } == Data(payload + [9, 9]))
    }

    @Test("a frame declaring more than the limit fails with 1009 before its payload arrives")
    func oversizeFrame() {
        var codec = WebSocketFrameCodec(maxFramePayload: 1000)
        // The header alone: a 64-bit length of 2^40 bytes.
        let header = Data([0x82, 127, 0, 0, 1, 0, 0, 0, 0, 0])
        #expect(throws: WebSocketFrameCodec.Failure.self) { try codec.decode(header) }
        do {
            var fresh = WebSocketFrameCodec(maxFramePayload: 1000)
            _ = try fresh.decode(header)
        } catch {
            #expect(error.code == .messageTooBig)
        }
    }

    @Test("RSV1 is carried both ways, on the first piece of a frame only: the core judges it (permessage-deflate)")
    func carriesRSV1() throws {
        let bytes = WebSocketFrameCodec.encode(WebSocketFrame(.text, payload: Data([1]), rsv1: true), mask: 0)
        #expect(bytes[0] == 0xC1)
        let plain = WebSocketFrameCodec.encode(WebSocketFrame(.text, payload: Data([1])), mask: 0)
        #expect(plain[0] == 0x81)
        var codec = WebSocketFrameCodec(maxFramePayload: 1 << 20)
        let whole = try codec.decode(Data([0xC1, 0x01, 0x61]))
        #expect(whole == [WebSocketFrame(.text, payload: Data([0x61]), rsv1: true)])
        // A frame cut by the end of a read: its first piece keeps RSV1, the continuation pieces do not.
        let frame = Self.serverFrame(0x1, Array(repeating: 0x62, count: 200))
        var marked = frame
        marked[0] |= 0x40
        let first = try codec.decode(marked.prefix(100))
        let rest = try codec.decode(marked.dropFirst(100))
        #expect(first.map(\.rsv1) == [true])
        #expect(rest.map(\.rsv1) == [false])
        #expect(rest.map(\.opcode) == [.continuation])
    }

    @Test(
        "what a client must reject: masked frames, RSV2 and RSV3, reserved opcodes, long or fragmented control frames")
    func rejects() {
        let cases: [(String, Data)] = [
            ("masked", Data([0x81, 0x81, 1, 2, 3, 4, 0x61])),
            ("RSV2", Data([0xA1, 0x00])),
            ("RSV3", Data([0x91, 0x00])),
            ("reserved opcode", Data([0x83, 0x00])),
            ("long ping", Self.serverFrame(0x9, Array(repeating: 0, count: 126))),
            ("fragmented ping", Self.serverFrame(0x9, [], final: false)),
        ]
        for (name, bytes) in cases {
            var codec = WebSocketFrameCodec(maxFramePayload: 1 << 20)
            do {
                _ = try codec.decode(bytes)
                Issue.record("\(name): accepted")
            } catch {
                #expect(error.code == .protocolError, "\(name)")
            }
        }
    }
}
