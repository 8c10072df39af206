import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What `sapi-full` adds to the command: the URLSession backend (`--backend urlsession`) and HAR recording and
/// replay (`--har`, `--replay`), which link all of Foundation and FoundationNetworking. The `sapi` users start
/// leaves them out, and runs `sapi-full` for them (`FullBuild`), so that a call on the curl backend does not pay
/// for loading Foundation.
package protocol FoundationFeatures: Sendable {
    /// Why the URLSession backend cannot use `version`; nil when it can.
    func urlSessionRefusal(_ version: HTTPVersion) -> String?

    /// Why the URLSession backend cannot use `tls`.
    func urlSessionRefusal(_ tls: TLSOptions) -> String

    /// Why the URLSession backend cannot answer `credentials` (`-A digest`).
    func urlSessionRefusal(_ credentials: HTTPCredentials) -> String

    /// `--backend urlsession`'s transport, once `Composition` has refused what it cannot do.
    func urlSessionTransport(proxy: Proxy?) throws(ServerAPIError) -> any RequestPerforming

    /// `--har`: `transport` wrapped in one that records every exchange to `file`, with credentials redacted when
    /// `redacted`.
    func recorded(_ transport: any RequestPerforming, to file: URL, redacted: Bool) -> any RequestPerforming

    /// `--replay`: a transport that answers from the HAR file and sends nothing.
    /// - Throws: `ServerAPIError` when the file cannot be used.
    func replaying(_ file: URL) throws(ServerAPIError) -> any RequestPerforming

    /// What to try when the `--replay` file cannot be used.
    var replayHint: String { get }
}

extension Options {
    /// Whether the command needs what only `sapi-full` has.
    var needsFoundationFeatures: Bool { backend == .urlsession || har != nil || replay != nil }
}
