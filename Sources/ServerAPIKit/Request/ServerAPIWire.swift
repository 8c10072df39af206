#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ServerAPI {
    /// What a call puts on the wire: where it goes (host and path, or a full URL), its method, query,
    /// headers, body and the credentials a challenge is answered with.
    ///
    /// The same `Wire` produces the same bytes with every transport. `ServerAPI`'s properties of the same
    /// names (`host`, `method`, `headers`, …) are its public spelling; the group is how a call stores them
    /// (one copy-on-write box per group, so that copying a call copies four references).
    package struct Wire: Sendable, Hashable {
        /// The scheme, host and base path, such as `https://api.example.com/v1` (`https` when no scheme is given).
        package var host: String
        /// The path below `host`; slashes between the two are joined correctly.
        package var path: String
        /// A full URL that replaces `host` and `path` when set.
        package var url: URL?
        /// The HTTP method (GET by default).
        package var method: HTTPMethod
        /// Query items, in order, appended to any query already in the path or URL.
        package var query: [QueryItem]
        /// The request headers, sent as they are (plus `Content-Type` from the body when it has none).
        package var headers: HTTPHeaders
        /// The request body, `.none` by default.
        package var body: RequestBody
        /// Credentials the transport answers an authentication challenge with (Digest); `nil` for none.
        /// Basic and Bearer are plain headers (`basicAuth`, `bearerAuth`).
        package var credentials: HTTPCredentials?

        /// Creates a request to `host` + `path` (or `url`) with no query, headers, body or credentials.
        /// - Parameters:
        ///   - host: Scheme, host, port and base path; `https://` is assumed when no scheme is given.
        ///   - path: The path below the host.
        ///   - url: A full URL that replaces `host` and `path`.
        ///   - method: The method (GET by default).
        package init(host: String = "", path: String = "", url: URL? = nil, method: HTTPMethod = .get) {
            self.host = host
            self.path = path
            self.url = url
            self.method = method
            self.query = []
            self.headers = [:]
            self.body = .none
            self.credentials = nil
        }
    }
}
