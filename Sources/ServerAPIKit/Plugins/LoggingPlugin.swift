#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Logs the start and end of every attempt and the end of every call — method, URL, status,
/// duration, bytes, attempt, network or cache — with credentials redacted.
///
/// ```swift
/// let logging = LoggingPlugin()                                      // to standard error
/// let quiet = LoggingPlugin(redactedQueryKeys: LoggingPlugin.defaultRedactedQueryKeys.union(["sid"])) {
///     logger.debug("\($0)")
/// }
/// ```
/// Lines look like:
/// ```
/// → GET https://api.example.com/me?token=<redacted> #12 attempt 1
/// ← 200 GET https://api.example.com/me?token=<redacted> #12 attempt 1: 38 ms, sent 0 B, received 1204 B via curl
/// ✓ GET https://api.example.com/me?token=<redacted> #12 from network: 40 ms, 1 attempt
/// ```
/// The values of `redactedHeaders` (request and response) and of `redactedQueryKeys` (in URLs
/// and in error messages), and any password in a URL, are replaced by `<redacted>`.
public struct LoggingPlugin: ServerAPIPlugin {
    /// Headers whose values are never logged by default.
    public static let defaultRedactedHeaders: Set<String> = [
        "authorization", "cookie", "set-cookie", "proxy-authorization", "x-api-key",
    ]
    /// Query keys whose values are never logged by default (the same ones `ServerAPIError` descriptions redact).
    public static let defaultRedactedQueryKeys: Set<String> = SecretRedaction.queryKeys
    /// What replaces a redacted value.
    public static let redacted = "<redacted>"

    private let sink: @Sendable (String) -> Void
    private let redactedHeaders: Set<String>
    private let redactedQueryKeys: Set<String>
    private let logsHeaders: Bool

    /// Creates a plugin that logs each call and its outcome, with credentials redacted.
    /// - Parameters:
    ///   - redactedHeaders: Header names (any case) whose values are replaced.
    ///   - redactedQueryKeys: Query names (any case) whose values are replaced.
    ///   - logsHeaders: Whether request and response headers are logged under the start and end lines.
    ///   - sink: Receives each entry (one line, or several with headers); standard error by default.
    public init(
        redactedHeaders: Set<String> = LoggingPlugin.defaultRedactedHeaders,
        redactedQueryKeys: Set<String> = LoggingPlugin.defaultRedactedQueryKeys,
        logsHeaders: Bool = true,
        sink: @escaping @Sendable (String) -> Void = LoggingPlugin.standardError
    ) {
        self.sink = sink
        self.redactedHeaders = Set(redactedHeaders.map { $0.lowercased() })
        self.redactedQueryKeys = Set(redactedQueryKeys.map { $0.lowercased() })
        self.logsHeaders = logsHeaders
    }

    /// Writes an entry and a line break to standard error.
    public static let standardError: @Sendable (String) -> Void = { entry in
        // write(2) on descriptor 2, as FileHandle.standardError did (FoundationEssentials has no FileHandle).
        var line = Array((entry + "\n").utf8)[...]
        while !line.isEmpty {
            let written = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            guard written > 0 || (written < 0 && errno == EINTR) else { return }
            line = line.dropFirst(max(written, 0))
        }
    }

    public func willSend(_ request: TransportRequest, for api: ServerAPI) {
        var entry = "→ \(request.method.rawValue) \(redact(request.url)) \(api.id) attempt \(request.attempt)"
        if logsHeaders { entry += headerLines(request.headers) }
        sink(entry)
    }

    public func didReceive(
        _ result: Result<TransportResponse, ServerAPIError>, for request: TransportRequest, api: ServerAPI
    ) {
        let call = "\(request.method.rawValue) \(redact(request.url)) \(api.id) attempt \(request.attempt)"
        switch result {
        case .success(let response):
            let metrics = response.metrics
            var entry = "← \(response.status) \(call): \(Self.format(metrics.total)), sent \(metrics.bytesSent) B, "
            if case .stream = response.body {
                // The head of a streamed call: the body is still to come, and `didComplete` ends the call.
                entry += "streaming the body via \(metrics.transport)"
            } else {
                entry += "received \(metrics.bytesReceived) B via \(metrics.transport)"
            }
            if logsHeaders { entry += headerLines(response.headers) }
            sink(entry)
        case .failure(let error):
            sink("← failed \(call): \(describe(error))")
        }
    }

    public func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
        let url = (try? api.resolvedURL()).map(redact) ?? "(no URL)"
        let call = "\(api.method.rawValue) \(url) \(api.id)"
        let attempts = metrics.attempts == 1 ? "1 attempt" : "\(metrics.attempts) attempts"
        if let error {
            sink("✗ \(call) failed: \(Self.format(metrics.duration)), \(attempts): \(describe(error))")
        } else if metrics.attempts == 0 {
            sink("✓ \(call) from cache: \(Self.format(metrics.duration))")
        } else {
            let received = metrics.transport.map { ", received \($0.bytesReceived) B" } ?? ""
            sink("✓ \(call) from network: \(Self.format(metrics.duration)), \(attempts)\(received)")
        }
    }

    /// A URL with its password and the values of redacted query keys replaced.
    public func redact(_ url: URL) -> String {
        SecretRedaction.redact(url, queryKeys: redactedQueryKeys, replacement: Self.redacted)
    }

    /// Text (an error message) with the values of redacted query keys replaced wherever `key=value` appears,
    /// and the password of any URL in it.
    public func redact(_ text: String) -> String {
        SecretRedaction.redact(text: text, queryKeys: redactedQueryKeys, replacement: Self.redacted)
    }

    private func headerLines(_ headers: HTTPHeaders) -> String {
        headers.map { field in
            let value = redactedHeaders.contains(field.name.lowercased()) ? Self.redacted : field.value
            return "\n    \(field.name): \(value)"
        }.joined()
    }

    private func describe(_ error: ServerAPIError) -> String {
        var text = "\(error.kind): \(redact(error.message))"
        if let status = error.status, error.kind != .httpStatus { text += " (status \(status))" }
        if let code = error.code { text += " (code \(code))" }
        return text
    }

    private static func format(_ duration: Duration) -> String {
        let milliseconds = duration.seconds * 1000
        return milliseconds < 10 ? String(cFormat: "%.1f ms", milliseconds) : String(cFormat: "%.0f ms", milliseconds)
    }
}
