import Foundation
import ServerAPIKit

extension URLSessionTransport {
    /// Creates a transport with TLS options, refusing those it cannot honour instead of ignoring them.
    ///
    /// Empty options (no pins, no client certificate) give the same transport as `init(configuration:)`.
    ///
    /// - Parameters:
    ///   - configuration: The session's settings.
    ///   - tls: Pins and a client certificate.
    /// - Throws: `ServerAPIError` of kind `tls` with `TLSFailure.notSupported` when `tls` asks for public-key
    ///   pinning or a client certificate: use `CurlTransport`, which does both.
    /// - Important: Not supported by this transport, on any platform. On Linux, FoundationNetworking cannot do
    ///   either: it never calls `urlSession(_:didReceive:completionHandler:)` for server trust (only after a 401
    ///   response, and `URLProtectionSpace.serverTrust` is unsupported there), and never hands libcurl a client
    ///   certificate. On Apple platforms the session delegate's challenges could carry both; the transport does
    ///   not implement them.
    public convenience init(configuration: Configuration = Configuration(), tls: TLSOptions) throws(ServerAPIError) {
        if let problem = Self.unsupported(tls) { throw problem }
        self.init(configuration: configuration)
    }

    /// Why `tls` cannot be honoured, or `nil` when it can.
    static func unsupported(_ tls: TLSOptions) -> ServerAPIError? {
        #if canImport(FoundationNetworking)
            let platform =
                "(not supported by this transport: FoundationNetworking offers no hook to check the server's key "
                + "or present a certificate)"
        #else
            let platform = "(not supported by this transport)"
        #endif
        var asked: [String] = []
        if !tls.pins.allSatisfy(\.isEmpty) { asked.append("public-key pinning") }
        if tls.clientCertificate != nil { asked.append("client certificates") }
        if !tls.legacyProtocolHosts.isEmpty { asked.append("TLS below 1.2 for some hosts") }
        guard !asked.isEmpty else { return nil }
        return .tls(
            .notSupported,
            "URLSessionTransport cannot do \(asked.joined(separator: " or ")) \(platform); use CurlTransport")
    }
}
