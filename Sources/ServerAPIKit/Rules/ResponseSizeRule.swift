/// The response-size rules every transport applies: the body length a response head announces, and
/// `TransportRequest.maxResponseSize` checked against it and against the bytes that arrive.
///
/// The limit is on the body as the caller gets it, after content decoding: a transport calls
/// `check(announced:…)` once per final head, and `check(received:…)` as decoded body bytes arrive.
///
/// A body held in memory is bounded by default: a request that sets no `maxResponseSize` of its own gets
/// `defaultMemoryLimit` (64 MiB) when its whole body is collected in memory (`limit(for:streamed:)`), so
/// that a server that sends bytes forever ends the call with `responseTooLarge` instead of taking the
/// process's memory. A download to disk and a streamed body have no default limit: the disk, and the
/// stream's own buffer with its backpressure, bound them. `Int64.max` asks for no limit at all.
@usableFromInline package enum ResponseSizeRule {
    /// The largest body a request without a `maxResponseSize` of its own may hold in memory: 64 MiB
    /// (67,108,864 bytes). `ServerAPIManager.Configuration.maxResponseSize` starts from it.
    @usableFromInline package static let defaultMemoryLimit: Int64 = 64 << 20

    /// The limit that applies to a request's body: its own `maxResponseSize`, else `defaultMemoryLimit`
    /// when the whole body is kept in memory, else none (a download, or a streamed body).
    /// - Parameters:
    ///   - request: The request.
    ///   - streamed: Whether the body is handed over as a stream (`RequestPerforming.stream`).
    /// - Returns: The limit in bytes, or `nil` for none.
    @inlinable
    package static func limit(for request: TransportRequest, streamed: Bool) -> Int64? {
        if let own = request.maxResponseSize { return own }
        return streamed || request.download != nil ? nil : defaultMemoryLimit
    }

    /// The `Content-Length` a response announces (RFC 9110 §8.6), parsed strictly.
    ///
    /// Only digits are accepted, with optional whitespace around them. Repeated fields, or a
    /// comma-separated list (as URLSession joins repeated fields), count when every value is the same.
    /// - Parameter headers: The response's headers.
    /// - Returns: The length, or `nil` when there is none, it is malformed, or the values disagree.
    package static func contentLength(of headers: HTTPHeaders) -> Int64? {
        var length: Int64?
        let agrees = headers.everyValue(for: "Content-Length") { field in
            HTTPSyntax.forEachElement(of: field) { element in
                guard let value = HTTPSyntax.decimal(element.utf8), length == nil || length == value else {
                    return false
                }
                length = value
                return true
            }
        }
        return agrees ? length : nil
    }

    /// The length of the body as the caller receives it, when the head says so: the `Content-Length`,
    /// unless a content coding (gzip, br, …) makes it the length of the encoded bytes, or the body is
    /// framed by `Transfer-Encoding`, which overrides `Content-Length` (RFC 9112 §6.3).
    /// - Parameter headers: The response's headers.
    /// - Returns: The decoded length, or `nil` when it is not known in advance.
    package static func decodedLength(of headers: HTTPHeaders) -> Int64? {
        if headers.contains("Transfer-Encoding") { return nil }
        guard headers.everyValue(for: "Content-Encoding", satisfies: isIdentity) else { return nil }
        return contentLength(of: headers)
    }

    /// Checks the length a final response head announces against the request's `maxResponseSize`.
    ///
    /// A response without a body (to a HEAD, or 1xx, 204 or 304) is never too large: its
    /// `Content-Length` describes a body that is not sent.
    /// - Parameters:
    ///   - announced: The decoded length the head announces (see `decodedLength(of:)`).
    ///   - status: The response's status.
    ///   - method: The method of the request it answers.
    ///   - limit: The request's `maxResponseSize`.
    /// - Returns: `responseTooLarge` when the announced body exceeds the limit, else `nil`.
    package static func check(announced: Int64?, status: Int, method: HTTPMethod, limit: Int64?) -> ServerAPIError? {
        guard let limit, let announced, announced > limit, carriesBody(status: status, method: method) else {
            return nil
        }
        return .responseTooLarge(limit: limit, announced: announced, status: status)
    }

    /// Checks the decoded body bytes received so far against the request's `maxResponseSize`.
    /// - Parameters:
    ///   - received: Decoded body bytes of the current response so far.
    ///   - status: The response's status.
    ///   - limit: The request's `maxResponseSize`.
    /// - Returns: `responseTooLarge` once `received` exceeds the limit, else `nil`.
    @inlinable
    package static func check(received: Int64, status: Int, limit: Int64?) -> ServerAPIError? {
        // Runs for every piece of every body: two comparisons, the error only built when it fails.
        guard let limit, received > limit else { return nil }
        return .responseTooLarge(limit: limit, status: status)
    }

    /// Whether a response to `method` with `status` has a body (RFC 9110 §6.4.1).
    /// - Parameters:
    ///   - status: The response's status.
    ///   - method: The request's method.
    /// - Returns: `false` for a response to HEAD, and for 1xx, 204 and 304.
    package static func carriesBody(status: Int, method: HTTPMethod) -> Bool {
        method != .head && status >= 200 && status != 204 && status != 304
    }

    /// Whether a `Content-Encoding` value leaves the bytes as they are: `identity`, or nothing, in any case.
    private static func isIdentity(_ value: String) -> Bool {
        HTTPSyntax.forEachElement(of: value) { coding in
            coding.isEmpty || HTTPSyntax.equals(coding, lowercased: "identity")
        }
    }
}
