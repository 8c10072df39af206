import Foundation
import Testing

@testable import ServerAPIFileCache

@Suite struct XXH64Tests {
    @Test(
        "XXH64 matches the reference implementation",
        arguments: [
            (Data(), 0xEF46_DB37_51D8_E999),
            (Data("a".utf8), 0xD24E_C4F1_A98C_6E5B),
            (Data("abc".utf8), 0x44BC_2CF5_AD77_0999),
            (Data("Nobody inspects the spammish repetition".utf8), 0xFBCE_A83C_8A37_8BF1),
            (Data((0..<4).flatMap { _ in (0...255).map { UInt8($0) } } + Array("xyz".utf8)), 0xE146_CB31_B65B_C21A),
        ] as [(Data, UInt64)])
    func referenceValues(input: Data, expected: UInt64) {
        #expect(XXH64.hash(input) == expected)
    }

    @Test("the seed changes the hash")
    func seed() {
        #expect(XXH64.hash(Data("abc".utf8), seed: 1) == 0xBEA9_CA81_9932_8908)
    }
}
