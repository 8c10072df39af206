#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one error every part of ServerAPIKit throws: a kind, what happened, and the context.
///
/// Switch over `kind` (new kinds may be added without breaking you) or use the `is…` helpers.
public struct ServerAPIError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The kind's name, such as "timed out".
        public var description: String { rawValue }

        /// The call was cancelled (by its task, by id, tag, first, last or all, or by its owner).
        public static let cancelled = Kind(rawValue: "cancelled")
        /// The call took longer than its timeout.
        public static let timedOut = Kind(rawValue: "timed out")
        /// No connection could be made: refused, unreachable, DNS failure.
        public static let cannotConnect = Kind(rawValue: "cannot connect")
        /// The connection broke or the server sent something that is not valid HTTP.
        public static let network = Kind(rawValue: "network")
        /// TLS failed: untrusted certificate, host name mismatch, pin mismatch, handshake error.
        public static let tls = Kind(rawValue: "TLS")
        /// The server answered with an HTTP status the call does not accept.
        public static let httpStatus = Kind(rawValue: "HTTP status")
        /// The business envelope carried a non-success code.
        public static let business = Kind(rawValue: "business")
        /// The response could not be decoded as asked (bad JSON, missing key path, wrong type).
        public static let decoding = Kind(rawValue: "decoding")
        /// The call cannot be sent as described (bad URL, header, body).
        public static let invalidRequest = Kind(rawValue: "invalid request")
        /// The response body is larger than the call allows.
        public static let responseTooLarge = Kind(rawValue: "response too large")
        /// More redirects than allowed, or a redirect loop.
        public static let tooManyRedirects = Kind(rawValue: "too many redirects")
        /// Reading or writing a local file failed (disk full, permissions).
        public static let fileSystem = Kind(rawValue: "file system")
        /// The cache had nothing for a call that may only be answered from the cache.
        public static let cacheMiss = Kind(rawValue: "cache miss")
        /// The call was not sent because the same call was sent too recently.
        public static let throttled = Kind(rawValue: "throttled")
        /// The transport, or the library it loaded, cannot do what the call asks (a WebSocket on a
        /// libcurl without them, say).
        public static let unsupported = Kind(rawValue: "unsupported")
        /// The manager (`ServerAPIManager.shutdown(gracePeriod:)`) or the transport is shutting down, or has shut
        /// down: the call was refused before anything was sent.
        ///
        /// A kind of its own rather than `cancelled`: nothing cancelled this call, it never started, and it must not
        /// be retried on the same manager (a call in flight that outlives the grace period is `cancelled`). Not
        /// `invalidRequest` either: the call is fine, the client is going away.
        public static let shuttingDown = Kind(rawValue: "shutting down")
    }

    /// What went wrong.
    public var kind: Kind {
        get { fields.value.kind }
        _modify { yield &fields.value.kind }
    }
    /// A sentence that says what happened.
    public var message: String {
        get { fields.value.message }
        _modify { yield &fields.value.message }
    }
    /// The id of the call, when known.
    public var requestID: RequestID? {
        get { fields.value.requestID }
        _modify { yield &fields.value.requestID }
    }
    /// The URL of the call, when known.
    public var url: URL? {
        get { fields.value.url }
        _modify { yield &fields.value.url }
    }
    /// The HTTP status, when there was a response.
    public var status: Int? {
        get { fields.value.status }
        _modify { yield &fields.value.status }
    }
    /// The start of the response body (at most 512 bytes, as text), when there was one.
    public var bodyExcerpt: String? {
        get { fields.value.bodyExcerpt }
        _modify { yield &fields.value.bodyExcerpt }
    }
    /// The business code, for `business` errors (as text: numbers and strings alike).
    public var code: String? {
        get { fields.value.code }
        _modify { yield &fields.value.code }
    }
    /// The key path that failed, for `decoding` errors.
    public var keyPath: String? {
        get { fields.value.keyPath }
        _modify { yield &fields.value.keyPath }
    }
    /// The error underneath (a Foundation, libcurl or decoding error), when there is one.
    public var underlying: (any Error)? {
        get { fields.value.underlying }
        _modify { yield &fields.value.underlying }
    }
    /// What the manager measured about the call up to the failure; `nil` when the call was
    /// rejected before it started (an invalid request).
    public var metrics: RequestMetrics? {
        get { fields.value.metrics }
        _modify { yield &fields.value.metrics }
    }
    /// Whether the caller should handle this failure quietly instead of showing it (a business
    /// code marked silent in `BusinessRules`, such as "already signed in").
    public var isSilent: Bool {
        get { fields.value.isSilent }
        _modify { yield &fields.value.isSilent }
    }
    /// The message to show a user, from the business rules' table or closure; `nil` when none applies.
    public var userMessage: String? {
        get { fields.value.userMessage }
        _modify { yield &fields.value.userMessage }
    }
    /// Which part of TLS failed, for `tls` errors, when the transport can tell (pin mismatch, untrusted
    /// certificate, host name mismatch, client certificate rejected, …); `nil` otherwise.
    public var tlsFailure: TLSFailure? {
        get { fields.value.tlsFailure }
        _modify { yield &fields.value.tlsFailure }
    }

    /// The error's fields, in one copy-on-write box: an error is one word wherever it is held, and the pipeline's
    /// async frames hold one in every step that can catch or throw one while a call is in flight.
    private var fields: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        var kind: Kind
        var message: String
        var requestID: RequestID?
        var url: URL?
        var status: Int?
        var bodyExcerpt: String?
        var code: String?
        var keyPath: String?
        var underlying: (any Error)?
        var metrics: RequestMetrics?
        var isSilent = false
        var userMessage: String?
        var tlsFailure: TLSFailure?
    }

    /// Creates an error of `kind` with a message that says what went wrong; transports and plugins throw these.
    public init(
        _ kind: Kind, _ message: String, requestID: RequestID? = nil, url: URL? = nil, status: Int? = nil,
        bodyExcerpt: String? = nil, code: String? = nil, keyPath: String? = nil, underlying: (any Error)? = nil
    ) {
        fields = CopyOnWrite(
            Fields(
                kind: kind, message: message, requestID: requestID, url: url, status: status, bodyExcerpt: bodyExcerpt,
                code: code, keyPath: keyPath, underlying: underlying))
    }

    /// A business failure: the envelope's code was not a success code.
    public static func business(code: String, message: String) -> ServerAPIError {
        ServerAPIError(.business, message, code: code)
    }

    /// A cancellation.
    public static func cancelled(_ message: String = "the request was cancelled") -> ServerAPIError {
        ServerAPIError(.cancelled, message)
    }

    /// A status error with an excerpt of the body.
    public static func httpStatus(_ status: Int, body: Data? = nil, url: URL? = nil) -> ServerAPIError {
        ServerAPIError(
            .httpStatus, "the server answered \(status) \(HTTPStatus.reason(status))", url: url, status: status,
            bodyExcerpt: body.flatMap(excerpt))
    }

    /// Whether this is a cancellation.
    public var isCancelled: Bool { kind == .cancelled }
    /// Whether this is a timeout.
    public var isTimeout: Bool { kind == .timedOut }

    /// Returns a copy with the call's context filled in where it is missing.
    public func with(requestID: RequestID?, url: URL?) -> ServerAPIError {
        var copy = self
        if copy.requestID == nil { copy.requestID = requestID }
        if copy.url == nil { copy.url = url }
        return copy
    }

    /// Wraps any error as a `ServerAPIError`; `CancellationError` becomes `cancelled`.
    public static func wrap(_ error: any Error) -> ServerAPIError {
        if let error = error as? ServerAPIError { return error }
        if error is CancellationError { return .cancelled() }
        if error is DecodingError {
            return ServerAPIError(.decoding, "the response could not be decoded: \(error)", underlying: error)
        }
        return ServerAPIError(.network, "\(error)", underlying: error)
    }

    /// Up to 512 bytes of a body, as text (invalid UTF-8 repaired).
    package static func excerpt(_ data: Data) -> String? {
        guard !data.isEmpty else { return nil }
        let prefix = data.prefix(512)
        var text = String(decoding: prefix, as: UTF8.self)
        if data.count > 512 { text += "…" }
        return text
    }

    /// "kind: message", with the business code, the key path and the URL when they apply: one line for logs.
    ///
    /// A URL's password, and the values of the query keys `LoggingPlugin` redacts by default (`token`,
    /// `password`, `api_key`, …), are replaced by `<redacted>`, in the URL and in the message: a description
    /// ends up in logs and on screens. `url` itself keeps the URL as it was.
    public var description: String {
        var text = "\(kind): \(SecretRedaction.redact(text: message))"
        if let code, kind == .business { text += " (code \(code))" }
        if let keyPath, kind == .decoding { text += " at key path \"\(keyPath)\"" }
        if let url { text += " [\(SecretRedaction.redact(url))]" }
        return text
    }

    /// The description, then the request id, the body excerpt and the underlying error, redacted as the
    /// description is.
    public var debugDescription: String {
        var text = description
        if let requestID { text += " request \(requestID)" }
        if let bodyExcerpt { text += "\nbody: \(bodyExcerpt)" }
        if let underlying { text += "\nunderlying: \(SecretRedaction.redact(text: String(reflecting: underlying)))" }
        return text
    }

}

extension ServerAPIError: LocalizedError {
    /// The user-facing message from the business rules when there is one, else the description.
    public var errorDescription: String? { userMessage ?? description }

    /// What a user could try, for the kinds where there is something to try; `nil` otherwise.
    public var recoverySuggestion: String? {
        switch kind {
        case .timedOut: "Check the network or raise the call's timeout."
        case .cannotConnect: "Check that the host is right and reachable."
        case .tls:
            switch tlsFailure {
            case .pinMismatch?:
                "The server's key is not a pinned one: update the pins if it rotated its key, "
                    + "else the connection may be intercepted."
            case .hostnameMismatch?: "Call the host name the server's certificate was issued for."
            case .protocolTooOld?:
                "Upgrade the server to TLS 1.2 or later; for a device that cannot be, allow its host in "
                    + "TLSOptions.legacyProtocolHosts."
            case .clientCertificateRejected?: "Present a client certificate signed by a CA the server trusts."
            case .clientCertificateProblem?: "Check the client certificate and key files, and the key's passphrase."
            case .notSupported?: "Use a transport that supports these TLS options, such as CurlTransport."
            case .untrustedCertificate?, .expiredCertificate?, nil:
                "Check the server's certificate, or trust its CA explicitly for this host."
            default:
                "The server refused the handshake: it may require a client certificate (TLSOptions.clientCertificate), "
                    + "or share no protocol version or cipher with this client."
            }
        case .decoding: "Check that the response has the shape and key path the call expects."
        case .invalidRequest: "Fix the call's URL, headers or body."
        case .responseTooLarge where isDecompressionRatioExceeded:
            "Raise the call's maxDecompressionRatio (or set it to nil) if the server's bodies are legitimately that "
                + "compressible; a larger maximum response size does not lift it."
        case .responseTooLarge: "Raise the call's maximum response size, or download to a file."
        case .fileSystem: "Check free disk space and permissions."
        case .unsupported: "Use a transport, or a version of its library, that supports what the call asks."
        default: nil
        }
    }
}

/// Reason phrases for status codes.
package enum HTTPStatus {
    /// The standard reason phrase, or an empty string.
    package static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 416: "Range Not Satisfiable"
        case 418: "I'm a teapot"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
