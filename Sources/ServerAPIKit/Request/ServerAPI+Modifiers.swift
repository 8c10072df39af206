#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Chainable modifiers: each returns a modified copy and keeps the call's id.
extension ServerAPI {
    /// Returns a copy with another method.
    public func method(_ method: HTTPMethod) -> ServerAPI { with { $0.method = method } }

    /// Returns a copy with another path.
    public func path(_ path: String) -> ServerAPI { with { $0.path = path } }

    /// Returns a copy with a query item appended.
    public func query(_ name: String, _ value: String?) -> ServerAPI {
        with { $0.query.append(QueryItem(name: name, value: value)) }
    }

    /// Returns a copy with query items appended, sorted by name.
    public func query(_ items: [String: String]) -> ServerAPI {
        with { api in
            for (name, value) in items.sorted(by: { $0.key < $1.key }) {
                api.query.append(QueryItem(name: name, value: value))
            }
        }
    }

    /// Returns a copy with a header added (a header of the same name is kept: headers may repeat).
    public func header(_ name: String, _ value: String) -> ServerAPI {
        with { $0.headers.add(name: name, value: value) }
    }

    /// Returns a copy where `name` has exactly this value.
    public func setHeader(_ name: String, _ value: String) -> ServerAPI {
        with { $0.headers.replaceOrAdd(name: name, value: value) }
    }

    /// Returns a copy with headers merged in (replacing fields of the same names).
    public func headers(_ headers: HTTPHeaders) -> ServerAPI { with { $0.headers.merge(headers) } }

    /// Returns a copy with another body.
    public func body(_ body: RequestBody) -> ServerAPI { with { $0.body = body } }

    /// Returns a copy with a JSON body encoded from `value`.
    public func json(_ value: some Encodable) -> ServerAPI { body(.json(value)) }

    /// Returns a copy with a form body.
    public func form(_ fields: [String: String]) -> ServerAPI { body(.form(fields)) }

    /// Returns a copy with a tag.
    public func tag(_ tag: String?) -> ServerAPI { with { $0.tag = tag } }

    /// Returns a copy with another id (keep ids unique: the registry cancels by id).
    public func id(_ id: RequestID) -> ServerAPI { with { $0.id = id } }

    /// Returns a copy with another timeout per attempt.
    public func timeout(_ timeout: Duration) -> ServerAPI { with { $0.timeout = timeout } }

    /// Returns a copy whose attempts may take at most `timeout` to connect (TCP and TLS), within the
    /// total timeout: a host that does not answer fails fast with `timedOut`, a slow response still has
    /// the whole timeout. `CurlTransport` enforces it apart; `URLSessionTransport` on Linux cannot (its
    /// total timeout covers connecting).
    public func connectTimeout(_ timeout: Duration?) -> ServerAPI { with { $0.connectTimeout = timeout } }

    /// Returns a copy that fails an attempt whose transfer moves fewer than `bytesPerSecond` bytes a
    /// second (both directions together) for `duration`, with a `timedOut` error whose `isStalled` is true.
    /// - Parameters:
    ///   - bytesPerSecond: The slowest acceptable speed (at least 1).
    ///   - duration: How long the transfer may stay slower (libcurl rounds it up to whole seconds).
    /// - Returns: The modified copy.
    public func stallTimeout(below bytesPerSecond: Int64, for duration: Duration) -> ServerAPI {
        with { $0.stallTimeout = StallTimeout(bytesPerSecond: bytesPerSecond, duration: duration) }
    }

    /// Returns a copy that retries failed attempts up to `count` times.
    /// - Parameters:
    ///   - count: How many retries.
    ///   - policy: When and how to retry; `nil` keeps the current policy.
    public func retry(_ count: Int, policy: RetryPolicy? = nil) -> ServerAPI {
        with {
            $0.retryCount = max(0, count)
            if let policy { $0.retryPolicy = policy }
        }
    }

    /// Returns a copy that connects to a Unix-domain socket instead of its URL's host, which stays its `Host`
    /// header (a `http+unix://` URL names the socket in the URL instead).
    public func unixSocket(_ path: String?) -> ServerAPI { with { $0.unixSocketPath = path } }

    /// Returns a copy that sends `Authorization: Basic base64(user:password)`.
    public func basicAuth(user: String, password: String) -> ServerAPI {
        setHeader("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    /// Returns a copy that sends `Authorization: Bearer token`.
    public func bearerAuth(_ token: String) -> ServerAPI { setHeader("Authorization", "Bearer " + token) }

    /// Returns a copy whose transport answers the server's Digest challenge with these credentials
    /// (`CurlTransport` can; `URLSessionTransport` refuses the call with `invalidRequest`).
    public func digestAuth(user: String, password: String) -> ServerAPI {
        with { $0.credentials = .digest(user: user, password: password) }
    }

    /// Returns a copy with another result format.
    public func format(_ format: ResultFormat) -> ServerAPI { with { $0.resultFormat = format } }

    /// Returns a copy that reads its result at a JSON key path.
    public func keyPath(_ keyPath: String?) -> ServerAPI { with { $0.keyPath = keyPath } }

    /// Returns a copy that accepts these statuses.
    public func accept(_ validation: StatusValidation) -> ServerAPI { with { $0.acceptableStatus = validation } }

    /// Returns a copy that uses the cache this way.
    /// - Parameters:
    ///   - mode: How the cache is used.
    ///   - ttl: How long a stored response stays fresh; `nil` for the cache's default.
    public func cache(_ mode: CacheMode, ttl: Duration? = nil) -> ServerAPI {
        with {
            $0.cacheMode = mode
            if let ttl { $0.cacheTTL = ttl }
        }
    }

    /// Returns a copy whose cache key includes these request headers.
    public func varying(_ headerNames: String...) -> ServerAPI { with { $0.varyingHeaders += headerNames } }

    /// Returns a copy that downloads the body to a file.
    public func download(to destination: URL, resume: Bool = false) -> ServerAPI {
        with { $0.download = DownloadTarget(destination: destination, resume: resume) }
    }

    /// Returns a copy that fails with `responseTooLarge` past `bytes` of response body.
    ///
    /// `nil` (the default) takes the manager's `Configuration.maxResponseSize` (64 MiB unless changed) for a
    /// body held in memory, and no limit for a download to disk or a streamed body; `Int64.max` lifts the
    /// limit for this call.
    /// - Parameter bytes: The largest body accepted, in bytes, or `nil` for the default.
    /// - Returns: The modified call.
    public func maxResponseSize(_ bytes: Int64?) -> ServerAPI { with { $0.maxResponseSize = bytes } }

    /// Returns a copy that fails with `responseTooLarge` when a content-coded body decodes to more than
    /// `ratio` times its encoded bytes (past the first MiB); `nil` lifts the limit (see `DecompressionRule`).
    public func maxDecompressionRatio(_ ratio: Int?) -> ServerAPI { with { $0.maxDecompressionRatio = ratio } }

    /// Returns a copy with another redirect policy.
    public func redirects(_ policy: RedirectPolicy) -> ServerAPI { with { $0.redirects = policy } }

    private func with(_ change: (inout ServerAPI) -> Void) -> ServerAPI {
        var copy = self
        change(&copy)
        return copy
    }
}
