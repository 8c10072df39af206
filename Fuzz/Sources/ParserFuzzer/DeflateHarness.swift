import Foundation

@_spi(Transport) @testable import ServerAPIKit

/// permessage-deflate: the server's `Sec-WebSocket-Extensions` answer (the input's first line) and a compressed
/// message (the rest). The answer's parser never traps and agrees only to windows in range; the inflater holds a
/// message to its limit, and gives the same bytes (or the same failure) whether the message comes whole or in
/// fragments cut anywhere; what the compressor makes inflates back to its input.
enum DeflateHarness {
    /// Small, so that the fuzzer reaches it.
    static let limit = 4096

    struct Outcome: Equatable {
        var bytes = Data()
        var failure: WebSocketCloseCode?
    }

    static func run(_ data: Data) {
        let (fields, payload) = data.lines(1)
        var headers = HTTPHeaders()
        headers.add(name: "Sec-WebSocket-Extensions", value: fields[0])
        let agreed: WebSocketDeflateParameters?
        do {
            agreed = try WebSocketDeflateNegotiation.agreed(headers, offered: .default)
        } catch {
            agreed = nil
        }
        if let agreed {
            require(
                (8...15).contains(agreed.clientMaxWindowBits) && (8...15).contains(agreed.serverMaxWindowBits),
                "windows out of range: \(agreed)", input: data)
        }
        _ = WebSocketDeflateNegotiation.declined(headers)

        let window = agreed?.serverMaxWindowBits ?? 15
        let whole = inflate([payload[...]], windowBits: window)
        require(whole.bytes.count <= limit, "inflated \(whole.bytes.count) bytes past the limit", input: data)
        let bytes = [UInt8](payload)
        let first = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        let second = bytes.isEmpty ? 0 : first + (Int(bytes[bytes.count - 1]) % (bytes.count - first + 1))
        let pieces = [
            payload[..<(payload.startIndex + first)],
            payload[(payload.startIndex + first)..<(payload.startIndex + second)],
            payload[(payload.startIndex + second)...],
        ]
        let cut = inflate(pieces, windowBits: window)
        require(cut == whole, "cut at \(first) and \(second): \(cut), whole: \(whole)", input: data)

        var sender = WebSocketDeflateSender(windowBits: max(9, window), noContextTakeover: false)
        var receiver = WebSocketDeflateReceiver(windowBits: 15, maxMessageSize: payload.count)
        guard let frame = try? sender.frame(for: .binary(payload)) else {
            return require(false, "the compressor failed", input: data)
        }
        guard case .success(let inflated) = receiver.receive(frame) else {
            return require(false, "the compressor's output did not inflate", input: data)
        }
        require(inflated.payload == payload, "the round trip changed the message", input: data)
    }

    /// One compressed binary message in `pieces` (its fragments), through a receiver with the harness's limit.
    static func inflate(_ pieces: [Data.SubSequence], windowBits: Int) -> Outcome {
        var receiver = WebSocketDeflateReceiver(windowBits: windowBits, maxMessageSize: limit)
        var outcome = Outcome()
        for (index, piece) in pieces.enumerated() {
            let frame = WebSocketFrame(
                index == 0 ? .binary : .continuation, payload: Data(piece), isFinal: index == pieces.count - 1,
                rsv1: index == 0)
            switch receiver.receive(frame) {
            case .success(let inflated): outcome.bytes += inflated.payload
            case .failure(let failure):
                outcome.failure = failure.code
                // What came before a failure is the connection's to drop: only the failure compares.
                outcome.bytes = Data()
                return outcome
            }
        }
        return outcome
    }
}
