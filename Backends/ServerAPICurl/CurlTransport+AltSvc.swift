internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

extension CurlTransport {
    /// Where a `CurlTransport` keeps the alternative services servers announce (`Alt-Svc`, RFC 7838: libcurl's
    /// alt-svc cache), so that an `Alt-Svc: h3=":443"` answer moves the later calls to that origin onto HTTP/3.
    ///
    /// Set it in `Configuration.altSvc`. Alternatives are taken only where the configured `HTTPVersion` allows their
    /// protocol: HTTP/3 ones with `.http3` or `.http3Only`.
    public struct AltSvcCache: Sendable, Hashable {
        /// The file, or `nil` for one of the transport's own.
        let file: URL?

        /// Kept for the transport's life: libcurl's transfers share it through a file of the transport's own in the
        /// temporary folder, removed with the transport.
        public static let memory = AltSvcCache(file: nil)

        /// Kept in `file` (libcurl's alt-svc format), read when a call starts and written when it ends, so that it
        /// outlives the process: beside a cookie jar, say. The file need not exist yet; its folder must.
        /// - Parameter file: The cache file.
        public static func file(_ file: URL) -> AltSvcCache { AltSvcCache(file: file) }
    }
}

/// A transport's alt-svc cache file, shared by its loops' transfers; the file of `AltSvcCache.memory` is removed
/// when the last loop lets go of it.
///
/// libcurl keeps the cache in each easy handle, reads the file when `CURLOPT_ALTSVC` is set and writes it only when
/// the handle is cleaned up: a loop therefore makes a new handle after each transfer that used it
/// (`CurlEasyHandle.renew()`), so that what one transfer learned reaches the next, on any loop.
final class CurlAltSvcFile: Sendable {
    let path: String
    private let owned: Bool

    init(_ cache: CurlTransport.AltSvcCache) {
        if let file = cache.file {
            path = file.path
            owned = false
        } else {
            let name = "serverapikit-altsvc-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).txt"
            path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
            owned = true
        }
    }

    deinit {
        if owned { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Hands the cache to `easy`'s next transfer: every alternative protocol is accepted, and the configured HTTP
    /// version decides which are used.
    func apply(to easy: CurlEasyHandle) throws(ServerAPIError) {
        try easy.set(CURLOPT_ALTSVC_CTRL, Int(CURLALTSVC_H1 | CURLALTSVC_H2 | CURLALTSVC_H3))
        try easy.set(CURLOPT_ALTSVC, path)
    }
}
