#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A description of one HTTP call: where it goes, what it sends, how its result is read.
///
/// A plain `Sendable`, `Hashable` value: build one inline and refine it with chainable
/// modifiers (each returns a modified copy), then hand it to `ServerAPIManager.send(_:)`.
///
/// ```swift
/// let search = ServerAPI(host: "https://api.example.com", path: "/v1/search")
///     .query("q", "swift")
///     .tag("search")
///     .timeout(.seconds(5))
///     .retry(2)
/// ```
public struct ServerAPI: Sendable, Hashable {
    /// The identity of the call, used to cancel it; generated, and kept by every modifier.
    public var id: RequestID
    /// A label shared by related calls, used to cancel them together.
    public var tag: String?
    /// What the call puts on the wire: URL parts, method, query, headers, body, credentials.
    package var wire: Wire {
        get { _wire.value }
        _modify { yield &_wire.value }
    }
    private(set) var _wire: WireStorage
    /// How the transport carries each attempt: time and size limits, redirects, socket, download file.
    /// A `TransportRequest` carries it as it is.
    package var transfer: Transfer {
        get { _transfer.value }
        _modify { yield &_transfer.value }
    }
    private var _transfer: CopyOnWrite<Transfer>
    /// What the manager does around the exchange: retries, cache, throttling, coalescing, business rules,
    /// resilience overrides.
    package var policy: Policy {
        get { _policy.value }
        _modify { yield &_policy.value }
    }
    private var _policy: CopyOnWrite<Policy>
    // The defaults' shared boxes: a call that keeps its group's defaults allocates no box for it.
    private static let defaultTransfer = CopyOnWrite(Transfer())
    private static let defaultPolicy = CopyOnWrite(Policy())
    /// How the response is read into a result: accepted statuses, result format, key path.
    package var reading: Reading

    /// Creates a call to `host` + `path`.
    /// - Parameters:
    ///   - host: Scheme, host, port and base path; `https://` is assumed when no scheme is given.
    ///   - path: The path below the host.
    ///   - method: The method (GET by default).
    public init(host: String, path: String = "", method: HTTPMethod = .get) {
        self.id = RequestID.next()
        self.tag = nil
        self._wire = WireStorage(Wire(host: host, path: path, method: method))
        self._transfer = Self.defaultTransfer
        self._policy = Self.defaultPolicy
        self.reading = Reading()
    }

    /// Creates a call to a full URL, which replaces `host` and `path`.
    /// - Parameters:
    ///   - url: The absolute http(s) URL, or a `http+unix://` one whose host is a socket's percent-encoded path.
    ///   - method: The method (GET by default).
    public init(url: URL, method: HTTPMethod = .get) {
        self.init(host: "", path: "", method: method)
        self.url = url
    }

    /// Creates a call to a URL written as text, sent as written: its `%XX` escapes are kept, and only the
    /// characters a URL may not contain (spaces, non-ASCII, `"<>\\^`{|}`, a `%` that starts no escape) are
    /// percent-encoded. `"http://host/a%2Fb c?x=%20 y"` is sent as `/a%2Fb%20c?x=%20%20y`, whereas
    /// Foundation's `URL(string:)` would escape the `%` of `%2F` and `%20` again.
    /// - Parameters:
    ///   - urlString: An absolute http(s) URL, or a `http+unix://` one whose host is a socket's percent-encoded
    ///     path.
    ///   - method: The method (GET by default).
    /// - Returns: `nil` when the text is not an absolute URL with a scheme and a host.
    public init?(urlString: String, method: HTTPMethod = .get) {
        guard let url = URL(string: PercentEncoding.encodeURL(urlString)), url.scheme != nil, url.host?.isEmpty == false
        else { return nil }
        self.init(url: url, method: method)
    }

    /// Whether retrying this call is allowed by its method and policy.
    package var isRetryable: Bool { method.isIdempotent || retryPolicy.retriesNonIdempotent }
}

// The wire, policy and reading groups' fields: the one public spelling of each is a property of the call itself
// (`api.retryCount` is stored as `policy.retryCount`). The transfer group's (`api.timeout`) are in
// TransferAccessors.swift, with `TransportRequest`'s.
extension ServerAPI {
    /// The scheme, host and base path, such as `https://api.example.com/v1` (`https` when no scheme is given).
    public var host: String {
        get { wire.host }
        set { wire.host = newValue }
    }

    /// The path below `host`; slashes between the two are joined correctly.
    public var path: String {
        get { wire.path }
        set { wire.path = newValue }
    }

    /// A full URL that replaces `host` and `path` when set.
    public var url: URL? {
        get { wire.url }
        set { wire.url = newValue }
    }

    /// The HTTP method (GET by default).
    public var method: HTTPMethod {
        get { wire.method }
        set { wire.method = newValue }
    }

    /// Query items, in order, appended to any query already in the path or URL.
    public var query: [QueryItem] {
        get { wire.query }
        set { wire.query = newValue }
    }

    /// The request headers, sent as they are (plus `Content-Type` from the body when it has none).
    public var headers: HTTPHeaders {
        get { wire.headers }
        set { wire.headers = newValue }
    }

    /// The request body, `.none` by default.
    public var body: RequestBody {
        get { wire.body }
        set { wire.body = newValue }
    }

    /// Credentials the transport answers an authentication challenge with (Digest); `nil` for none.
    /// See `digestAuth(user:password:)`; Basic and Bearer are plain headers (`basicAuth`, `bearerAuth`).
    public var credentials: HTTPCredentials? {
        get { wire.credentials }
        set { wire.credentials = newValue }
    }

    /// How many times a failed attempt is retried (0: no retries).
    public var retryCount: Int {
        get { policy.retryCount }
        set { policy.retryCount = newValue }
    }

    /// When and how a failed attempt is retried.
    public var retryPolicy: RetryPolicy {
        get { policy.retryPolicy }
        set { policy.retryPolicy = newValue }
    }

    /// How the manager's cache is used for this call.
    public var cacheMode: CacheMode {
        get { policy.cacheMode }
        set { policy.cacheMode = newValue }
    }

    /// How long a stored response stays fresh; `nil` uses the manager's `defaultCacheTTL`.
    public var cacheTTL: Duration? {
        get { policy.cacheTTL }
        set { policy.cacheTTL = newValue }
    }

    /// Methods besides GET and HEAD whose responses the cache may answer and store for this call
    /// (empty unless the call opts in with `cacheable(methods:)`).
    public var additionalCacheableMethods: Set<HTTPMethod> {
        get { policy.additionalCacheableMethods }
        set { policy.additionalCacheableMethods = newValue }
    }

    /// Request headers whose values are part of the cache key (such as `Authorization`, `Accept-Language`).
    public var varyingHeaders: [String] {
        get { policy.varyingHeaders }
        set { policy.varyingHeaders = newValue }
    }

    /// The shortest time between two sends of this same call; `nil` for no limit. See `minimumInterval(_:onThrottle:)`.
    public var throttle: ThrottlePolicy? {
        get { policy.throttle }
        set { policy.throttle = newValue }
    }

    /// Whether identical GET and HEAD calls in flight share one transport call: what `coalesced(_:)`, its public
    /// spelling, sets.
    package var coalescing: CoalescingMode {
        get { policy.coalescing }
        set { policy.coalescing = newValue }
    }

    /// Whether starting this call cancels the earlier unfinished calls with its tag (or endpoint).
    /// See `replacesInFlight(_:)`.
    public var replacesInFlight: Bool {
        get { policy.replacesInFlight }
        set { policy.replacesInFlight = newValue }
    }

    /// How business codes are shown, silenced and intercepted; inherits the manager's rules by default.
    public var businessRules: BusinessRules {
        get { policy.businessRules }
        set { policy.businessRules = newValue }
    }

    /// This call's overrides of the manager's resilience policies: what `retryBudget(_:)`, `circuitBreaker(_:)`,
    /// `hedging(_:)` and `concurrencyLimit(_:)` set, which are their public spelling.
    package var resilience: ResilienceOverrides {
        get { policy.resilience }
        set { policy.resilience = newValue }
    }

    /// How the response body is turned into a result.
    public var resultFormat: ResultFormat {
        get { reading.resultFormat }
        set { reading.resultFormat = newValue }
    }

    /// Where in the JSON the result is found (`data.items`, `list[0]`, `#.items`, `~.meta`); `nil` for the whole payload.
    public var keyPath: String? {
        get { reading.keyPath }
        set { reading.keyPath = newValue }
    }

    /// Which HTTP statuses count as success.
    public var acceptableStatus: StatusValidation {
        get { reading.acceptableStatus }
        set { reading.acceptableStatus = newValue }
    }
}

/// One query item; a `nil` value sends the name alone.
public struct QueryItem: Sendable, Hashable {
    /// The name, before encoding.
    public var name: String
    /// The value, before encoding.
    public var value: String?

    /// Creates an item; `ServerAPI.query(_:_:)` is the usual way to add one.
    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

/// How the body of a successful response becomes a `ServerResult`.
public enum ResultFormat: Sendable, Hashable {
    /// The raw bytes.
    case data
    /// Text, decoded with the charset of `Content-Type` (UTF-8 by default).
    case string
    /// A `JSONValue` (at the call's key path, if any).
    case json
}

/// Which HTTP statuses count as success; others become `httpStatus` errors.
public enum StatusValidation: Sendable, Hashable {
    /// 200–299.
    case successful
    /// Every status: the caller inspects it.
    case any
    /// Exactly these statuses.
    case codes(Set<Int>)

    /// Whether `status` is accepted.
    package func accepts(_ status: Int) -> Bool {
        switch self {
        case .successful: (200..<300).contains(status)
        case .any: true
        case .codes(let codes): codes.contains(status)
        }
    }

    /// The same validation with 304 as well: what a conditional request the cache sends accepts.
    var acceptingNotModified: StatusValidation {
        switch self {
        case .any: self
        case .successful: .codes(Set(200..<300).union([304]))
        case .codes(let codes): .codes(codes.union([304]))
        }
    }

    /// The same validation without the 5xx statuses.
    package var refusingServerErrors: StatusValidation {
        switch self {
        case .successful: self
        case .any: .codes(Set(100..<500).union(600..<1000))
        case .codes(let codes): .codes(codes.filter { !(500..<600).contains($0) })
        }
    }
}
