#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// SHA-256 (FIPS 180-4), for cache keys, cache file names and body digests: the core has no
/// crypto dependency.
///
/// Contiguous input (`Data`, `[UInt8]`, a string's UTF-8 view) is hashed a block at a time
/// straight from its storage; other sequences go through a 64-byte buffer.
package struct SHA256: Sendable {
    private var h0: UInt32 = 0x6a09_e667, h1: UInt32 = 0xbb67_ae85, h2: UInt32 = 0x3c6e_f372, h3: UInt32 = 0xa54f_f53a
    private var h4: UInt32 = 0x510e_527f, h5: UInt32 = 0x9b05_688c, h6: UInt32 = 0x1f83_d9ab, h7: UInt32 = 0x5be0_cd19
    /// A partial block, kept inline (no allocation): `buffered` bytes of it are in use.
    private var buffer: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var buffered = 0
    private var length: UInt64 = 0

    /// Creates an empty hash.
    package init() {}

    /// Adds bytes.
    /// - Parameter data: The bytes to hash, after those already added.
    package mutating func update(_ data: some Sequence<UInt8>) {
        let handled: Void? = data.withContiguousStorageIfAvailable { bytes in
            update(UnsafeRawBufferPointer(bytes))
        }
        if handled != nil { return }
        if let data = data as? Data {
            data.withUnsafeBytes { update($0) }
            return
        }
        for byte in data { withUnsafeBytes(of: byte) { update($0) } }
    }

    /// Finishes and returns the 32-byte digest.
    /// - Returns: The digest, most significant byte first.
    package mutating func finalize() -> [UInt8] {
        finish()
        return [UInt8](unsafeUninitializedCapacity: 32) { digest, count in
            writeDigest(to: UnsafeMutableRawBufferPointer(digest))
            count = 32
        }
    }

    /// The digest of `data` as lower-case hex.
    /// - Parameter data: The bytes to hash.
    /// - Returns: 64 hex digits.
    package static func hex(_ data: some Sequence<UInt8>) -> String {
        var hash = SHA256()
        hash.update(data)
        hash.finish()
        return withUnsafeTemporaryAllocation(byteCount: 32, alignment: 4) { digest in
            hash.writeDigest(to: digest)
            return String(unsafeUninitializedCapacity: 64) { out in
                for index in 0..<32 {
                    let byte = digest[index]
                    out[2 * index] = hexDigit(byte >> 4)
                    out[2 * index + 1] = hexDigit(byte & 0x0f)
                }
                return 64
            }
        }
    }

    @inline(__always)
    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x57 + value }

    /// Pads the message and hashes the last block(s).
    private mutating func finish() {
        let bitLength = length &* 8
        var padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (
            0, 0, 0, 0, 0, 0, 0, 0, 0
        )
        let padCount = buffered < 56 ? 56 - buffered : 120 - buffered
        withUnsafeMutableBytes(of: &padding) { raw in
            raw[0] = 0x80
            for index in 0..<8 {
                raw[padCount + index] = UInt8(truncatingIfNeeded: bitLength >> UInt64(56 - 8 * index))
            }
        }
        let total = padCount + 8
        withUnsafeBytes(of: &padding) { update(UnsafeRawBufferPointer(rebasing: $0[0..<total])) }
    }

    private func writeDigest(to digest: UnsafeMutableRawBufferPointer) {
        digest.storeBytes(of: h0.bigEndian, toByteOffset: 0, as: UInt32.self)
        digest.storeBytes(of: h1.bigEndian, toByteOffset: 4, as: UInt32.self)
        digest.storeBytes(of: h2.bigEndian, toByteOffset: 8, as: UInt32.self)
        digest.storeBytes(of: h3.bigEndian, toByteOffset: 12, as: UInt32.self)
        digest.storeBytes(of: h4.bigEndian, toByteOffset: 16, as: UInt32.self)
        digest.storeBytes(of: h5.bigEndian, toByteOffset: 20, as: UInt32.self)
        digest.storeBytes(of: h6.bigEndian, toByteOffset: 24, as: UInt32.self)
        digest.storeBytes(of: h7.bigEndian, toByteOffset: 28, as: UInt32.self)
    }

    private mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var base = bytes.baseAddress, !bytes.isEmpty else { return }
        var remaining = bytes.count
        length &+= UInt64(remaining)
        // Top up a partial block first, then hash whole blocks in place.
        if buffered > 0 {
            let take = min(64 - buffered, remaining)
            let offset = buffered
            withUnsafeMutableBytes(of: &buffer) { raw in
                raw.baseAddress.map { $0.advanced(by: offset).copyMemory(from: base, byteCount: take) }
            }
            buffered += take
            base += take
            remaining -= take
            if buffered == 64 {
                var block = buffer
                withUnsafeBytes(of: &block) { raw in raw.baseAddress.map { compress($0) } }
                buffered = 0
            }
        }
        while remaining >= 64 {
            compress(base)
            base += 64
            remaining -= 64
        }
        if remaining > 0 {
            let count = remaining
            withUnsafeMutableBytes(of: &buffer) { raw in
                raw.baseAddress.map { $0.copyMemory(from: base, byteCount: count) }
            }
            buffered = remaining
        }
    }

    private mutating func compress(_ block: UnsafeRawPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 {
                w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self))
            }
            for i in 16..<64 {
                let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var a = h0
            var b = h1
            var c = h2
            var d = h3
            var e = h4
            var f = h5
            var g = h6
            var h = h7
            Self.k.withUnsafeBufferPointer { k in
                for i in 0..<64 {
                    let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                    let ch = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ ch &+ k[i] &+ w[i]
                    let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                    let maj = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ maj
                    h = g
                    g = f
                    f = e
                    e = d &+ t1
                    d = c
                    c = b
                    b = a
                    a = t1 &+ t2
                }
            }
            h0 &+= a
            h1 &+= b
            h2 &+= c
            h3 &+= d
            h4 &+= e
            h5 &+= f
            h6 &+= g
            h7 &+= h
        }
    }

    @inline(__always)
    private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}
