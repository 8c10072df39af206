import Foundation
import ServerAPIKit
import Testing

@Suite struct SHA256Tests {
    @Test(
        "SHA-256 matches the FIPS 180-4 test vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
        ])
    func vectors(input: String, digest: String) {
        #expect(SHA256.hex(input.utf8) == digest)
        #expect(SHA256.hex(Data(input.utf8)) == digest)
        #expect(SHA256.hex(Array(input.utf8)) == digest)
    }

    @Test("a million a's, fed in uneven pieces, hash like one piece")
    func millionA() {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(SHA256.hex(Data(repeating: 0x61, count: 1_000_000)) == expected)
        var hash = SHA256()
        var fed = 0
        var size = 1
        while fed < 1_000_000 {
            let count = min(size, 1_000_000 - fed)
            hash.update(Data(repeating: 0x61, count: count))
            fed += count
            size = size % 97 + 13
        }
        let digest: [UInt8] = hash.finalize()
        let hex = digest.map { byte -> String in byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }
        #expect(hex.joined() == expected)
        // A non-contiguous sequence takes the byte-at-a-time path.
        #expect(SHA256.hex((0..<1_000_000).lazy.map { _ in UInt8(0x61) }) == expected)
    }
}
