#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The cache's protocol: where the manager keeps responses, a store of `CacheEntry` values by `CacheKey`.
///
/// `MemoryCache` and `FileCache` conform; pass one as `ServerAPIManager(cache:)`, or write your own. The
/// conformer stores, finds and evicts; what may be reused, when to revalidate and what to store are decided by
/// the manager, by HTTP's caching rules and each call's `CacheMode`.
/// - Important: Conformers must be safe to call from many tasks at once.
public protocol CachePolicy: Sendable {
    /// The entry stored for a key, or `nil`. Expired entries are returned too: whether a stored entry may
    /// answer, be revalidated or stand in when the network fails is the manager's decision, by HTTP's rules on the
    /// entry's headers and age and the call's own directives, never the store's.
    func lookup(_ key: CacheKey) async throws -> CacheEntry?
    /// Stores an entry, replacing any entry of the same key.
    func store(_ entry: CacheEntry, for key: CacheKey) async throws
    /// Removes the entry of a key, if any.
    func remove(_ key: CacheKey) async throws
    /// Removes every entry.
    func removeAll() async throws
}

/// The cache protocol's earlier name: write `CachePolicy`.
@available(*, deprecated, renamed: "CachePolicy")
public typealias CacheStorage = CachePolicy

/// How one call uses the manager's cache.
public enum CacheMode: Sendable, Hashable {
    /// The cache is neither read nor written.
    case never
    /// The response is stored; the cache is never read.
    case storeOnly
    /// A fresh cached entry answers without touching the network; otherwise load and store.
    case returnCacheElseLoad
    /// The cached entry (if any) is returned first, then the network result, which is stored.
    case returnCacheThenLoad
    /// Load and store; on a network failure, answer from the cache (even stale) if it has an entry.
    case loadElseReturnCache
    /// Answer from the cache only; a miss is a `cacheMiss` error.
    case cacheOnly

    /// Whether this mode reads the cache.
    package var readsCache: Bool { self != .never && self != .storeOnly }
    /// Whether this mode writes network results to the cache.
    package var writesCache: Bool { self != .never && self != .cacheOnly }
}

/// The identity of a cached response.
public struct CacheKey: Sendable, Hashable, CustomStringConvertible {
    /// The full key text; caches store it with the entry and compare it on read.
    public var rawValue: String

    /// Creates a key from its text; the manager derives the keys it uses from each request.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The key's text.
    public var description: String { rawValue }
}

/// One stored response.
public struct CacheEntry: Sendable, Hashable {
    /// The HTTP status.
    public var status: Int
    /// The response headers, as stored: without the hop-by-hop fields (RFC 9111 §3.1).
    public var headers: HTTPHeaders
    /// The response body.
    public var body: Data
    /// The URL that answered.
    public var url: URL
    /// When the response was received.
    public var storedAt: Date
    /// When it stops being fresh, as the manager worked it out when it stored the entry; `nil` for never. A store's
    /// own clean-up (`FileCache.removeExpired()`) may go by it; whether the entry may answer a call is the manager's
    /// decision, never the store's.
    public var expiresAt: Date?
    /// How old the response already was when it was received (RFC 9111 §4.2.3: from its `Age` and `Date` and
    /// the time the exchange took); its age at a later date is this plus the time since `storedAt`.
    public var initialAge: Duration
    /// The request fields this response was chosen by (its `Vary`, and the fields the call listed as varying),
    /// with the values of the request that got it: only a request with the same values is answered with it.
    public var variant: CacheVariant
    /// Which set of variants of one URL the entry belongs to; `nil` when the response does not vary. Stored
    /// variants are found through the entry stored for the URL itself, and only while it has the same group, so
    /// that removing that entry (an unsafe request to the URL) leaves none of them reachable.
    public var variantGroup: String?

    /// Creates a stored response: what a cache keeps and returns for a key.
    public init(
        status: Int, headers: HTTPHeaders, body: Data, url: URL, storedAt: Date, expiresAt: Date?,
        initialAge: Duration = .zero, variant: CacheVariant = CacheVariant(), variantGroup: String? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.initialAge = initialAge
        self.variant = variant
        self.variantGroup = variantGroup
    }

    /// How old the response is at `date` (RFC 9111 §4.2.3).
    public func age(at date: Date) -> Duration {
        initialAge + .seconds(max(0, date.timeIntervalSince(storedAt)))
    }
}

/// The request fields a stored response was chosen by, with the values the request that got it had.
public struct CacheVariant: Sendable, Hashable {
    /// One request field: its lower-cased name and value (its lines joined by ", "), or `nil` when the
    /// request did not carry it.
    public struct Field: Sendable, Hashable {
        /// The field's name, lower-cased.
        public var name: String
        /// The request's value, or `nil` when it had none.
        public var value: String?

        /// Creates a field of a variant.
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    /// The fields, sorted by name; empty for a response that does not vary.
    public var fields: [Field]

    /// A variant of the given fields; none by default.
    public init(fields: [Field] = []) { self.fields = fields }
}
