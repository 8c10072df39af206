import Foundation
import ServerAPIFileCache
import ServerAPIKit
import ServerAPIMemoryCache
import Testing

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let date = Locked(Date(timeIntervalSinceReferenceDate: 700_000_000))

    /// The current time.
    var now: Date { date.withLock { $0 } }

    /// The clock as the caches take it.
    var provider: @Sendable () -> Date { { self.now } }

    /// Moves the clock forward.
    func advance(_ seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A directory that exists for the duration of `body`, then is removed.
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("serverapi-cache-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// The two caches, for tests that every cache must pass.
enum CacheKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, file

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh cache of this kind (a file cache in a scratch directory).
    func with<T>(
        clock: ManualClock? = nil, _ body: (any CachePolicy) async throws -> T
    ) async throws -> T {
        let now: @Sendable () -> Date
        if let clock { now = clock.provider } else { now = { Date() } }
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
