import Foundation

/// The bytes of the fault fixture's `/resource?size=N&seed=S`, regenerated locally (see
/// Tests/Fixtures/fault_server.py): a 64 KiB xorshift64* block, chunk k rotated by k * 7919.
struct FixturePayload: Sendable {
    static let blockSize = 65536

    let seed: Int
    // Data, not [UInt8]: appending a Data slice is a copy of memory, even in a debug build.
    private let block: Data

    init(seed: Int = 1) {
        self.seed = seed
        var x = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        if x == 0 { x = 1 }
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.blockSize)
        for _ in 0..<(Self.blockSize / 8) {
            x ^= x >> 12
            x ^= x << 25
            x ^= x >> 27
            let word = x &* 0x2545_F491_4F6C_DD1D
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        block = Data(bytes)
    }

    /// The bytes in `range` of the resource.
    func bytes(_ range: Range<Int>) -> Data {
        var data = Data(capacity: range.count)
        var offset = range.lowerBound
        while offset < range.upperBound {
            let chunk = offset / Self.blockSize
            let rotation = (chunk &* 7919) % Self.blockSize
            let within = offset % Self.blockSize
            let take = min(Self.blockSize - within, range.upperBound - offset)
            let begin = (within + rotation) % Self.blockSize
            if begin + take <= Self.blockSize {
                data.append(block[begin..<(begin + take)])
            } else {
                data.append(block[begin...])
                data.append(block[..<(take - (Self.blockSize - begin))])
            }
            offset += take
        }
        return data
    }

    /// Writes the first `size` bytes of the resource to a file, a block at a time.
    func write(size: Int, to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var offset = 0
        while offset < size {
            let end = min(size, offset + 4 * Self.blockSize)
            try handle.write(contentsOf: bytes(offset..<end))
            offset = end
        }
    }

    /// Whether a file holds exactly the first `size` bytes of the resource (compared a block at a time).
    func matches(fileAt url: URL, size: Int) throws -> Bool {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var offset = 0
        while offset < size {
            let end = min(size, offset + 16 * Self.blockSize)
            guard let chunk = try handle.read(upToCount: end - offset), chunk == bytes(offset..<end) else {
                return false
            }
            offset = end
        }
        return try handle.read(upToCount: 1)?.isEmpty ?? true
    }

    /// `matches(fileAt:size:)`, run off the Swift concurrency pool (see `offThePool`).
    func verify(fileAt url: URL, size: Int) async throws -> Bool {
        let payload = self
        return try await offThePool { try payload.matches(fileAt: url, size: size) }
    }
}
