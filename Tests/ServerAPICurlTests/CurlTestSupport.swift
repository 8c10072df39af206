import Foundation
import ServerAPIKit
import Testing

/// Bytes `i % 251`, as `/bytes/N` sends them.
func patternBytes(_ count: Int) -> Data { Data((0..<count).map { UInt8($0 % 251) }) }

/// Deterministic pseudo-random bytes (every byte value, NULs included).
func noiseBytes(_ count: Int, seed: UInt64 = 42) -> Data {
    var state = seed
    var data = Data(count: count)
    for index in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        data[index] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return data
}
