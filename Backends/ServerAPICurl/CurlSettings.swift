internal import CCurl
import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A transport's configuration in the form every transfer applies it, worked out once per loop and
/// shared by its transfers (a class: a transfer holds one reference, not a copy of every field).
final class CurlSettings {
    let httpVersion: Int
    /// Why the configured HTTP version cannot be used with the loaded libcurl (HTTP/3 without it): every request
    /// fails with it, as with `tls` below.
    let httpVersionRefusal: ServerAPIError?
    let automaticDecompression: Bool
    let connectTimeout: Duration?
    let caFile: String?
    /// Lower-cased host names whose certificates are not verified.
    let insecureHosts: Set<String>
    let tcpKeepAlive: Bool
    let proxy: Proxy?
    let stallTimeout: StallTimeout?
    /// `CURLOPT_RESOLVE` entries, `host:port:addresses`.
    let resolve: [String]
    /// The transport's alt-svc cache (`Configuration.altSvc`), shared by its loops.
    let altSvc: CurlAltSvcFile?
    /// Pins and client certificate, or why the transport's TLS options cannot be used (every request fails with it).
    let tls: CurlTLS.Prepared
    /// In-memory bodies up to this size are handed to libcurl in one copy; larger ones are streamed.
    let copyBodyLimit: Int64 = 1 << 20
    /// Makes each download's writer.
    let makeDownloadWriter: CurlDownloadWriterFactory

    init(
        _ configuration: CurlTransport.Configuration, altSvc: CurlAltSvcFile?,
        makeDownloadWriter: @escaping CurlDownloadWriterFactory
    ) {
        self.makeDownloadWriter = makeDownloadWriter
        self.altSvc = altSvc
        httpVersion =
            switch configuration.httpVersion {
            case .http1: CURL_HTTP_VERSION_1_1
            case .http2PriorKnowledge: CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            case .http3: CURL_HTTP_VERSION_3
            case .http3Only: CURL_HTTP_VERSION_3ONLY
            default: CURL_HTTP_VERSION_2TLS
            }
        httpVersionRefusal = CurlTransport.refusal(configuration.httpVersion)
        automaticDecompression = configuration.automaticDecompression
        connectTimeout = configuration.connectTimeout
        caFile = configuration.additionalTrustedCAFile?.path
        insecureHosts = Set(configuration.insecureHosts.map { $0.lowercased() })
        tcpKeepAlive = configuration.tcpKeepAlive
        proxy = configuration.proxy
        stallTimeout = configuration.stallTimeout
        resolve = configuration.resolve.map(\.curlEntry)
        tls = CurlTLS.prepare(configuration.tls)
    }

    /// Whether a request to `url` may be multiplexed on an HTTP/2 or HTTP/3 connection: HTTP/2 with prior
    /// knowledge, or HTTP/2 or 3 allowed and, as libcurl then negotiates them only for https (ALPN, QUIC), the URL
    /// is https.
    func mayMultiplex(_ url: URL) -> Bool {
        httpVersion == CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            || (httpVersion != CURL_HTTP_VERSION_1_1 && url.scheme?.lowercased() == "https")
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so that a tiny positive duration never becomes libcurl's "no limit" 0.
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        guard seconds < Int64.max / 1000 - 1 else { return Int.max }
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(clamping: max(1, milliseconds))
    }

    /// A duration from libcurl's microsecond timings.
    static func curlMicroseconds(_ value: Int64) -> Duration { .microseconds(value) }
}
