import Synchronization

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
    private var _wire: WireStorage
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

// The groups' fields: the one public spelling of each is a property of the call itself (`api.retryCount` is
// stored as `policy.retryCount`). The transfer group's are properties of `TransportRequest` too (`request.timeout`),
// so a new per-call limit is a field of `ServerAPI.Transfer`, a property here and one on `TransportRequest`.
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

    /// The total time one attempt may take (60 seconds by default).
    public var timeout: Duration {
        get { transfer.timeout }
        set { transfer.timeout = newValue }
    }

    /// The time connecting (TCP and TLS) may take, within `timeout`; `nil` lets the transport decide
    /// (its configuration's connect timeout, else `timeout`). See `connectTimeout(_:)`.
    public var connectTimeout: Duration? {
        get { transfer.connectTimeout }
        set { transfer.connectTimeout = newValue }
    }

    /// Fail an attempt whose transfer moves slower than this; `nil` uses the transport's default.
    /// See `stallTimeout(below:for:)`.
    public var stallTimeout: StallTimeout? {
        get { transfer.stallTimeout }
        set { transfer.stallTimeout = newValue }
    }

    /// Where to write the body, for a download.
    public var download: DownloadTarget? {
        get { transfer.download }
        set { transfer.download = newValue }
    }

    /// The largest response body accepted, in bytes; `nil` for the default of a body held in memory (64 MiB,
    /// or the manager's `Configuration.maxResponseSize`) and none for a download or a stream; `Int64.max`
    /// for no limit.
    public var maxResponseSize: Int64? {
        get { transfer.maxResponseSize }
        set { transfer.maxResponseSize = newValue }
    }

    /// The most a content-coded response body may expand (decoded bytes per encoded byte); `nil` for no
    /// limit. `DecompressionRule.defaultRatio` (100) unless set.
    public var maxDecompressionRatio: Int? {
        get { transfer.maxDecompressionRatio }
        set { transfer.maxDecompressionRatio = newValue }
    }

    /// Whether and how far redirects are followed (up to 10 by default).
    public var redirects: RedirectPolicy {
        get { transfer.redirects }
        set { transfer.redirects = newValue }
    }

    /// The Unix-domain socket the call connects to instead of its URL's host; `nil` for the network.
    /// A `http+unix://` URL sets it too.
    public var unixSocketPath: String? {
        get { transfer.unixSocketPath }
        set { transfer.unixSocketPath = newValue }
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

// MARK: - The URL a call resolves to

extension ServerAPI {
    /// The absolute URL this call goes to, with its query encoded.
    /// - Throws: `invalidRequest` when no valid http(s) URL can be made.
    public func resolvedURL() throws(ServerAPIError) -> URL {
        try resolvedTarget().url
    }

    /// The URL this call sends and the Unix socket it connects to: a `http+unix://` URL (as `url`, or as
    /// `host`) becomes a `http://localhost/…` URL and its socket; otherwise the socket is `unixSocketPath`.
    /// - Throws: `invalidRequest` when no valid http(s) URL can be made.
    package func resolvedTarget() throws(ServerAPIError) -> (url: URL, unixSocketPath: String?) {
        let resolved = try resolvedWire()
        return (resolved.url, resolved.socketPath ?? unixSocketPath)
    }

    /// What the call's wire group resolves to, made once per description: every send, attempt and copy of the
    /// same `ServerAPI` that did not change its URL parts reads the same resolution.
    package func resolvedWire() throws(ServerAPIError) -> ResolvedWire {
        try _wire.resolved { wire throws(ServerAPIError) in try wire.resolve() }
    }

    /// Resolves the call into what a transport sends: URL, headers with the body's
    /// content type, the body source and every limit.
    /// - Throws: `invalidRequest` for a bad URL, header or body.
    @inline(never)
    public func transportRequest(attempt: Int = 1) throws(ServerAPIError) -> TransportRequest {
        let resolved = try resolvedWire()
        let url = resolved.sentURL
        let socket = resolved.socketPath ?? unixSocketPath
        var headers = self.headers
        // User-info goes into the header it stands for, out of the URL (see `URLUserInfo`); credentials the
        // call gives itself win.
        if let authorization = resolved.authorization, credentials == nil, !headers.contains("Authorization") {
            headers.add(name: "Authorization", value: authorization)
        }
        do throws(ServerAPIError) {
            let (source, contentType) = try body.resolve()
            if let contentType, !headers.contains("Content-Type") {
                headers.add(name: "Content-Type", value: contentType)
            }
            // The transfer settings go as they are: a new limit needs no line here.
            var transfer = self.transfer
            transfer.unixSocketPath = socket
            var request = TransportRequest(
                id: id, url: url, method: method, headers: headers, body: source, transfer: transfer,
                attempt: attempt)
            request.credentials = credentials
            // Checked once here: the transport sends a prepared request without checking it again. The URL and
            // the method were checked with the resolution, unless the user-info was taken out of the URL since.
            if resolved.authorization != nil {
                try request.prepare()
            } else {
                try request.prepare(resolvedMethodIsToken: resolved.methodIsToken)
            }
            return request
        } catch {
            throw error.with(requestID: id, url: url)
        }
    }

    /// Whether the text contains `://`. A byte search: Foundation's `contains` costs a bridge per call.
    fileprivate static func hasScheme(_ text: String) -> Bool {
        var matched = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: matched == 0 ? ":" : "/") {
                matched += 1
                if matched == 3 { return true }
            } else {
                matched = byte == UInt8(ascii: ":") ? 1 : 0
            }
        }
        return false
    }

    /// The text without leading and trailing spaces and tabs in Unicode's sense (`CharacterSet.whitespaces`);
    /// a host rarely has any, so its scalars are looked at only when the first or last byte may be one.
    fileprivate static func trimmingWhitespace(_ text: String) -> String {
        guard let first = text.utf8.first, let last = text.utf8.last else { return text }
        func plain(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x80 }
        return plain(first) && plain(last) ? text : String(HTTPSyntax.trimming(text, HTTPSyntax.isSpace))
    }

    fileprivate static func splitQuery(_ path: String) -> (String, String?) {
        guard let mark = path.firstIndex(of: "?") else { return (path, nil) }
        return (String(path[..<mark]), String(path[path.index(after: mark)...]))
    }
}

/// What a call's URL parts (`host`, `path`, `url`, `query`) resolve to.
package struct ResolvedWire: Sendable {
    /// The absolute http(s) URL with its query encoded, user-info still in it (`ServerAPI.resolvedURL()`).
    package var url: URL
    /// The Unix socket a `http+unix://` URL names; `nil` for any other URL.
    package var socketPath: String?
    /// `url` without its user-info: what the transport sends.
    package var sentURL: URL
    /// The `Authorization` value the user-info stands for (`Basic …`), when the URL has user-info.
    package var authorization: String?
    /// Whether the group's method is an HTTP token (`TransportRequest.prepare(resolvedMethodIsToken:)`).
    package var methodIsToken: Bool
}

extension ServerAPI.Wire {
    /// Resolves the URL parts: the `http+unix://` socket split off, the query encoded, the user-info split off.
    /// - Throws: `invalidRequest` when no valid http(s) URL can be made.
    fileprivate func resolve() throws(ServerAPIError) -> ResolvedWire {
        // Most hosts have no "+": the byte check keeps Foundation's string search off every call's path.
        let namesSocket = host.utf8.contains(UInt8(ascii: "+")) && host.lowercased().contains("+unix://")
        let unixURL = url ?? (namesSocket ? URL(string: host) : nil)
        var wire = self
        var socketPath: String?
        if let unixURL, let split = UnixSocket.split(unixURL) {
            if url == nil {
                // The host names the socket; the path is the call's.
                wire.host = split.url.absoluteString
            } else {
                wire.url = split.url
            }
            socketPath = split.socketPath
        }
        let url = try wire.networkURL()
        let userInfo = URLUserInfo.split(url)
        return ResolvedWire(
            url: url, socketPath: socketPath, sentURL: userInfo?.url ?? url, authorization: userInfo?.authorization,
            methodIsToken: HTTPMethod.isToken(method))
    }

    fileprivate func networkURL() throws(ServerAPIError) -> URL {
        // A full URL without extra query items is already what the transport sends: parsing its
        // text again would make the same URL, at a cost on every call.
        if let url, query.isEmpty, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false
        {
            return url
        }
        var base: String
        if let url {
            base = url.absoluteString
        } else if ServerAPI.hasScheme(path) {
            base = path
        } else {
            let trimmedHost = ServerAPI.trimmingWhitespace(host)
            guard !trimmedHost.isEmpty else {
                throw ServerAPIError(.invalidRequest, "the call has neither a host nor a URL")
            }
            var root = ServerAPI.hasScheme(trimmedHost) ? trimmedHost : "https://" + trimmedHost
            while root.hasSuffix("/") { root.removeLast() }
            var tail = Substring(path)
            while tail.hasPrefix("/") { tail.removeFirst() }
            let (pathPart, queryPart) = ServerAPI.splitQuery(String(tail))
            base = tail.isEmpty ? root : root + "/" + PercentEncoding.encodePath(pathPart)
            if let queryPart { base += "?" + queryPart }
        }
        if !query.isEmpty {
            let encoded = query.map { item in
                let name = PercentEncoding.encode(item.name)
                return item.value.map { "\(name)=\(PercentEncoding.encode($0))" } ?? name
            }.joined(separator: "&")
            if let hash = base.firstIndex(of: "#") { base = String(base[..<hash]) }
            base += base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
            base += encoded
        }
        // The text as written: its escapes kept, only what a URL may not contain escaped (see `PercentEncoding`).
        guard let resolved = URL(string: PercentEncoding.encodeURL(base)), let scheme = resolved.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = resolved.host, !host.isEmpty
        else {
            throw ServerAPIError(.invalidRequest, "\"\(base)\" is not a valid http(s) URL")
        }
        return resolved
    }
}

/// The wire group's copy-on-write box (as `CopyOnWrite`), which also keeps what the group resolves to: the
/// URL a call sends is made once for every send and attempt of the same description, not once per attempt.
///
/// Not a generic box: a generic class holding an atomic looks its metadata up at run time whenever a box is
/// freed, and every call frees several.
struct WireStorage: @unchecked Sendable, Hashable {
    // `@unchecked`: `value` is written only through its modify accessor, and only when this storage holds
    // the one reference to the box; `resolution` is written once, by whichever value sharing the box claims it
    // (`resolvedState`), and read only once it is published.
    private final class Box {
        // No run-time exclusivity check, for the reason `CopyOnWrite` gives.
        @exclusivity(unchecked) var value: ServerAPI.Wire
        /// What `resolved(_:)` made from `value`; written only while `resolvedState` is `claimed`.
        @exclusivity(unchecked) var resolution: ResolvedWire?
        /// `empty`, `claimed` (one value is writing `resolution`) or `published`. An atomic rather than a lock:
        /// every send of a description reads it, and a lock there was one acquisition per call.
        let resolvedState = Atomic<UInt8>(Box.empty)

        static let empty: UInt8 = 0
        static let claimed: UInt8 = 1
        static let published: UInt8 = 2

        init(_ value: ServerAPI.Wire) { self.value = value }
    }

    private var box: Box

    init(_ value: ServerAPI.Wire) {
        box = Box(value)
    }

    /// The group; writing it copies the box first when another value shares it, and drops the resolution.
    var value: ServerAPI.Wire {
        get { box.value }
        _modify {
            if isKnownUniquelyReferenced(&box) {
                // The one reference: nobody else can be reading or publishing the resolution.
                if box.resolvedState.load(ordering: .relaxed) != Box.empty {
                    box.resolution = nil
                    box.resolvedState.store(Box.empty, ordering: .relaxed)
                }
            } else {
                box = Box(box.value)
            }
            yield &box.value
        }
    }

    /// What the group resolves to: made by `make` the first time, kept until the group is written. Two values
    /// that share the box may both run `make`; it is a pure function of the group, so either result is the one,
    /// and the first to claim the box keeps it.
    func resolved(_ make: (ServerAPI.Wire) throws(ServerAPIError) -> ResolvedWire) throws(ServerAPIError)
        -> ResolvedWire
    {
        if box.resolvedState.load(ordering: .acquiring) == Box.published, let made = box.resolution { return made }
        let made = try make(box.value)
        if box.resolvedState.compareExchange(expected: Box.empty, desired: Box.claimed, ordering: .acquiring)
            .exchanged
        {
            box.resolution = made
            box.resolvedState.store(Box.published, ordering: .releasing)
        }
        return made
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.box === rhs.box || lhs.value == rhs.value
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}

// MARK: - The values a call is made of

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
