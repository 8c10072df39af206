import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs CPU- or disk-heavy test work on a dispatch thread, leaving the Swift concurrency pool
/// (two threads here) free for the transfers other tests are timing.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

/// Writes a small file without `Data.write`'s fsync, which blocks a Swift concurrency thread
/// for as long as a busy disk takes (and the cancellation tests time those threads).
func writeFile(_ data: Data, to url: URL) throws {
    let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    try handle.write(contentsOf: data)
}
