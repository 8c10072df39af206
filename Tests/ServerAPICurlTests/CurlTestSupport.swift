import Foundation
import ServerAPIKit
import Testing

/// Bytes `i % 251`, as `/bytes/N` sends them.
///
/// Made a period at a time: byte by byte, a debug build spent seconds of a cooperative thread on a few megabytes,
/// and the tests beside it waited.
func patternBytes(_ count: Int) -> Data {
    let period = Data((0..<251).map { UInt8($0) })
    var data = Data(capacity: count)
    while data.count + period.count <= count { data.append(period) }
    data.append(period.prefix(count - data.count))
    return data
}

/// Deterministic pseudo-random bytes (every byte value, NULs included).
func noiseBytes(_ count: Int, seed: UInt64 = 42) -> Data {
    var state = seed
    var data = Data(count: count)
    data.withUnsafeMutableBytes { bytes in
        for index in bytes.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
    }
    return data
}
