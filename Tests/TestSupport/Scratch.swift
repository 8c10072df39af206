import Foundation

/// A folder of its own for one test, removed when the scratch is released (when the test ends).
///
/// ```swift
/// let scratch = try Scratch()
/// let target = DownloadTarget(destination: scratch.file("payload.bin"))
/// ```
public final class Scratch: Sendable {
    /// The folder, under the system's temporary directory.
    public let folder: URL

    /// Creates a fresh, empty folder.
    /// - Throws: When the folder cannot be created.
    public init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("serverapi-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// A file named `name` in the folder (not created).
    public func file(_ name: String) -> URL { folder.appendingPathComponent(name) }

    /// Whether a file exists at `url`.
    public func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    /// The size of the file at `url`, or `nil` when there is none.
    public func size(_ url: URL) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
    }
}

/// Runs `body` with a fresh temporary directory (a `Scratch` folder), removed when `body` returns or throws.
/// - Parameter body: Work that gets the directory's URL.
/// - Returns: What `body` returns.
/// - Throws: When the directory cannot be created, or what `body` throws.
public func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let scratch = try Scratch()
    defer { withExtendedLifetime(scratch) {} }
    return try await body(scratch.folder)
}
