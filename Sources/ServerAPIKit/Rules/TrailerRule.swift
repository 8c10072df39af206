/// The rules for trailer fields, the fields that follow a body (RFC 9110 §6.5), for every transport.
///
/// A trailer section is kept apart from the head: `StreamedResponse.trailers`, `TransportResponse.trailers`
/// and `ServerResult.trailers`, never merged into the headers. Fields that control framing, routing,
/// authentication, caching or how the body is read cannot be trailers: received, they are dropped;
/// sent, they make the call fail. A received section larger than `maximumSize` bytes or `maximumCount`
/// fields fails the call with `responseTooLarge`.
package enum TrailerRule {
    /// The most bytes of names and values a received trailer section may have: 64 KiB.
    package static let maximumSize = 64 << 10
    /// The most fields a received trailer section may have.
    package static let maximumCount = 100

    /// Field names (lower case) that a trailer section must not carry (RFC 9110 §6.5.1): framing, routing,
    /// request modifiers, authentication, response control, and what says how to read the content.
    static let forbiddenNames: Set<String> = [
        "transfer-encoding", "content-length", "host", "trailer", "te", "connection", "keep-alive", "upgrade",
        "cache-control", "expect", "max-forwards", "pragma", "range", "if-match", "if-none-match",
        "if-modified-since", "if-unmodified-since", "if-range", "authorization", "proxy-authorization",
        "www-authenticate", "proxy-authenticate", "authentication-info", "proxy-authentication-info",
        "cookie", "set-cookie", "age", "expires", "date", "location", "retry-after", "vary", "warning",
        "content-encoding", "content-type", "content-range",
    ]

    /// Whether a field may be a trailer.
    /// - Parameter name: The field name, in any case.
    package static func allowsTrailer(named name: String) -> Bool {
        !forbiddenNames.contains(name.lowercased())
    }

    /// Whether a trailer section being received has grown past the limits: a transport that collects
    /// trailers as they arrive stops there, with `tooLarge`.
    /// - Parameters:
    ///   - count: Its fields so far.
    ///   - size: The bytes of their names and values so far.
    package static func exceedsLimits(count: Int, size: Int) -> Bool { count > maximumCount || size > maximumSize }

    /// The error for a received trailer section past the limits.
    package static var tooLarge: ServerAPIError {
        ServerAPIError(
            .responseTooLarge,
            "the response's trailer section is larger than \(maximumCount) fields or \(maximumSize) bytes")
    }

    /// A received trailer section as the caller sees it: forbidden fields dropped.
    /// - Parameter fields: The fields after the body, in order.
    /// - Returns: The fields the caller gets.
    /// - Throws: `responseTooLarge` when the section is past the limits.
    package static func received(_ fields: HTTPHeaders) throws(ServerAPIError) -> HTTPHeaders {
        let size = fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        guard !exceedsLimits(count: fields.count, size: size) else { throw tooLarge }
        return HTTPHeaders(fields.filter { allowsTrailer(named: $0.name) })
    }

    /// Checks a trailer section before it is sent.
    /// - Parameter fields: The fields to send after the body.
    /// - Returns: The fields, unchanged.
    /// - Throws: `invalidRequest` naming a field that is not valid, or that cannot be a trailer.
    package static func outgoing(_ fields: HTTPHeaders) throws(ServerAPIError) -> HTTPHeaders {
        try fields.validate()
        if let field = fields.first(where: { !allowsTrailer(named: $0.name) }) {
            throw ServerAPIError(.invalidRequest, "\(field.name) cannot be sent as a trailer field (RFC 9110 §6.5.1)")
        }
        return fields
    }
}
