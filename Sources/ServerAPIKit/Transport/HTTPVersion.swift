/// The HTTP versions a transport may speak. A call's metrics say which one it used
/// (`TransportMetrics.httpVersion`: "1.1", "2" or "3").
///
/// `CurlTransport` maps each to `CURLOPT_HTTP_VERSION`. `URLSessionTransport` takes only `.http2`,
/// what FoundationNetworking's libcurl negotiates by itself (HTTP/2 over TLS by ALPN, HTTP/1.1 for
/// plain http): it has no setting for the version, so it refuses the others rather than ignore them.
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    /// As `sapi --http-version` names it: "1.1", "2", "2-prior-knowledge", "3" or "3-only".
    public let description: String

    private init(_ description: String) { self.description = description }

    /// HTTP/1.1 only (`CURL_HTTP_VERSION_1_1`).
    public static let http1 = HTTPVersion("1.1")
    /// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise, and HTTP/1.1 for plain
    /// http (`CURL_HTTP_VERSION_2TLS`): the default. With `CurlTransport`, calls to one host share its
    /// HTTP/2 connections: they wait for one that can take another stream rather than open more.
    public static let http2 = HTTPVersion("2")
    /// HTTP/2 from the first byte, without negotiation, for https and plain http (h2c) alike
    /// (`CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE`): only for a server known to speak it.
    public static let http2PriorKnowledge = HTTPVersion("2-prior-knowledge")
    /// HTTP/3 over QUIC for https, falling back to HTTP/2 or HTTP/1.1 over TCP when QUIC cannot be had
    /// (`CURL_HTTP_VERSION_3`: libcurl tries QUIC first and TCP a moment later, and keeps whichever connects
    /// first); HTTP/1.1 for plain http. With `CurlTransport.Configuration.altSvc`, an `Alt-Svc: h3=…` answer moves
    /// the later calls to that origin onto QUIC.
    ///
    /// - Important: Only a libcurl built with HTTP/3 can: with another, every call fails with an `unsupported`
    ///   error naming what to install (see the Choosing a transport article).
    public static let http3 = HTTPVersion("3")
    /// HTTP/3 over QUIC only, for https (`CURL_HTTP_VERSION_3ONLY`): a call that cannot reach the server over
    /// QUIC fails (`cannotConnect`) rather than fall back to TCP.
    public static let http3Only = HTTPVersion("3-only")

    /// The former name of `http2`.
    @available(*, deprecated, renamed: "http2")
    public static var http2OverTLS: HTTPVersion { .http2 }

    /// The version `sapi --http-version` names ("1.1", "2", "2-prior-knowledge", "3", "3-only"), or `nil`.
    /// - Parameter name: The name.
    public init?(name: String) {
        let versions = [Self.http1, .http2, .http2PriorKnowledge, .http3, .http3Only]
        guard let version = versions.first(where: { $0.description == name }) else {
            return nil
        }
        self = version
    }
}
