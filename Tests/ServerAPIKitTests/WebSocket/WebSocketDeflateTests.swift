import Foundation
import ServerAPITestSupport
import Testing

@_spi(Transport) @testable import ServerAPIKit

@Suite("permessage-deflate (RFC 7692): compressing, inflating, RSV1 and the limits")
struct WebSocketDeflateTests {
    /// Text that compresses: a JSON list, as an API sends.
    static let json = Data(
        ("["
            + (0..<400).map { #"{"id":\#($0),"name":"item \#($0)","tags":["a","b"],"price":\#($0 * 3)}"# }
            .joined(separator: ",") + "]").utf8)

    static func receiver(
        _ parameters: WebSocketDeflateParameters? = WebSocketDeflateParameters(), max: Int = 1 << 24
    ) -> WebSocketDeflateReceiver {
        WebSocketDeflateReceiver(parameters: parameters, maxMessageSize: max)
    }

    /// The frame's payload after the receiver, or its failure's code.
    static func inflate(_ receiver: inout WebSocketDeflateReceiver, _ frame: WebSocketFrame) -> Data? {
        guard case .success(let frame) = receiver.receive(frame) else { return nil }
        #expect(!frame.rsv1, "an inflated frame has RSV1 cleared")
        return frame.payload
    }

    static func failure(
        _ receiver: inout WebSocketDeflateReceiver, _ frame: WebSocketFrame
    ) -> WebSocketCloseCode? {
        guard case .failure(let failure) = receiver.receive(frame) else { return nil }
        return failure.code
    }

    static func compressed(_ bytes: [UInt8], final: Bool = true, first: Bool = true) -> WebSocketFrame {
        WebSocketFrame(first ? .text : .continuation, payload: Data(bytes), isFinal: final, rsv1: first)
    }

    // MARK: - Round trips

    @Test("text and binary messages compress (RSV1 set, the tail removed) and inflate to what was sent")
    func roundTrip() throws {
        var sender = WebSocketDeflateSender(windowBits: 15, noContextTakeover: false)
        var receiver = Self.receiver()
        let messages: [WebSocketMessage] = [
            .text(String(decoding: Self.json, as: UTF8.self)), .binary(Data((0..<70_000).map { UInt8($0 % 7) })),
            .text("é"), .binary(Data()), .binary(Data((0..<5000).map { _ in UInt8.random(in: 0...255) })),
        ]
        for message in messages {
            let frame = try sender.frame(for: message)
            #expect(frame.rsv1)
            #expect(frame.isFinal)
            #expect(!frame.payload.suffix(4).elementsEqual([0, 0, 0xFF, 0xFF]), "the tail is removed")
            #expect(Self.inflate(&receiver, frame) == WebSocketFrame(message).payload)
        }
        let json = try sender.frame(for: .text(String(decoding: Self.json, as: UTF8.self)))
        #expect(json.payload.count * 5 < Self.json.count, "JSON compresses at least five times")
    }

    @Test("a compressed message in fragments inflates fragment by fragment, to the same bytes")
    func fragments() throws {
        var sender = WebSocketDeflateSender(windowBits: 15, noContextTakeover: false)
        let whole = try sender.frame(for: .binary(Self.json)).payload
        var receiver = Self.receiver()
        var inflated = Data()
        var start = whole.startIndex
        var first = true
        while start < whole.endIndex {
            let end = min(start + 97, whole.endIndex)
            let frame = WebSocketFrame(
                first ? .binary : .continuation, payload: whole[start..<end], isFinal: end == whole.endIndex,
                rsv1: first)
            inflated += try #require(Self.inflate(&receiver, frame))
            first = false
            start = end
        }
        #expect(inflated == Self.json)
    }

    @Test("a message below the minimum size, or with a window of 8 bits zlib cannot use, goes uncompressed")
    func uncompressed() throws {
        var small = WebSocketDeflateSender(windowBits: 15, noContextTakeover: false, minimumSize: 64)
        #expect(
            try small.frame(for: .text(String(repeating: "a", count: 63)))
                == WebSocketFrame(.text(String(repeating: "a", count: 63))))
        #expect(try small.frame(for: .text(String(repeating: "a", count: 64))).rsv1)
        var narrow = WebSocketDeflateSender(windowBits: 8, noContextTakeover: false)
        #expect(try !narrow.frame(for: .binary(Self.json)).rsv1)
        // An uncompressed message on a compressed connection passes through as it is.
        var receiver = Self.receiver()
        #expect(Self.inflate(&receiver, WebSocketFrame(.text, payload: Data("plain".utf8))) == Data("plain".utf8))
    }

    // MARK: - Context takeover and windows

    @Test("with context takeover a repeated message refers to the one before; without, each stands alone")
    func contextTakeover() throws {
        var keeping = WebSocketDeflateSender(windowBits: 15, noContextTakeover: false)
        var resetting = WebSocketDeflateSender(windowBits: 15, noContextTakeover: true)
        let message = WebSocketMessage.binary(Self.json)
        _ = try keeping.frame(for: message)
        _ = try resetting.frame(for: message)
        let referring = try keeping.frame(for: message)
        let alone = try resetting.frame(for: message)
        #expect(referring.payload.count * 4 < alone.payload.count, "the second message refers to the first")
        // A fresh inflater reads the stand-alone message, and not the one that refers to what it never saw.
        var fresh = Self.receiver()
        #expect(Self.inflate(&fresh, alone) == Self.json)
        var another = Self.receiver()
        #expect(Self.inflate(&another, referring) != Self.json)
    }

    @Test("the server's no-context-takeover resets the inflater after each message")
    func serverNoContextTakeover() throws {
        var server = WebSocketDeflateSender(windowBits: 15, noContextTakeover: true)
        var receiver = Self.receiver(WebSocketDeflateParameters(serverNoContextTakeover: true))
        for _ in 0..<3 {
            #expect(Self.inflate(&receiver, try server.frame(for: .binary(Self.json))) == Self.json)
        }
    }

    @Test("a window of 9 bits round-trips; a stream that refers further back than the agreed window fails (1007)")
    func windowBits() throws {
        // The second message repeats the first, 1,000 random bytes: a 512-byte window cannot refer back to it, a
        // 32 KiB one does.
        let block = Data((0..<1000).map { _ in UInt8.random(in: 0...255) })
        var small = WebSocketDeflateSender(windowBits: 9, noContextTakeover: false)
        var smallReceiver = Self.receiver(WebSocketDeflateParameters(serverMaxWindowBits: 9))
        for _ in 0..<2 { #expect(Self.inflate(&smallReceiver, try small.frame(for: .binary(block))) == block) }
        var large = WebSocketDeflateSender(windowBits: 15, noContextTakeover: false)
        var narrow = Self.receiver(WebSocketDeflateParameters(serverMaxWindowBits: 9))
        #expect(Self.inflate(&narrow, try large.frame(for: .binary(block))) == block)
        let referring = try large.frame(for: .binary(block))
        #expect(referring.payload.count < 100, "the second message refers to the first")
        #expect(Self.failure(&narrow, referring) == .invalidPayload)
    }

    // MARK: - RFC 7692 §7.2.3's examples: the tail, shared windows, stored and final blocks

    @Test("RFC 7692 §7.2.3: the examples inflate to \"Hello\", the tail appended after the last fragment")
    func rfcExamples() throws {
        let hello = Data("Hello".utf8)
        // §7.2.3.1, whole and in two fragments.
        var receiver = Self.receiver()
        #expect(Self.inflate(&receiver, Self.compressed([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])) == hello)
        var split = Self.receiver()
        let head = try #require(Self.inflate(&split, Self.compressed([0xF2, 0x48, 0xCD], final: false)))
        let tail = try #require(
            Self.inflate(&split, Self.compressed([0xC9, 0xC9, 0x07, 0x00], final: true, first: false)))
        #expect(head + tail == hello)
        // §7.2.3.2: the second message refers to the first's window.
        var shared = Self.receiver()
        #expect(Self.inflate(&shared, Self.compressed([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])) == hello)
        #expect(Self.inflate(&shared, Self.compressed([0xF2, 0x00, 0x11, 0x00, 0x00])) == hello)
        // §7.2.3.3: a stored block.
        var stored = Self.receiver()
        let storedHello: [UInt8] = [0x00, 0x05, 0x00, 0xFA, 0xFF, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x00]
        #expect(Self.inflate(&stored, Self.compressed(storedHello)) == hello)
        // §7.2.3.4: a final block (BFINAL) and its padding byte; the next message starts a new stream.
        var final = Self.receiver()
        #expect(Self.inflate(&final, Self.compressed([0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00])) == hello)
        #expect(Self.inflate(&final, Self.compressed([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])) == hello)
        // §7.2.3.5: two blocks in one message.
        var two = Self.receiver()
        let blocks: [UInt8] = [0xF2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xCA, 0xC9, 0xC9, 0x07, 0x00]
        #expect(Self.inflate(&two, Self.compressed(blocks)) == hello)
        // §7.2.3.6: an empty message.
        var empty = Self.receiver()
        #expect(Self.inflate(&empty, Self.compressed([0x00])) == Data())
        var sender = WebSocketDeflateSender(windowBits: 15, noContextTakeover: false)
        #expect(try sender.frame(for: .binary(Data())).payload == Data([0x00]))
    }

    // MARK: - Limits and bad input

    @Test("an inflate bomb fails with 1009 at the limit, whole or spread over fragments, without inflating it all")
    func bomb() throws {
        // 64 MiB of zeros compress to about 64 KiB.
        var sender = WebSocketDeflateSender(windowBits: 15, noContextTakeover: true)
        let bomb = try sender.frame(for: .binary(Data(count: 64 << 20)))
        #expect(bomb.payload.count < 100_000)
        var receiver = Self.receiver(max: 1 << 20)
        #expect(Self.failure(&receiver, bomb) == .messageTooBig)
        // In fragments of 1 KiB, each under the limit alone: the limit holds for the message, across them.
        var spread = Self.receiver(max: 1 << 20)
        var code: WebSocketCloseCode?
        var offset = bomb.payload.startIndex
        var inflated = 0
        while code == nil, offset < bomb.payload.endIndex {
            let end = min(offset + 1024, bomb.payload.endIndex)
            let frame = WebSocketFrame(
                offset == bomb.payload.startIndex ? .binary : .continuation, payload: bomb.payload[offset..<end],
                isFinal: end == bomb.payload.endIndex, rsv1: offset == bomb.payload.startIndex)
            switch spread.receive(frame) {
            case .success(let piece): inflated += piece.payload.count
            case .failure(let failure): code = failure.code
            }
            offset = end
        }
        #expect(code == .messageTooBig)
        #expect(inflated <= 1 << 20, "nothing past the limit was handed on")
        #expect(offset < bomb.payload.endIndex, "the message failed before its end")
    }

    @Test("a message exactly at the limit inflates; one byte more fails")
    func limitEdge() throws {
        var sender = WebSocketDeflateSender(windowBits: 15, noContextTakeover: true)
        var atLimit = Self.receiver(max: 100_000)
        #expect(Self.inflate(&atLimit, try sender.frame(for: .binary(Data(count: 100_000))))?.count == 100_000)
        var over = Self.receiver(max: 100_000)
        #expect(Self.failure(&over, try sender.frame(for: .binary(Data(count: 100_001)))) == .messageTooBig)
    }

    @Test("RSV1 without permessage-deflate, on a control frame or on a continuation is a protocol error (1002)")
    func rsv1Rules() {
        var plain = Self.receiver(nil)
        #expect(Self.failure(&plain, Self.compressed([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])) == .protocolError)
        var control = Self.receiver()
        #expect(Self.failure(&control, WebSocketFrame(.ping, rsv1: true)) == .protocolError)
        var continuation = Self.receiver()
        #expect(Self.inflate(&continuation, Self.compressed([0xF2, 0x48], final: false)) != nil)
        #expect(
            Self.failure(&continuation, WebSocketFrame(.continuation, payload: Data([0xCD]), rsv1: true))
                == .protocolError)
        // Without permessage-deflate, frames without RSV1 pass as they are.
        var passing = Self.receiver(nil)
        #expect(Self.inflate(&passing, WebSocketFrame(.text, payload: Data([0xF2]))) == Data([0xF2]))
    }

    @Test("compressed data that is not DEFLATE fails with 1007")
    func invalidData() {
        var receiver = Self.receiver()
        // BTYPE 11 is reserved.
        #expect(Self.failure(&receiver, Self.compressed([0xFF, 0xFF, 0xFF])) == .invalidPayload)
    }

    // MARK: - Negotiation

    @Test("the offer: client_max_window_bits always, the rest as configured")
    func offer() {
        #expect(WebSocketDeflateNegotiation.offer(.default) == "permessage-deflate; client_max_window_bits")
        let all = WebSocket.Compression(
            clientMaxWindowBits: 10, serverMaxWindowBits: 12, clientNoContextTakeover: true,
            serverNoContextTakeover: true)
        #expect(
            WebSocketDeflateNegotiation.offer(all)
                == "permessage-deflate; client_no_context_takeover; server_no_context_takeover; "
                + "client_max_window_bits=10; server_max_window_bits=12")
    }

    static func answer(_ value: String...) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for value in value { headers.add(name: "Sec-WebSocket-Extensions", value: value) }
        return headers
    }

    @Test("answers a client accepts: what each agrees to")
    func agreed() throws {
        typealias Parameters = WebSocketDeflateParameters
        let cases: [(String, WebSocket.Compression, Parameters?)] = [
            ("", .default, nil),
            ("permessage-deflate", .default, Parameters()),
            ("PerMessage-Deflate ;  server_no_context_takeover", .default, Parameters(serverNoContextTakeover: true)),
            ("permessage-deflate; client_no_context_takeover", .default, Parameters(clientNoContextTakeover: true)),
            ("permessage-deflate; client_max_window_bits=9", .default, Parameters(clientMaxWindowBits: 9)),
            ("permessage-deflate; client_max_window_bits=\"12\"", .default, Parameters(clientMaxWindowBits: 12)),
            (
                "permessage-deflate; client_max_window_bits=15", .init(clientMaxWindowBits: 10),
                Parameters(clientMaxWindowBits: 10)
            ),
            ("permessage-deflate; server_max_window_bits=8", .default, Parameters(serverMaxWindowBits: 8)),
            (
                "permessage-deflate; server_max_window_bits=10", .init(serverMaxWindowBits: 12),
                Parameters(serverMaxWindowBits: 10)
            ),
            (
                "permessage-deflate; server_no_context_takeover", .init(serverNoContextTakeover: true),
                Parameters(serverNoContextTakeover: true)
            ),
            ("other-extension, permessage-deflate", .default, Parameters()),
        ]
        for (value, offered, expected) in cases {
            let headers = value.isEmpty ? HTTPHeaders() : Self.answer(value)
            #expect(try WebSocketDeflateNegotiation.agreed(headers, offered: offered) == expected, "\(value)")
        }
    }

    @Test("answers a client fails the handshake for (RFC 7692 §7.1), each with its reason")
    func refused() {
        typealias Failure = WebSocketDeflateNegotiation.Failure
        let cases: [(HTTPHeaders, WebSocket.Compression, Failure)] = [
            (Self.answer("permessage-deflate, permessage-deflate"), .default, .repeatedExtension),
            (Self.answer("permessage-deflate", "permessage-deflate"), .default, .repeatedExtension),
            (Self.answer("permessage-deflate; mystery"), .default, .unknownParameter("mystery")),
            (
                Self.answer("permessage-deflate; server_no_context_takeover; server_no_context_takeover"), .default,
                .repeatedParameter("server_no_context_takeover")
            ),
            (
                Self.answer("permessage-deflate; server_max_window_bits=16"), .default,
                .invalidValue(parameter: "server_max_window_bits", value: "16")
            ),
            (
                Self.answer("permessage-deflate; server_max_window_bits=7"), .default,
                .invalidValue(parameter: "server_max_window_bits", value: "7")
            ),
            (
                Self.answer("permessage-deflate; client_max_window_bits=09"), .default,
                .invalidValue(parameter: "client_max_window_bits", value: "09")
            ),
            (
                Self.answer("permessage-deflate; client_max_window_bits"), .default,
                .invalidValue(parameter: "client_max_window_bits", value: nil)
            ),
            (
                Self.answer("permessage-deflate; client_no_context_takeover=1"), .default,
                .invalidValue(parameter: "client_no_context_takeover", value: "1")
            ),
            (
                Self.answer("permessage-deflate; server_max_window_bits=12"), .init(serverMaxWindowBits: 10),
                .serverWindowNotHonoured(asked: 10, answered: 12)
            ),
            (
                Self.answer("permessage-deflate"), .init(serverMaxWindowBits: 10),
                .serverWindowNotHonoured(asked: 10, answered: nil)
            ),
            (
                Self.answer("permessage-deflate"), .init(serverNoContextTakeover: true),
                .serverContextTakeoverNotHonoured
            ),
            (Self.answer("permessage-deflate; =1"), .default, .malformed("permessage-deflate; =1")),
            (Self.answer("permessage-deflate; x=\"open"), .default, .malformed("permessage-deflate; x=\"open")),
            (Self.answer("permessage-deflate x"), .default, .malformed("permessage-deflate x")),
        ]
        for (headers, offered, expected) in cases {
            #expect(throws: expected, "\(headers)") {
                try WebSocketDeflateNegotiation.agreed(headers, offered: offered)
            }
        }
    }

    @Test("a configuration out of range is an invalid request, named")
    func validation() async {
        let bad: [(WebSocket.Compression, String)] = [
            (.init(clientMaxWindowBits: 8), "clientMaxWindowBits is 8"),
            (.init(clientMaxWindowBits: 16), "clientMaxWindowBits is 16"),
            (.init(serverMaxWindowBits: 7), "serverMaxWindowBits is 7"), (.init(minimumSize: -1), "minimumSize is -1"),
            (.init(level: 0), "level is 0"), (.init(level: 10), "level is 10"),
        ]
        for (compression, named) in bad {
            let error = await expectError { try WebSocketDeflateNegotiation.validate(compression) }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.message.contains(named) == true, "\(error?.message ?? "")")
        }
        #expect(throws: Never.self) { try WebSocketDeflateNegotiation.validate(.default) }
    }

    @Test("an answer without permessage-deflate keeps its other extensions when compression is declined")
    func declined() {
        let headers = Self.answer("x-other; a=1, permessage-deflate; server_no_context_takeover")
        #expect(
            WebSocketDeflateNegotiation.declined(headers).values(for: "Sec-WebSocket-Extensions") == [
                #"x-other; a="1""#
            ])
        #expect(
            WebSocketDeflateNegotiation.declined(Self.answer("permessage-deflate"))["Sec-WebSocket-Extensions"] == nil)
    }
}
