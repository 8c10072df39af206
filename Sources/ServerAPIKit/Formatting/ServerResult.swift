import Foundation

/// The outcome of a successful call: the formatted value and everything known about the exchange.
public struct ServerResult: Sendable, Hashable {
    /// The formatted payload.
    public var value: ServerValue
    /// The HTTP status.
    public var status: Int
    /// The response headers.
    public var headers: HTTPHeaders
    /// The URL that answered.
    public var url: URL
    /// The id of the call.
    public var requestID: RequestID
    /// Whether this came from the network or the cache.
    public var source: ResultSource
    /// Timings, sizes and attempts.
    public var metrics: RequestMetrics

    /// Creates a result.
    public init(
        value: ServerValue, status: Int, headers: HTTPHeaders, url: URL, requestID: RequestID,
        source: ResultSource = .network, metrics: RequestMetrics = RequestMetrics()
    ) {
        self.value = value
        self.status = status
        self.headers = headers
        self.url = url
        self.requestID = requestID
        self.source = source
        self.metrics = metrics
    }

    /// The bytes, for a `.data` result.
    public var data: Data? { if case .data(let data) = value { data } else { nil } }
    /// The text, for a `.string` result.
    public var string: String? { if case .string(let string) = value { string } else { nil } }
    /// The JSON value, for a `.json` result.
    public var json: JSONValue? { if case .json(let json) = value { json } else { nil } }
    /// The downloaded file, for a download.
    public var fileURL: URL? { if case .file(let url) = value { url } else { nil } }
    /// Whether the result came from the cache.
    public var isFromCache: Bool { if case .cache = source { true } else { false } }
}

/// Where a result came from.
public enum ResultSource: Sendable, Hashable {
    /// The network.
    case network
    /// The cache: when the entry was stored, and its age when it was returned.
    case cache(storedAt: Date, age: Duration)
}

/// What the manager measured about a call, across its attempts.
public struct RequestMetrics: Sendable, Hashable {
    /// The number of attempts made (1 when there was no retry; 0 when the cache answered).
    public var attempts: Int
    /// When the manager accepted the call.
    public var startedAt: Date
    /// How long the call took, retries and waits included.
    public var duration: Duration
    /// What the transport measured about the last attempt.
    public var transport: TransportMetrics?

    /// Creates metrics.
    public init(
        attempts: Int = 0, startedAt: Date = Date(), duration: Duration = .zero, transport: TransportMetrics? = nil
    ) {
        self.attempts = attempts
        self.startedAt = startedAt
        self.duration = duration
        self.transport = transport
    }
}
