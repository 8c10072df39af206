#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ServerAPI {
    /// How the transport carries one attempt: its time limits, size limits, redirects, the socket it
    /// connects through and the file the body goes to.
    ///
    /// A `TransportRequest` carries this value as it is (see `TransportRequest.transfer`), so a new
    /// per-call limit is a field here, with a default, and a modifier on `ServerAPI`: the manager passes
    /// it through untouched and each transport reads it from the request.
    package struct Transfer: Sendable, Hashable {
        /// The total time one attempt may take (60 seconds by default).
        package var timeout: Duration
        /// The time connecting (TCP and TLS) may take, within `timeout`; `nil` lets the transport decide
        /// (its configuration's connect timeout, else `timeout`). See `ServerAPI.connectTimeout(_:)`.
        package var connectTimeout: Duration?
        /// Fail an attempt whose transfer moves slower than this; `nil` uses the transport's default.
        /// See `ServerAPI.stallTimeout(below:for:)`.
        package var stallTimeout: StallTimeout?
        /// The Unix-domain socket to connect to instead of the URL's host (which still names the `Host`
        /// header); `nil` for the network. A `http+unix://` URL sets it too (`UnixSocket`).
        package var unixSocketPath: String?
        /// Where to write the response body, for a download; `nil` keeps it in memory.
        package var download: DownloadTarget?
        /// The largest response body accepted, in bytes, before failing with `responseTooLarge`; `nil` for
        /// the default: the manager's `Configuration.maxResponseSize` (64 MiB unless changed) for a body held
        /// in memory, none for a download to disk or a streamed body (see `ResponseSizeRule`). `Int64.max`
        /// for no limit at all.
        package var maxResponseSize: Int64?
        /// The most a content-coded body (gzip, deflate, br, zstd) may expand: decoded bytes beyond this many
        /// times the encoded bytes fail with `responseTooLarge` (see `DecompressionRule`); `nil` for no limit.
        package var maxDecompressionRatio: Int?
        /// Whether and how far redirects are followed (up to 10 by default).
        package var redirects: RedirectPolicy

        /// Creates transfer settings; the defaults are those of a new `ServerAPI`.
        /// - Parameters:
        ///   - timeout: The total time one attempt may take.
        ///   - connectTimeout: The time connecting may take; `nil` lets the transport decide.
        ///   - stallTimeout: The slowest acceptable transfer; `nil` uses the transport's default.
        ///   - unixSocketPath: The Unix-domain socket to connect through; `nil` for the network.
        ///   - download: Where the body is written; `nil` keeps it in memory.
        ///   - maxResponseSize: The largest body accepted, in bytes; `nil` for the default (see the property).
        ///   - maxDecompressionRatio: The most a content-coded body may expand; `nil` for no limit.
        ///   - redirects: Whether and how far redirects are followed.
        package init(
            timeout: Duration = .seconds(60),
            connectTimeout: Duration? = nil,
            stallTimeout: StallTimeout? = nil,
            unixSocketPath: String? = nil,
            download: DownloadTarget? = nil,
            maxResponseSize: Int64? = nil,
            maxDecompressionRatio: Int? = DecompressionRule.defaultRatio,
            redirects: RedirectPolicy = .follow(max: 10)
        ) {
            self.timeout = timeout
            self.connectTimeout = connectTimeout
            self.stallTimeout = stallTimeout
            self.unixSocketPath = unixSocketPath
            self.download = download
            self.maxResponseSize = maxResponseSize
            self.maxDecompressionRatio = maxDecompressionRatio
            self.redirects = redirects
        }
    }
}
