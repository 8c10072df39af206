import Foundation
import ServerAPIKit
import Testing

/// Mutated documents never crash the scanner or the formatters, and the scanner and the parser
/// agree on what is valid. Deterministic: a fixed seed.
@Suite struct JSONScannerFuzzTests {
    /// SplitMix64: small, fast, and the same sequence on every platform.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let seed = Data(
        #"""
        {"code":0,"msg":"ok \u00e9\ud83d\ude00","data":{"shop":{"items":[1,-2.5e3,true,null,"a\"b",{"k":[]}],"名":"🍎"}},"n":12345678901234567890}
        """#.utf8)
    static let alphabet =
        Array(#"{}[]:,"\\ u0123456789abcdefEtrunl.-+ "#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xED, 0xF4, 0xFF]

    static func mutate(_ data: Data, with generator: inout Generator) -> Data {
        var bytes = [UInt8](data)
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0 where !bytes.isEmpty: bytes.remove(at: position)
            case 1: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
            case 2 where !bytes.isEmpty: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
            case 3: bytes = Array(bytes.prefix(position))
            default:
                let end = min(bytes.count, position + Int.random(in: 1...8, using: &generator))
                bytes.insert(contentsOf: bytes[position..<end], at: position)
            }
        }
        return Data(bytes)
    }

    @Test("Mutated documents are either valid or a decoding error, everywhere, and never crash")
    func mutations() throws {
        var generator = Generator(state: 20_251_121)
        let envelope = EnvelopeFormatter()
        let plain = PlainFormatter()
        let url = URL(string: "https://api.test")!
        var valid = 0
        for _ in 0..<3000 {
            let data = Self.mutate(Self.seed, with: &generator)
            let scanned = Result { () throws(ServerAPIError) in try JSONScanner.validate(data) }
            let parsed = Result { () throws(ServerAPIError) in try JSONValue(parsing: data) }
            // The two agree, except that valid JSON may hold a number too large for a Double.
            switch (scanned, parsed) {
            case (.success, .success), (.failure, .failure): break
            case (.success, .failure(let error)):
                #expect(error.message.contains("does not fit in a Double"), "\(String(decoding: data, as: UTF8.self))")
            case (.failure, .success):
                Issue.record("the parser accepted what the scanner rejects: \(String(decoding: data, as: UTF8.self))")
            }
            if case .failure(let error) = scanned { #expect(error.kind == .decoding) } else { valid += 1 }

            let response = TransportResponse(status: 200, body: .data(data), url: url)
            for keyPath in [nil, "shop.items[5].k", "~.n", "shop.名"] {
                let api = ServerAPI(host: "api.test").keyPath(keyPath)
                for outcome in [
                    Result { _ = try envelope.format(response, for: api) },
                    Result { _ = try envelope.decode(JSONValue.self, from: response, for: api) },
                    Result { _ = try plain.format(response, for: api) },
                ] {
                    if case .failure(let error) = outcome {
                        let kind = (error as? ServerAPIError)?.kind
                        #expect(kind == .decoding || kind == .business, "\(error)")
                    }
                }
            }
        }
        // The mutations must exercise both outcomes to mean anything.
        #expect(valid > 50 && valid < 2950)
    }
}
