import Foundation

/// SHA-256 (FIPS 180-4), for cache keys, cache file names and body digests: the core has no
/// crypto dependency.
///
/// Contiguous input (`Data`, `[UInt8]`, a string's UTF-8 view) is hashed a block at a time
/// straight from its storage; other sequences go through a 64-byte buffer.
public struct SHA256: Sendable {
    private var h0: UInt32 = 0x6a09_e667, h1: UInt32 = 0xbb67_ae85, h2: UInt32 = 0x3c6e_f372, h3: UInt32 = 0xa54f_f53a
    private var h4: UInt32 = 0x510e_527f, h5: UInt32 = 0x9b05_688c, h6: UInt32 = 0x1f83_d9ab, h7: UInt32 = 0x5be0_cd19
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    /// Creates an empty hash.
    public init() { buffer.reserveCapacity(64) }

    /// Adds bytes.
    /// - Parameter data: The bytes to hash, after those already added.
    public mutating func update(_ data: some Sequence<UInt8>) {
        let handled: Void? = data.withContiguousStorageIfAvailable { bytes in
            update(UnsafeRawBufferPointer(bytes))
        }
        if handled != nil { return }
        if let data = data as? Data {
            data.withUnsafeBytes { update($0) }
            return
        }
        for byte in data { append(byte) }
    }

    /// Finishes and returns the 32-byte digest.
    /// - Returns: The digest, most significant byte first.
    public mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        append(0x80)
        while buffer.count != 56 { append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        compressBuffer()
        buffer.removeAll()
        var digest = [UInt8]()
        digest.reserveCapacity(32)
        for word in [h0, h1, h2, h3, h4, h5, h6, h7] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// The digest of `data` as lower-case hex.
    /// - Parameter data: The bytes to hash.
    /// - Returns: 64 hex digits.
    public static func hex(_ data: some Sequence<UInt8>) -> String {
        var hash = SHA256()
        hash.update(data)
        let digest = hash.finalize()
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 64) { out in
            digits.withUTF8Buffer { digits in
                for (index, byte) in digest.enumerated() {
                    out[2 * index] = digits[Int(byte >> 4)]
                    out[2 * index + 1] = digits[Int(byte & 0x0f)]
                }
            }
            return 64
        }
    }

    private mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var base = bytes.baseAddress, !bytes.isEmpty else { return }
        var remaining = bytes.count
        length &+= UInt64(remaining)
        // Top up a partial block first, then hash whole blocks in place.
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, remaining)
            buffer.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            base += take
            remaining -= take
            if buffer.count == 64 { compressBuffer() }
        }
        while remaining >= 64 {
            compress(base)
            base += 64
            remaining -= 64
        }
        if remaining > 0 { buffer.append(contentsOf: UnsafeRawBufferPointer(start: base, count: remaining)) }
    }

    private mutating func append(_ byte: UInt8) {
        buffer.append(byte)
        length &+= 1
        if buffer.count == 64 { compressBuffer() }
    }

    /// Hashes the full 64-byte buffer and empties it.
    private mutating func compressBuffer() {
        // A copy (it shares storage) so that reading the block does not overlap the state's mutation.
        let block = buffer
        block.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, bytes.count == 64 { compress(base) }
        }
        buffer.removeAll(keepingCapacity: true)
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
            var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
            Self.k.withUnsafeBufferPointer { k in
                for i in 0..<64 {
                    let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                    let ch = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ ch &+ k[i] &+ w[i]
                    let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                    let maj = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ maj
                    h = g; g = f; f = e; e = d &+ t1
                    d = c; c = b; b = a; a = t1 &+ t2
                }
            }
            h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
            h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
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
