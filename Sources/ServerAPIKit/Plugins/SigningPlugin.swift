#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Signs each request as it will be sent: a closure sees the exact URL (query included), method,
/// headers and body bytes, and returns headers to add (a signature, a timestamp, a digest).
///
/// ```swift
/// let signing = SigningPlugin { request in
///     let timestamp = String(Int(Date().timeIntervalSince1970))
///     let canonical = [request.method.rawValue, request.pathAndQuery, timestamp].joined(separator: "\n")
///     return [
///         "X-Timestamp": timestamp,
///         "X-Content-SHA256": try request.bodyDigest(),
///         "X-Signature": hmacSHA256Hex(canonical, key: secret),   // your HMAC (swift-crypto's HMAC<SHA256>)
///     ]
/// }
/// let manager = ServerAPIManager(transport: transport, plugins: [common, signing])   // signing last
/// ```
/// The closure runs on every attempt, so a retry gets a fresh timestamp.
/// - Important: Put this plugin after every plugin that changes the request, so nothing changes
///   after the signature is computed; the headers it returns replace fields of the same names.
public struct SigningPlugin: ServerAPIPlugin {
    /// The request as it will be sent.
    public struct Request: Sendable {
        /// The HTTP method, as sent.
        public var method: HTTPMethod
        /// The exact URL, with the query percent-encoded as it is sent.
        public var url: URL
        /// The headers so far (the call's, the manager's defaults, earlier plugins').
        public var headers: HTTPHeaders
        /// The body as the transport will send it.
        public var body: BodySource
        /// The attempt number, from 1.
        public var attempt: Int
        /// The call the request was made from, for signing rules per endpoint.
        public var api: ServerAPI

        /// The percent-encoded query exactly as sent, without `?`; empty when there is none.
        public var query: String { URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? "" }

        /// The percent-encoded path and query as they appear in the request line (`/v1/items?page=2`).
        public var pathAndQuery: String {
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            let path = components?.percentEncodedPath ?? url.path
            let query = components?.percentEncodedQuery
            return (path.isEmpty ? "/" : path) + (query.map { "?\($0)" } ?? "")
        }

        /// The body bytes when the body is in memory; `nil` when it streams from a file (use `bodyDigest()`).
        public var bodyBytes: Data? { body.inMemoryBytes }

        /// The lower-case hex SHA-256 of the exact body bytes (of the empty string for no body).
        ///
        /// A body streamed from a file is read once here, 64 KB at a time, and hashed; the
        /// transport reads it again to send it, so the file must not change in between.
        /// - Throws: `invalidRequest` or `fileSystem` when a body file cannot be read.
        public func bodyDigest() throws(ServerAPIError) -> String {
            var hash = SHA256()
            if let bytes = body.inMemoryBytes {
                hash.update(bytes)
            } else {
                let reader = try body.makeReader()
                while true {
                    let chunk = try reader.read(maxLength: 64 * 1024)
                    if chunk.isEmpty { break }
                    hash.update(chunk)
                }
            }
            return hash.finalize().map { String(cFormat: "%02x", $0) }.joined()
        }
    }

    private let sign: @Sendable (Request) async throws -> HTTPHeaders

    /// Creates a plugin that adds the headers `sign` returns to each attempt, computed over the bytes that are sent.
    /// - Parameter sign: Returns the headers to add for a request; a thrown error fails the call.
    public init(sign: @escaping @Sendable (Request) async throws -> HTTPHeaders) {
        self.sign = sign
    }

    public func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
        let headers = try await sign(
            Request(
                method: request.method, url: request.url, headers: request.headers, body: request.body,
                attempt: request.attempt, api: api))
        try headers.validate()
        var request = request
        request.headers.merge(headers)
        return request
    }
}
