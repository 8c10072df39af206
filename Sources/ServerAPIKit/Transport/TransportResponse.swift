#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a transport got back: status, headers, the raw `ResponseBody` and the transport's metrics.
///
/// Transports return it and plugins (`process`, `didReceive`) and formatters see it; a caller gets a
/// `ServerResult` from `send(_:)` (the formatted value with the call's metrics) or a `StreamedResponse`
/// from `stream(_:)` instead.
public struct TransportResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, in order.
    public var headers: HTTPHeaders
    /// The body: bytes in memory, the file a download was written to, or (from `stream`) the body as it arrives.
    public var body: ResponseBody
    /// The URL that answered, after redirects.
    public var url: URL
    /// What the transport measured.
    public var metrics: TransportMetrics {
        get { _metrics.value }
        _modify { yield &_metrics.value }
    }
    private var _metrics: CopyOnWrite<TransportMetrics>
    /// `metrics`' box, which `RequestMetrics.takeTransport(of:)` shares.
    var metricsStorage: CopyOnWrite<TransportMetrics> { _metrics }
    /// The trailer fields that followed a whole body (RFC 9110 §6.5); empty when there were none. For a
    /// streamed body they are on the stream (`ResponseBodyStream.trailers`) once it has ended.
    public var trailers: HTTPHeaders

    /// Creates a response; transports return them, and test doubles build their own.
    public init(
        status: Int, headers: HTTPHeaders = [:], body: ResponseBody = .data(Data()), url: URL,
        metrics: TransportMetrics = TransportMetrics(), trailers: HTTPHeaders = [:]
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self._metrics = CopyOnWrite(metrics)
        self.trailers = trailers
    }

    /// The body bytes when they are in memory; `nil` for a download.
    public var data: Data? {
        if case .data(let data) = body { data } else { nil }
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// Where a `TransportResponse`'s body is: in memory, in the download file, or still arriving as a
/// `ResponseBodyStream`. The formatted payload a caller reads is `ServerResult.value` (`ServerValue`).
public enum ResponseBody: Sendable, Hashable {
    /// The bytes, in memory.
    case data(Data)
    /// A completed download at `url`, `bytes` long.
    case file(URL, bytes: Int64)
    /// The body as it arrives, read once: what `RequestPerforming.stream(_:)` returns. Plugins see the
    /// response head with this body; they must not read it (the caller does).
    case stream(ResponseBodyStream)
}

/// What a transport measured about one exchange; times are offsets from when the transport started it.
public struct TransportMetrics: Sendable, Hashable {
    /// The transport's name.
    public var transport: String
    /// When the connection was ready (TCP and TLS), if measured.
    public var connected: Duration?
    /// When the first response byte arrived, if measured.
    public var firstByte: Duration?
    /// When the exchange ended.
    public var total: Duration
    /// Request bytes sent (body).
    public var bytesSent: Int64
    /// Response bytes received (body, after decoding) in this exchange: for a resumed download, what the
    /// 206 carried, not the part already on disk.
    public var bytesReceived: Int64
    /// Whether an existing connection was reused, when the transport knows.
    public var reusedConnection: Bool?
    /// Redirects followed.
    public var redirects: Int
    /// The HTTP version that answered, such as `"1.1"` or `"2"`, when known.
    public var httpVersion: String?

    /// Creates what the transport measured of one attempt; every figure is optional or zero by default.
    public init(
        transport: String = "", connected: Duration? = nil, firstByte: Duration? = nil, total: Duration = .zero,
        bytesSent: Int64 = 0, bytesReceived: Int64 = 0, reusedConnection: Bool? = nil, redirects: Int = 0,
        httpVersion: String? = nil
    ) {
        self.transport = transport
        self.connected = connected
        self.firstByte = firstByte
        self.total = total
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.reusedConnection = reusedConnection
        self.redirects = redirects
        self.httpVersion = httpVersion
    }
}
