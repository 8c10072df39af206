#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The outcome of a successful call: the formatted value and everything known about the exchange.
///
/// `send(_:)` returns it once the whole body is in; its `value` is a `ServerValue` (JSON, text, bytes or
/// the download file). For a body read as it arrives, `stream(_:)` returns a `StreamedResponse` instead;
/// the transport's raw response, which plugins see, is a `TransportResponse`.
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
    /// The trailer fields that followed the body (RFC 9110 §6.5); empty when there were none (and for a
    /// result from the cache, which keeps no trailers).
    public var trailers: HTTPHeaders

    /// Creates a result; formatters and tests make them, the manager returns them.
    public init(
        value: ServerValue, status: Int, headers: HTTPHeaders, url: URL, requestID: RequestID,
        source: ResultSource = .network, metrics: RequestMetrics = RequestMetrics(), trailers: HTTPHeaders = [:]
    ) {
        self.trailers = trailers
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
    /// From the network: the transport answered this call.
    case network
    /// The cache: when the entry was stored, and its age when it was returned.
    case cache(storedAt: Date, age: Duration)
}

/// What the manager measured about a call, across its attempts.
///
/// Wall-clock instants say when the call was queued, started and finished; the transport's own
/// measurements of the last attempt (connected, first byte, bytes, reused connection, its name)
/// are in `transport`, and the properties below the type turn them into instants.
public struct RequestMetrics: Sendable, Hashable {
    /// The number of attempts made (1 when there was no retry; 0 when the cache answered).
    public var attempts: Int
    /// When the manager accepted the call.
    public var queuedAt: Date
    /// When the first attempt was handed to the transport (`queuedAt` until then, and for a cached result).
    public var startedAt: Date
    /// When the last attempt was handed to the transport; `nil` when none was.
    public var attemptStartedAt: Date?
    /// How long the call took, retries and waits included.
    public var duration: Duration
    /// What the transport measured about the last attempt.
    public var transport: TransportMetrics? {
        get { _transport?.value }
        set { _transport = newValue.map { CopyOnWrite($0) } }
    }
    // No box while nothing was measured; a response's figures are its own box, shared (`takeTransport(of:)`).
    private var _transport: CopyOnWrite<TransportMetrics>?
    /// The HTTP status the call ended with: the status of the result the caller gets (a cached entry's, or
    /// the stored response's after a `304`), or of the last attempt's response when the call failed after
    /// one arrived (`httpStatus`, a streamed body that broke); `nil` when the last attempt got no response
    /// (cannot connect, a timeout or a cancellation before the head). A plugin's `didComplete` reads it
    /// without remembering what `didReceive` saw.
    public var status: Int?
    /// What the resilience policies did: hedged, retry refused by the budget, waited for a slot, breaker state.
    public var resilience: ResilienceMetrics {
        get { _resilience.value }
        _modify { yield &_resilience.value }
    }
    private var _resilience = Self.noResilience
    // The default's shared box: metrics are made for every call, and most keep it as it is.
    private static let noResilience = CopyOnWrite(ResilienceMetrics())
    /// When the manager had the response (or the failure) in hand; see `finishedAt`.
    var endedAt: Date?
    /// Whether `transport` is set, read without copying it.
    var hasTransport: Bool { _transport != nil }

    /// Sets `transport` to a response's figures, sharing the response's box rather than copying them into one.
    mutating func takeTransport(of response: TransportResponse) {
        _transport = response.metricsStorage
    }

    /// Creates the measures of one call: attempts and times on the manager's clock.
    /// - Parameters:
    ///   - attempts: The number of attempts.
    ///   - startedAt: When the first attempt started (and, unless `queuedAt` is given, when the call was queued).
    ///   - duration: How long the call took.
    ///   - transport: The transport's measurements of the last attempt.
    ///   - queuedAt: When the manager accepted the call; `startedAt` when `nil`.
    ///   - attemptStartedAt: When the last attempt started.
    ///   - status: The HTTP status the call ended with.
    public init(
        attempts: Int = 0, startedAt: Date = Date(), duration: Duration = .zero, transport: TransportMetrics? = nil,
        queuedAt: Date? = nil, attemptStartedAt: Date? = nil, status: Int? = nil
    ) {
        self.attempts = attempts
        self.queuedAt = queuedAt ?? startedAt
        self.startedAt = startedAt
        self.attemptStartedAt = attemptStartedAt
        self.duration = duration
        self.transport = transport
        self.status = status
    }
}

// The timeline of a call as instants, and the transport's figures for its last attempt.
extension RequestMetrics {
    /// When the manager had the response (or the failure) in hand; `queuedAt` plus `duration`
    /// for metrics made without a manager.
    public var finishedAt: Date { endedAt ?? queuedAt.addingTimeInterval(duration.seconds) }

    /// How long the call waited between being accepted and its first attempt (plugins' `prepare`
    /// included); zero for a result that came from the cache.
    public var queueTime: Duration { .seconds(max(0, startedAt.timeIntervalSince(queuedAt))) }

    /// When the last attempt's connection was ready, when the transport measured it.
    public var connectedAt: Date? { instant(after: transport?.connected) }

    /// When the last attempt's first response byte arrived, when the transport measured it.
    public var firstByteAt: Date? { instant(after: transport?.firstByte) }

    /// Body bytes the last attempt sent.
    public var bytesSent: Int64 { transport?.bytesSent ?? 0 }

    /// Body bytes the last attempt received.
    public var bytesReceived: Int64 { transport?.bytesReceived ?? 0 }

    /// Whether the last attempt reused a connection, when the transport knows.
    public var reusedConnection: Bool? { transport?.reusedConnection }

    /// The name of the transport that made the last attempt (`"cache"` for a cached result), when one did.
    public var transportName: String? { transport.map(\.transport) }

    /// Records that an attempt is being handed to the transport now; what the transport measured
    /// about an earlier attempt no longer describes the last one.
    mutating func markAttemptStart(at now: Date = Date()) {
        if attemptStartedAt == nil { startedAt = now }
        attemptStartedAt = now
        transport = nil
        status = nil
    }

    private func instant(after offset: Duration?) -> Date? {
        guard let offset, let attemptStartedAt else { return nil }
        return attemptStartedAt.addingTimeInterval(offset.seconds)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    package var seconds: Double {
        // `components` divides the 128-bit count of attoseconds by 10^18; a duration shorter than a second, such
        // as most that stamp a call's metrics, fits in the low word, and its one division gives the same `Double`.
        let low = Int64(bitPattern: _low)
        if _high == low >> 63, low.magnitude < 1_000_000_000_000_000_000 { return Double(low) / 1e18 }
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
