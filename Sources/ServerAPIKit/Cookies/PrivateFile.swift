#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files that hold secrets (a cookie jar, `sapi`'s sessions): written whole or not at all, readable by
/// their owner only.
package enum PrivateFile {
    /// Why a write failed: the file and the `errno`.
    package struct Failure: Error, CustomStringConvertible {
        package var path: String
        package var code: Int32
        package var description: String { "\(path): \(String(cString: strerror(code)))" }
    }

    /// Writes `data` to `url`: a temporary file (0600) beside it, flushed to the device and renamed over it;
    /// the folder is created (0700) when missing. A failure leaves the file as it was.
    /// - Throws: `Failure` naming the file and the reason.
    package static func write(_ data: Data, to url: URL) throws(Failure) {
        let folder = url.deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            // Foundation's error carries the system's one underneath ("NSUnderlyingError": FoundationEssentials
            // does not declare NSUnderlyingErrorKey).
            let underlying = (error as? CocoaError)?.userInfo["NSUnderlyingError"] as? POSIXError
            throw Failure(path: folder, code: underlying.map { $0.code.rawValue } ?? EIO)
        }
        let temporary = url.path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let file = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw Failure(path: url.path, code: errno) }
        var failure: Int32?
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count, let base = bytes.baseAddress {
                let written = systemWrite(file, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(file) != 0 { failure = errno }
        close(file)
        if failure == nil, rename(temporary, url.path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw Failure(path: url.path, code: failure)
        }
    }
}

/// The C library's `write(2)`, which `PrivateFile.write(_:to:)` hides inside the type.
private func systemWrite(_ file: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(file, bytes, count)
}
