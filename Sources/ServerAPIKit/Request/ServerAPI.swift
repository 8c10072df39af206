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
    /// The scheme, host and base path, such as `https://api.example.com/v1` (`https` when no scheme is given).
    public var host: String
    /// The path below `host`; slashes between the two are joined correctly.
    public var path: String
    /// A full URL that replaces `host` and `path` when set.
    public var url: URL?
    /// The method.
    public var method: HTTPMethod
    /// Query items, in order, appended to any query already in the path or URL.
    public var query: [QueryItem]
    /// Request headers.
    public var headers: HTTPHeaders
    /// The body.
    public var body: RequestBody
    /// A label shared by related calls, used to cancel them together.
    public var tag: String?
    /// The total time one attempt may take.
    public var timeout: Duration
    /// The time connecting (TCP and TLS) may take, within `timeout`; `nil` lets the transport decide
    /// (its configuration's connect timeout, else `timeout`). See `connectTimeout(_:)`.
    public var connectTimeout: Duration? = nil
    /// Fail an attempt whose transfer moves slower than this; `nil` uses the transport's default.
    /// See `stallTimeout(below:for:)`.
    public var stallTimeout: StallTimeout? = nil
    /// The Unix-domain socket the call connects to instead of its URL's host; `nil` for the network.
    /// A `http+unix://` URL sets it too (see `UnixSocket`).
    public var unixSocketPath: String? = nil
    /// Credentials the transport answers an authentication challenge with (Digest); `nil` for none.
    /// See `digestAuth(user:password:)`; Basic and Bearer are plain headers (`basicAuth`, `bearerAuth`).
    public var credentials: HTTPCredentials? = nil
    /// How many times a failed attempt is retried (0: no retries).
    public var retryCount: Int
    /// When and how a failed attempt is retried.
    public var retryPolicy: RetryPolicy
    /// How the response body is turned into a result.
    public var resultFormat: ResultFormat
    /// Where in the JSON the result is found (`data.items`, `list[0]`, `#.items`, `~.meta`); `nil` for the whole payload.
    public var keyPath: String?
    /// Which HTTP statuses count as success.
    public var acceptableStatus: StatusValidation
    /// How the manager's cache is used for this call.
    public var cacheMode: CacheMode
    /// How long a stored response stays fresh; `nil` uses the manager's `defaultCacheTTL`.
    public var cacheTTL: Duration?
    /// Methods besides GET and HEAD whose responses the cache may answer and store for this call
    /// (empty unless the call opts in with `cacheable(methods:)`).
    public var additionalCacheableMethods: Set<HTTPMethod>
    /// Request headers whose values are part of the cache key (such as `Authorization`, `Accept-Language`).
    public var varyingHeaders: [String]
    /// Where to write the body, for a download.
    public var download: DownloadTarget?
    /// The largest response body accepted, in bytes; `nil` for no limit.
    public var maxResponseSize: Int64?
    /// The most a content-coded response body may expand (decoded bytes per encoded byte); `nil` for no
    /// limit. `DecompressionRule.defaultRatio` (100) unless set.
    public var maxDecompressionRatio: Int?
    /// Whether redirects are followed.
    public var redirects: RedirectPolicy
    /// The shortest time between two sends of this same call; `nil` for no limit. See `minimumInterval(_:onThrottle:)`.
    public var throttle: ThrottlePolicy? = nil
    /// Whether identical GET and HEAD calls in flight share one transport call. See `coalesced(_:)`.
    public var coalescing: CoalescingMode = .managerDefault
    /// Whether starting this call cancels the earlier unfinished calls with its tag (or endpoint).
    /// See `replacesInFlight(_:)`.
    public var replacesInFlight = false
    /// How business codes are shown, silenced and intercepted; inherits the manager's rules by default.
    public var businessRules = BusinessRules()
    /// This call's overrides of the manager's resilience policies. See `retryBudget(_:)`, `circuitBreaker(_:)`,
    /// `hedging(_:)` and `concurrencyLimit(_:)`.
    public var resilience = ResilienceOverrides()

    /// Creates a call to `host` + `path`.
    /// - Parameters:
    ///   - host: Scheme, host, port and base path; `https://` is assumed when no scheme is given.
    ///   - path: The path below the host.
    ///   - method: The method (GET by default).
    public init(host: String, path: String = "", method: HTTPMethod = .get) {
        self.id = RequestID.next()
        self.host = host
        self.path = path
        self.url = nil
        self.method = method
        self.query = []
        self.headers = [:]
        self.body = .none
        self.tag = nil
        self.timeout = .seconds(60)
        self.retryCount = 0
        self.retryPolicy = .default
        self.resultFormat = .json
        self.keyPath = nil
        self.acceptableStatus = .successful
        self.cacheMode = .never
        self.cacheTTL = nil
        self.additionalCacheableMethods = []
        self.varyingHeaders = []
        self.download = nil
        self.maxResponseSize = nil
        self.maxDecompressionRatio = DecompressionRule.defaultRatio
        self.redirects = .follow(max: 10)
    }

    /// Creates a call to a full URL.
    public init(url: URL, method: HTTPMethod = .get) {
        self.init(host: "", path: "", method: method)
        self.url = url
    }

    /// Whether retrying this call is allowed by its method and policy.
    public var isRetryable: Bool { method.isIdempotent || retryPolicy.retriesNonIdempotent }
}

/// One query item; a `nil` value sends the name alone.
public struct QueryItem: Sendable, Hashable {
    /// The name, before encoding.
    public var name: String
    /// The value, before encoding.
    public var value: String?

    /// Creates an item.
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
    public func accepts(_ status: Int) -> Bool {
        switch self {
        case .successful: (200..<300).contains(status)
        case .any: true
        case .codes(let codes): codes.contains(status)
        }
    }
}
