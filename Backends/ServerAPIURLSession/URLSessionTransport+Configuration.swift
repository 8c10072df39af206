import ServerAPIKit

extension URLSessionTransport {
    /// The settings of one transport: the options of its `URLSession`, as plain values.
    public struct Configuration: Sendable {
        /// The most connections open to one host at a time; requests past it wait for a free one.
        public var maxConnectionsPerHost: Int
        /// Headers added to every request that does not set them itself.
        public var additionalHeaders: HTTPHeaders
        /// Whether the session stores cookies it receives and sends them back (off: the transport
        /// sends exactly the request's headers).
        public var handlesCookies: Bool
        /// How long a connection may stay silent before the request fails with `timedOut`, whatever
        /// the request's own (total) timeout; `nil` uses the request's timeout.
        public var idleTimeout: Duration?
        /// The most bytes of an error response (404, 500, …) kept in memory during a download.
        public var maxErrorBodySize: Int
        /// Fail a transfer that moves slower than this, for requests that set no stall timeout of their
        /// own (a watchdog per transfer); `nil` for no limit.
        public var stallTimeout: StallTimeout? = nil
        /// The bytes a streamed body buffers for its reader before its stream asks the transfer to pause.
        /// FoundationNetworking cannot pause (see `URLSessionTransport.stream`), so on Linux this only
        /// sets when the stream tells its reader's side that it is behind; the transfer reads on.
        public var streamBufferSize: Int = ResponseBodyStream.defaultBufferSize
        /// The HTTP versions to use. Only `.http2` (the default) is taken: FoundationNetworking sets no
        /// `CURLOPT_HTTP_VERSION`, so its libcurl negotiates HTTP/2 over TLS by ALPN (HTTP/1.1 for plain
        /// http) and offers no way to ask for HTTP/1.1 only or for prior knowledge. Any other value fails
        /// every call with `invalidRequest`. (FoundationNetworking does not multiplex, either: it sets
        /// no `CURLOPT_PIPEWAIT`, so concurrent calls open connections of their own.)
        public var httpVersion: HTTPVersion = .http2
        /// The proxy, set only by `URLSessionTransport.init(configuration:proxy:)`, which checks it.
        var proxy: Proxy? = nil

        /// Creates the session's settings: connections per host, default headers, timeouts, TLS and HTTP version.
        /// - Parameters:
        ///   - maxConnectionsPerHost: The most connections open to one host at a time (6).
        ///   - additionalHeaders: Headers added to every request that does not set them.
        ///   - handlesCookies: Whether the session keeps and sends cookies (no).
        ///   - idleTimeout: How long a connection may stay silent; `nil` for the request's timeout.
        ///   - maxErrorBodySize: The most bytes of a download's error response kept (1 MiB).
        ///   - stallTimeout: The default stall limit; `nil` for none.
        public init(
            maxConnectionsPerHost: Int = 6,
            additionalHeaders: HTTPHeaders = [:],
            handlesCookies: Bool = false,
            idleTimeout: Duration? = nil,
            maxErrorBodySize: Int = 1 << 20,
            stallTimeout: StallTimeout? = nil
        ) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.additionalHeaders = additionalHeaders
            self.handlesCookies = handlesCookies
            self.idleTimeout = idleTimeout
            self.maxErrorBodySize = maxErrorBodySize
            self.stallTimeout = stallTimeout
        }

        /// The defaults: 6 connections per host, no cookies, the request's timeout.
        public static var `default`: Configuration { Configuration() }
    }
}
