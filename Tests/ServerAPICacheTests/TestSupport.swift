import Foundation
import ServerAPIFileCache
import ServerAPIKit
import ServerAPIMemoryCache
import ServerAPITestSupport
import ServerAPITesting
import Testing

/// The two caches, for tests that every cache must pass.
enum CacheKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, file

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh cache of this kind (a file cache in a scratch directory).
    func with<T>(
        clock: TestClock? = nil, _ body: (any CachePolicy) async throws -> T
    ) async throws -> T {
        let now: @Sendable () -> Date
        if let clock { now = clock.dateSource } else { now = { Date() } }
        switch self {
        case .memory:
            return try await body(MemoryCache(now: now))
        case .file:
            return try await withTemporaryDirectory { directory in
                try await body(FileCache(directory: directory.appendingPathComponent("cache"), now: now))
            }
        }
    }
}

/// An entry with a body made from `text`.
func makeEntry(
    _ text: String, storedAt: Date = Date(), expiresAt: Date? = nil,
    headers: HTTPHeaders = ["Content-Type": "text/plain"],
    status: Int = 200
) -> CacheEntry {
    CacheEntry(
        status: status, headers: headers, body: Data(text.utf8),
        url: URL(string: "https://api.test/items?q=\(text.count)")!, storedAt: storedAt, expiresAt: expiresAt)
}

/// An entry whose body is `size` bytes of a pattern that depends on `seed`.
func makeEntry(size: Int, seed: UInt8, storedAt: Date = Date(), expiresAt: Date? = nil) -> CacheEntry {
    var body = Data(count: size)
    body.withUnsafeMutableBytes { raw in
        for index in raw.indices { raw[index] = UInt8(truncatingIfNeeded: index &* 31 &+ Int(seed)) }
    }
    return CacheEntry(
        status: 200, headers: ["Content-Type": "application/octet-stream", "X-Seed": "\(seed)"], body: body,
        url: URL(string: "https://api.test/blob/\(seed)")!, storedAt: storedAt, expiresAt: expiresAt)
}

extension CacheKey {
    /// A key for tests.
    static func test(_ name: String) -> CacheKey { CacheKey(rawValue: "GET https://api.test/\(name)") }
}
