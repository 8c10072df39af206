import Foundation
import Testing

@_spi(Transport) @testable import ServerAPIKit

@Suite("WebSocket messages: reassembly, UTF-8, limits and close frames (RFC 6455)")
struct WebSocketMessageAssemblerTests {
    @Test("fragments are reassembled, with control frames between them")
    func reassembles() {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 100)
        #expect(assembler.receive(WebSocketFrame(.text, payload: Data("Hel".utf8), isFinal: false)) == nil)
        #expect(assembler.receive(WebSocketFrame(.ping, payload: Data([1]))) == .ping(Data([1])))
        #expect(assembler.receive(WebSocketFrame(.continuation, payload: Data("lo".utf8), isFinal: false)) == nil)
        #expect(
            assembler.receive(WebSocketFrame(.continuation, payload: Data(" 👋".utf8))) == .message(.text("Hello 👋")))
        #expect(!assembler.isAssembling)
    }

    @Test("a text message split inside a UTF-8 sequence is still valid once whole")
    func splitCodePoint() {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 100)
        let bytes = Array("é".utf8)
        #expect(assembler.receive(WebSocketFrame(.text, payload: Data(bytes.prefix(1)), isFinal: false)) == nil)
        #expect(
            assembler.receive(WebSocketFrame(.continuation, payload: Data(bytes.dropFirst()))) == .message(.text("é")))
    }

    @Test("text that is not UTF-8 fails with 1007")
    func invalidUTF8() {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 100)
        guard case .fail(let failure)? = assembler.receive(WebSocketFrame(.text, payload: Data([0xCE, 0xBA, 0xFF])))
        else {
            Issue.record("accepted")
            return
        }
        #expect(failure.code == .invalidPayload)
    }

    @Test("text that stops being UTF-8 in a fragment fails at that fragment, before the message ends")
    func invalidFragmentFailsFast() {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 100)
        // Autobahn 6.4.1: a valid fragment, then one with the start of a code point above U+10FFFF (F4 90).
        #expect(assembler.receive(WebSocketFrame(.text, payload: Data("κόσμε".utf8), isFinal: false)) == nil)
        guard
            case .fail(let failure)? = assembler.receive(
                WebSocketFrame(.continuation, payload: Data([0xF4, 0x90]), isFinal: false))
        else {
            Issue.record("the invalid fragment was accepted")
            return
        }
        #expect(failure.code == .invalidPayload)
        #expect(!assembler.isAssembling)
        // The first fragment alone already fails when it cannot begin UTF-8 text.
        var fresh = WebSocketMessageAssembler(maxMessageSize: 100)
        let event = fresh.receive(WebSocketFrame(.text, payload: Data([0x61, 0xC0]), isFinal: false))
        #expect(
            event
                == .fail(
                    .init(code: .invalidPayload, message: "the server sent a text message that is not valid UTF-8")))
    }

    @Test("a fragmented text message that ends inside a character fails with 1007")
    func unfinishedCharacter() {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 100)
        #expect(assembler.receive(WebSocketFrame(.text, payload: Data("ab".utf8), isFinal: false)) == nil)
        guard case .fail(let failure)? = assembler.receive(WebSocketFrame(.continuation, payload: Data([0xE2, 0x82])))
        else {
            Issue.record("accepted")
            return
        }
        #expect(failure.code == .invalidPayload)
    }

    @Test("UTF-8 checked piece by piece: every text split anywhere, and the sequences RFC 3629 forbids")
    func validator() {
        let text = Array("a é € 𝄞 κόσμε 👋 z".utf8)
        for split in 0...text.count {
            var validator = UTF8Validator()
            let first = validator.feed(text.prefix(split))
            let second = validator.feed(text.dropFirst(split))
            #expect(first && second && validator.isComplete, "split at \(split)")
        }
        let invalid: [[UInt8]] = [
            [0x80], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0x80],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xE2, 0x28, 0xA1],
            Array("plenty of ascii first".utf8) + [0xFE],
        ]
        for bytes in invalid {
            var validator = UTF8Validator()
            let accepted = validator.feed(bytes)
            let after = validator.feed([0x61])
            #expect(!accepted, "\(bytes) was accepted")
            #expect(!after, "a spent validator accepts nothing more")
        }
        var unfinished = UTF8Validator()
        let prefix = unfinished.feed([0xF0, 0x9F, 0x91])
        #expect(prefix && !unfinished.isComplete)
    }

    @Test("a message over the limit fails with 1009, whole or growing by fragments")
    func tooBig() {
        var whole = WebSocketMessageAssembler(maxMessageSize: 4)
        guard case .fail(let failure)? = whole.receive(WebSocketFrame(.binary, payload: Data(count: 5))) else {
            Issue.record("accepted")
            return
        }
        #expect(failure.code == .messageTooBig)
        var fragments = WebSocketMessageAssembler(maxMessageSize: 4)
        #expect(fragments.receive(WebSocketFrame(.binary, payload: Data(count: 3), isFinal: false)) == nil)
        guard case .fail(let grown)? = fragments.receive(WebSocketFrame(.continuation, payload: Data(count: 2))) else {
            Issue.record("accepted")
            return
        }
        #expect(grown.code == .messageTooBig)
        #expect(!fragments.isAssembling, "the partial message is dropped")
    }

    @Test("fragments out of order fail with 1002")
    func outOfOrder() {
        var stray = WebSocketMessageAssembler(maxMessageSize: 100)
        guard case .fail(let continuation)? = stray.receive(WebSocketFrame(.continuation, payload: Data([1]))) else {
            Issue.record("accepted a continuation with no message")
            return
        }
        #expect(continuation.code == .protocolError)
        var interleaved = WebSocketMessageAssembler(maxMessageSize: 100)
        _ = interleaved.receive(WebSocketFrame(.text, payload: Data("a".utf8), isFinal: false))
        guard case .fail(let second)? = interleaved.receive(WebSocketFrame(.text, payload: Data("b".utf8))) else {
            Issue.record("accepted a new message inside a fragmented one")
            return
        }
        #expect(second.code == .protocolError)
    }

    @Test("close frames: code and reason, none, one byte, codes that may not be sent, a reason not UTF-8")
    func closeFrames() {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 100)
        #expect(assembler.receive(.close(.init(4001), reason: "bye")) == .close(.init(4001), reason: "bye"))
        #expect(assembler.receive(.close(nil)) == .close(nil, reason: ""))
        // IANA's 1012-1014 (a restart, "try again later", a bad gateway) are a server's to send.
        #expect(assembler.receive(.close(.serviceRestart)) == .close(.serviceRestart, reason: ""))
        #expect(assembler.receive(.close(.badGateway)) == .close(.badGateway, reason: ""))
        for (payload, code) in [
            (Data([0x03, 0xF7]), WebSocketCloseCode.protocolError),  // 1015: never sent
            (Data([0x03]), WebSocketCloseCode.protocolError), (Data([0x03, 0xED]), .protocolError),  // 1005
            (Data([0x03, 0xEE]), .protocolError),  // 1006
            (Data([0x03, 0xE8, 0xFF]), .invalidPayload),
        ] {
            guard case .fail(let failure)? = assembler.receive(WebSocketFrame(.close, payload: payload)) else {
                Issue.record("accepted \(Array(payload))")
                continue
            }
            #expect(failure.code == code)
        }
    }

    @Test("a close reason is cut to 123 bytes without splitting a character")
    func closeReasonCut() {
        let frame = WebSocketFrame.close(.normalClosure, reason: String(repeating: "é", count: 100))
        #expect(frame.payload.count <= 125)
        #expect(String(validating: frame.payload.dropFirst(2), as: UTF8.self) != nil)
    }

    @Test("ws and wss URLs become http and https for the handshake")
    func httpForm() {
        #expect(WebSocketHandshakeRule.httpForm(of: "WSS://a.test/x") == "https://a.test/x")
        #expect(WebSocketHandshakeRule.httpForm(of: "ws://a.test") == "http://a.test")
        #expect(WebSocketHandshakeRule.httpForm(of: "https://a.test") == nil)
        let api = WebSocketHandshakeRule.httpForm(of: ServerAPI(host: "ws://a.test", path: "/chat"))
        #expect((try? api.transportRequest().url.absoluteString) == "http://a.test/chat")
    }
}
