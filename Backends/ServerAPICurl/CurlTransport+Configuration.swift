public import ServerAPIKit

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

extension CurlTransport {
    /// How a `CurlTransport` connects: limits, TLS trust, decoding and default timeouts.
    public struct Configuration: Sendable, Hashable {
        /// The most connections open at once, to every host together; 0 means no limit.
        public var maxConnections: Int
        /// The most connections open at once to one host; 0 means no limit. Requests beyond it wait
        /// for a free connection (their timeout runs while they wait).
        public var maxConnectionsPerHost: Int
        /// Whether to ask for and decode every content coding this libcurl supports
        /// (`CurlTransport.supportedContentCodings`: gzip, deflate, br, zstd on Debian 12). A request's own
        /// `Accept-Encoding` is sent instead of libcurl's, and a body in a supported coding is still decoded.
        public var automaticDecompression: Bool
        /// The HTTP versions to use: HTTP/2 where TLS negotiates it (the default), HTTP/1.1 only, HTTP/2 with
        /// prior knowledge, or HTTP/3 over QUIC with or without a fallback to TCP (on a libcurl that has it:
        /// `CurlTransport.supportsHTTP3`).
        public var httpVersion: HTTPVersion
        /// The connect timeout for requests that do not set one; `nil` leaves only the request's timeout.
        public var connectTimeout: Duration?
        /// A PEM file of extra certificate authorities to trust, such as a company's private CA.
        ///
        /// - Important: libcurl reads this file instead of its default CA bundle. On Debian and Ubuntu
        ///   (OpenSSL) the system's authorities stay trusted through the default CA directory
        ///   (`/etc/ssl/certs`); on platforms whose libcurl has no CA directory, put the system bundle
        ///   and your authorities in one file.
        public var additionalTrustedCAFile: URL?
        /// Hosts whose TLS certificate and host name are NOT verified: for a development server only.
        ///
        /// - Important: Every other host is verified. Never list a production host: anyone on the path
        ///   could read and change its traffic.
        public var insecureHosts: Set<String>
        /// Whether idle connections send TCP keep-alive probes, so dead peers are noticed.
        public var tcpKeepAlive: Bool
        /// The proxy every request goes through (`CURLOPT_PROXY`: an HTTP(S) or SOCKS proxy), or
        /// `Proxy.environment`; `nil` (the default) connects directly and ignores `http_proxy`, `https_proxy`
        /// and `no_proxy`.
        public var proxy: Proxy? = nil
        /// Fail a transfer that moves slower than this, for requests that set no stall timeout of their
        /// own (`CURLOPT_LOW_SPEED_LIMIT`/`TIME`; whole seconds, rounded up); `nil` for no limit.
        public var stallTimeout: StallTimeout? = nil
        /// Public-key pins (per host) and the client certificate to present; none by default.
        ///
        /// - Important: Pins add a check to verification, never replace it. Problems with the files (a
        ///   missing or unreadable certificate or key, a malformed pin) fail every request with a
        ///   `ServerAPIError` naming the file; `CurlTransport(validating:)` reports them at once.
        public var tls: TLSOptions
        /// The most bytes of an error response (404, 500, …) kept in memory during a download.
        public var maxErrorBodySize: Int
        /// The bytes a streamed response (`stream`) buffers for its reader before the transfer stops
        /// reading from the socket; it reads again once the reader has taken half of them.
        ///
        /// - Note: Over HTTP/2 a paused stream stops only when the server has used up the stream's flow-
        ///   control window, which libcurl 7.88 opens to 32 MiB per stream: up to that much more is received
        ///   and held in memory while the reader is behind (later libcurl versions close the window of a
        ///   paused stream).
        public var streamBufferSize: Int = ResponseBodyStream.defaultBufferSize
        /// Addresses to use for host names instead of asking DNS (`CURLOPT_RESOLVE`, as `curl --resolve`):
        /// a staging host reached at a known address, or a name given an IPv6 and an IPv4 address. With
        /// both families, libcurl tries the first address and, after 200 ms without a connection, the
        /// other family too (happy eyeballs).
        public var resolve: [HostAddresses] = []
        /// How many loops (threads, each with its own libcurl multi handle and connection cache) run the
        /// transport's transfers; the default, `defaultLoopCount`, is the number of active processors.
        ///
        /// How calls are given to the loops is `loopAssignment`: by default (`.adaptive`), calls to one origin
        /// (scheme, host and port) run on the same loop, so they share its connections (and HTTP/2 streams),
        /// until that loop is busy; then they go to the least busy loop. 1 runs every call on one thread, as a
        /// single core would. `maxConnections` is split between the loops; `maxConnectionsPerHost` is split too,
        /// except with `.byOrigin`, where it holds as it is. Values below 1 count as 1.
        // Set by the initialiser only: an initial value here would be computed by every initialisation, even one
        // given a count, and the count of processors reads the cgroup's files.
        public var loopCount: Int

        /// How calls are given to the loops (`.adaptive` by default).
        public var loopAssignment: LoopAssignment = .adaptive

        /// Where the transport keeps the alternative services servers announce (`Alt-Svc`), so that with `.http3`
        /// an `Alt-Svc: h3=…` answer moves later calls to that origin onto QUIC: `.memory`, `.file(url)`, or `nil`
        /// (the default) to ignore them.
        ///
        /// An HTTP/3 alternative that cannot be reached (refused, or a connect timeout: a path that drops UDP) does
        /// not fail the call: it goes again at once over TCP to the origin, and the alternative is ignored for five
        /// minutes, twice as long at each further failure (`AltSvcCache` says more).
        public var altSvc: AltSvcCache? = nil

        /// Whether a loop drives libcurl's socket interface on an epoll set (`curl_multi_socket_action`, Linux
        /// only) instead of `curl_multi_perform` and `curl_multi_poll`.
        ///
        /// The socket interface's cost per turn is what is ready, not every transfer in flight; with libcurl
        /// 7.88 (Debian 12's) the perform loop still measured faster at every concurrency from 1 to 1,000 calls
        /// on loopback, in C as in the transport (see the README's benchmark), so it is off by default.
        public var socketInterface: Bool = false

        /// How a transport with several loops gives its calls to them.
        public enum LoopAssignment: Sendable, Hashable {
            /// Calls to one origin run on the loop the origin maps to, as with `.byOrigin`, while that loop has
            /// fewer calls in flight than it has connections to one host (`maxConnectionsPerHost` split between
            /// the loops, or `adaptiveThreshold` calls with no per-host limit, or when the calls may share an
            /// HTTP/2 or HTTP/3 connection: https with `.http2`, `.http3` or `.http3Only`, or
            /// `.http2PriorKnowledge`); past that, a call goes to the loop with the fewest calls in flight. A few
            /// calls at a time share one loop's connections; a
            /// thousand calls to one origin use every core. The per-host limit holds in total: each loop has its
            /// share of it. Calls to an HTTP/2 origin share one connection per loop they run on.
            case adaptive
            /// Calls to one origin always run on the same loop: they share one connection cache, and an
            /// HTTP/2 origin's calls share one connection. Several origins use several cores; one origin uses one.
            case byOrigin
            /// Calls take the loops in turn, whatever their origin: one busy origin uses every loop (every
            /// core), each loop with connections of its own to it. An HTTP/2 origin gets a connection per loop;
            /// `maxConnectionsPerHost` is split between the loops (rounded up).
            case roundRobin
        }

        /// With `.adaptive`, the calls in flight on a loop past which the next call to one of its origins goes to
        /// the least busy loop, when there is no per-host limit or the calls may share an HTTP/2 connection.
        public static let adaptiveThreshold = 32

        /// The number of active processors (at least 1): the default `loopCount`.
        public static var defaultLoopCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

        /// Creates a configuration.
        /// - Parameters:
        ///   - maxConnections: The most connections at once, in total; 0 means no limit.
        ///   - maxConnectionsPerHost: The most connections at once to one host; 0 means no limit.
        ///   - automaticDecompression: Whether to ask for and decode compressed bodies.
        ///   - httpVersion: The HTTP versions to use.
        ///   - connectTimeout: The connect timeout for requests that set none.
        ///   - additionalTrustedCAFile: A PEM file of extra authorities to trust.
        ///   - insecureHosts: Hosts whose certificates are not verified (development only).
        ///   - tcpKeepAlive: Whether to send TCP keep-alive probes.
        ///   - proxy: The proxy to send requests through; `nil` connects directly.
        ///   - stallTimeout: The default stall limit; `nil` for none.
        ///   - tls: Public-key pins and the client certificate.
        ///   - maxErrorBodySize: The most bytes of a download's error response kept (1 MiB).
        ///   - streamBufferSize: The bytes a streamed response buffers before the transfer pauses (1 MiB).
        ///   - loopCount: How many loops run the transfers (`defaultLoopCount`: the active processors).
        ///   - loopAssignment: How calls are given to the loops (`.adaptive`).
        public init(
            maxConnections: Int = 0,
            maxConnectionsPerHost: Int = 8,
            automaticDecompression: Bool = true,
            httpVersion: HTTPVersion = .http2,
            connectTimeout: Duration? = nil,
            additionalTrustedCAFile: URL? = nil,
            insecureHosts: Set<String> = [],
            tcpKeepAlive: Bool = true,
            proxy: Proxy? = nil,
            stallTimeout: StallTimeout? = nil,
            tls: TLSOptions = TLSOptions(),
            maxErrorBodySize: Int = 1 << 20,
            streamBufferSize: Int = ResponseBodyStream.defaultBufferSize,
            loopCount: Int = Configuration.defaultLoopCount,
            loopAssignment: LoopAssignment = .adaptive
        ) {
            self.maxConnections = maxConnections
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.automaticDecompression = automaticDecompression
            self.httpVersion = httpVersion
            self.connectTimeout = connectTimeout
            self.additionalTrustedCAFile = additionalTrustedCAFile
            self.insecureHosts = insecureHosts
            self.tcpKeepAlive = tcpKeepAlive
            self.proxy = proxy
            self.stallTimeout = stallTimeout
            self.tls = tls
            self.maxErrorBodySize = maxErrorBodySize
            self.streamBufferSize = streamBufferSize
            self.loopCount = loopCount
            self.loopAssignment = loopAssignment
        }

        /// The defaults: 8 connections per host, HTTP/2 over TLS, decompression on, every host verified.
        public static var `default`: Configuration { Configuration() }
    }

    /// The addresses a host name resolves to, for `Configuration.resolve`.
    public struct HostAddresses: Sendable, Hashable {
        /// The host name, as in the URLs.
        public var host: String
        /// The port the override applies to.
        public var port: Int
        /// The addresses, in the order to try: IPv4 (`127.0.0.1`) or IPv6 (`::1`) literals.
        public var addresses: [String]

        /// Creates an override.
        public init(host: String, port: Int, addresses: [String]) {
            self.host = host
            self.port = port
            self.addresses = addresses
        }

        /// The entry as `CURLOPT_RESOLVE` takes it: `host:port:address[,address]`, IPv6 in brackets.
        var curlEntry: String {
            "\(host):\(port):" + addresses.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ",")
        }
    }

    /// The HTTP versions a `CurlTransport` speaks (`CURLOPT_HTTP_VERSION`): `.http1`, `.http2` (the
    /// default: over TLS, by ALPN), `.http2PriorKnowledge`, `.http3` or `.http3Only`.
    public typealias HTTPVersion = ServerAPIKit.HTTPVersion
}
