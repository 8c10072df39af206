public import Logging
public import ServerAPIKit
import Synchronization

/// Logs every call a `ServerAPIManager` makes through a swift-log `Logger`, with structured metadata and
/// the redaction rules of `LoggingPlugin`.
///
/// ```swift
/// let logger = Logger(label: "upstream")
/// let manager = ServerAPIManager(transport: CurlTransport(), plugins: [SwiftLogPlugin(logger: logger)])
/// ```
/// Each attempt logs `attempt started` (trace) and `attempt ended` or `attempt failed` (debug); each call
/// ends with one entry: `call succeeded` (info), `call failed` (notice when cancelled, warning for a 4xx or a
/// business error, error otherwise) or `call answered from cache` (debug). Entries carry `serverapi.request_id`,
/// `http.method`, `url` (redacted), `http.status`, `serverapi.duration_ms`, `serverapi.attempt` /
/// `serverapi.attempts`, `serverapi.transport` and `serverapi.error_kind`, as far as they are known.
public struct SwiftLogPlugin: ServerAPIPlugin {
    /// The levels entries are logged at.
    public struct Levels: Sendable, Hashable {
        /// An attempt handed to the transport.
        public var attemptStarted: Logger.Level
        /// An attempt's outcome (a response or a failure that may be retried).
        public var attemptEnded: Logger.Level
        /// A call that succeeded.
        public var succeeded: Logger.Level
        /// A call answered from the cache.
        public var cacheHit: Logger.Level
        /// A call that was cancelled.
        public var cancelled: Logger.Level
        /// A call that failed on the caller's side: a 4xx status, a business error, an invalid request.
        public var clientFailure: Logger.Level
        /// Any other failure: 5xx, timeouts, connection and TLS failures.
        public var failure: Logger.Level

        /// Creates levels; the defaults are those the type's documentation lists.
        public init(
            attemptStarted: Logger.Level = .trace, attemptEnded: Logger.Level = .debug,
            succeeded: Logger.Level = .info, cacheHit: Logger.Level = .debug, cancelled: Logger.Level = .notice,
            clientFailure: Logger.Level = .warning, failure: Logger.Level = .error
        ) {
            self.attemptStarted = attemptStarted
            self.attemptEnded = attemptEnded
            self.succeeded = succeeded
            self.cacheHit = cacheHit
            self.cancelled = cancelled
            self.clientFailure = clientFailure
            self.failure = failure
        }
    }

    private let logger: Logger
    private let levels: Levels
    // Redaction is LoggingPlugin's, unchanged: its rules for URLs and error messages.
    private let redactor: LoggingPlugin

    /// Creates the plugin.
    /// - Parameters:
    ///   - logger: The logger entries go to; its own metadata and level apply.
    ///   - levels: The level of each kind of entry.
    ///   - redactedQueryKeys: Query names (any case) whose values are replaced in URLs and error messages.
    public init(
        logger: Logger, levels: Levels = Levels(),
        redactedQueryKeys: Set<String> = LoggingPlugin.defaultRedactedQueryKeys
    ) {
        self.logger = logger
        self.levels = levels
        self.redactor = LoggingPlugin(redactedQueryKeys: redactedQueryKeys, logsHeaders: false, sink: { _ in })
    }

    public func willSend(_ request: TransportRequest, for api: ServerAPI) {
        logger.log(level: levels.attemptStarted, "attempt started", metadata: attemptMetadata(request, api))
    }

    public func didReceive(
        _ result: Result<TransportResponse, ServerAPIError>, for request: TransportRequest, api: ServerAPI
    ) {
        var metadata = attemptMetadata(request, api)
        switch result {
        case .success(let response):
            metadata["http.status"] = "\(response.status)"
            metadata["serverapi.duration_ms"] = "\(Self.milliseconds(response.metrics.total))"
            metadata["serverapi.transport"] = "\(response.metrics.transport)"
            logger.log(level: levels.attemptEnded, "attempt ended", metadata: metadata)
        case .failure(let error):
            metadata["serverapi.error_kind"] = "\(error.kind.rawValue)"
            metadata["error"] = "\(redactor.redact(error.message))"
            logger.log(level: levels.attemptEnded, "attempt failed", metadata: metadata)
        }
    }

    public func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
        var metadata: Logger.Metadata = [
            "serverapi.request_id": "\(api.id.rawValue)",
            "http.method": "\(api.method.rawValue)",
            "url": "\((try? api.resolvedURL()).map(redactor.redact) ?? "(no URL)")",
            "serverapi.duration_ms": "\(Self.milliseconds(metrics.duration))",
            "serverapi.attempts": "\(metrics.attempts)",
        ]
        if let transport = metrics.transportName { metadata["serverapi.transport"] = "\(transport)" }
        if let status = error?.status ?? metrics.status { metadata["http.status"] = "\(status)" }
        guard let error else {
            if metrics.attempts == 0 {
                logger.log(level: levels.cacheHit, "call answered from cache", metadata: metadata)
            } else {
                logger.log(level: levels.succeeded, "call succeeded", metadata: metadata)
            }
            return
        }
        metadata["serverapi.error_kind"] = "\(error.kind.rawValue)"
        metadata["error"] = "\(redactor.redact(error.message))"
        if let code = error.code { metadata["serverapi.business_code"] = "\(code)" }
        logger.log(level: level(for: error), "call failed", metadata: metadata)
    }

    /// The level of a call's failure.
    func level(for error: ServerAPIError) -> Logger.Level {
        switch error.kind {
        case .cancelled: return levels.cancelled
        case .business, .invalidRequest, .decoding, .cacheMiss, .throttled: return levels.clientFailure
        case .httpStatus where (400..<500).contains(error.status ?? 0): return levels.clientFailure
        default: return levels.failure
        }
    }

    private func attemptMetadata(_ request: TransportRequest, _ api: ServerAPI) -> Logger.Metadata {
        [
            "serverapi.request_id": "\(api.id.rawValue)",
            "http.method": "\(request.method.rawValue)",
            "url": "\(redactor.redact(request.url))",
            "serverapi.attempt": "\(request.attempt)",
        ]
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
