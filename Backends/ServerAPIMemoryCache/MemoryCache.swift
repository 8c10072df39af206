@_spi(Backend) import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An in-memory `CachePolicy`: least-recently-used eviction by entry count and by bytes.
///
/// ```swift
/// let cache = MemoryCache(configuration: .init(countLimit: 500, byteLimit: 16 << 20))
/// let manager = ServerAPIManager(transport: transport, cache: cache)
/// let items = try await manager.send(api.cache(.returnCacheElseLoad, ttl: .seconds(60)))
/// ```
/// Lookup and store are O(1): a hash map into a doubly linked list kept in recency order.
/// It only stores, finds and evicts: whether an entry is fresh, how long one lives without an expiry and how
/// long past it one is kept are the manager's to decide (`ServerAPIManager.Configuration`'s `defaultCacheTTL` and
/// `maxStaleAge`, the call's TTL). An expired entry is returned by `lookup(_:)` until it is evicted or removed
/// (`removeExpired()` removes those past their `expiresAt`).
/// - Important: Safe to use from any number of tasks at once; every operation takes one lock
///   for a few hash-map and list updates, never across I/O.
public final class MemoryCache: CachePolicy {
    /// The limits of a `MemoryCache`.
    public struct Configuration: Sendable, Hashable {
        /// The most entries kept; the least recently used go first.
        public var countLimit: Int
        /// The most bytes kept (bodies, headers and keys, approximately); the least recently used go first.
        public var byteLimit: Int
        /// Not used: the manager gives every entry it stores its lifetime (`defaultCacheTTL`, the call's TTL).
        @available(*, deprecated, message: "set ServerAPIManager.Configuration.defaultCacheTTL; the store keeps no TTL")
        public var defaultTTL: Duration? {
            get { nil }
            set {}
        }
        /// Not used: the manager says how long past its freshness an entry is kept.
        @available(
            *, deprecated, message: "set ServerAPIManager.Configuration.maxStaleAge; the store keeps no stale age"
        )
        public var maxStaleAge: Duration? {
            get { nil }
            set {}
        }

        /// Creates the cache's limits: at most 1,000 entries and 32 MiB by default.
        /// - Parameters:
        ///   - countLimit: The most entries kept (1,000 by default).
        ///   - byteLimit: The most bytes kept (32 MiB by default).
        public init(countLimit: Int = 1_000, byteLimit: Int = 32 << 20) {
            self.countLimit = max(0, countLimit)
            self.byteLimit = max(0, byteLimit)
        }

        /// The former initializer: the lifetimes are the manager's now, and these are not used.
        @available(
            *, deprecated,
            message:
                "use init(countLimit:byteLimit:); set defaultCacheTTL and maxStaleAge on ServerAPIManager.Configuration"
        )
        public init(
            countLimit: Int = 1_000, byteLimit: Int = 32 << 20, defaultTTL: Duration?, maxStaleAge: Duration? = nil
        ) {
            self.init(countLimit: countLimit, byteLimit: byteLimit)
        }

        /// The former initializer: the stale age is the manager's now, and this one is not used.
        @available(
            *, deprecated, message: "use init(countLimit:byteLimit:); set maxStaleAge on ServerAPIManager.Configuration"
        )
        public init(countLimit: Int = 1_000, byteLimit: Int = 32 << 20, maxStaleAge: Duration?) {
            self.init(countLimit: countLimit, byteLimit: byteLimit)
        }
    }

    /// The limits.
    public let configuration: Configuration
    private let now: @Sendable () -> Date
    private let storage = Locked(LRUStorage<CacheKey, CacheEntry>())

    /// Creates an empty cache, shared by every manager given it.
    /// - Parameters:
    ///   - configuration: Limits and lifetimes.
    ///   - now: The clock that expiry is measured on; tests pass one they control.
    public init(configuration: Configuration = Configuration(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.now = now
    }

    /// The entry of a key, fresh or stale, made the most recently used; `nil` when there is none.
    /// - Parameter key: The key.
    /// - Returns: The entry, or `nil`.
    public func lookup(_ key: CacheKey) async -> CacheEntry? {
        storage.withLock { $0.value(for: key) }
    }

    /// Stores an entry as the most recently used, replacing any entry of the same key, then
    /// evicts the least recently used entries until both limits hold.
    ///
    /// An entry larger than `byteLimit` is not kept (and any older entry of its key is removed).
    /// - Parameters:
    ///   - entry: The entry, as it is.
    ///   - key: Its key.
    public func store(_ entry: CacheEntry, for key: CacheKey) async {
        let cost = Self.cost(of: entry, key: key)
        let limits = configuration
        // Evicted entries are released after the lock is dropped: freeing large bodies is not free.
        let evicted: [CacheEntry] = storage.withLock { storage in
            guard cost <= limits.byteLimit, limits.countLimit > 0 else {
                return storage.removeValue(for: key).map { [$0] } ?? []
            }
            storage.set(entry, for: key, cost: cost)
            var evicted: [CacheEntry] = []
            while storage.count > limits.countLimit || storage.totalCost > limits.byteLimit,
                let (_, value) = storage.removeLeastRecentlyUsed()
            {
                evicted.append(value)
            }
            return evicted
        }
        _ = evicted
    }

    /// Removes the entry of a key, if any.
    /// - Parameter key: The key.
    public func remove(_ key: CacheKey) async {
        _ = storage.withLock { $0.removeValue(for: key) }
    }

    /// Removes every entry.
    public func removeAll() async {
        storage.withLock { $0.removeAll() }
    }

    /// Removes every entry whose `expiresAt` has passed.
    /// - Returns: How many entries were removed.
    @discardableResult
    public func removeExpired() -> Int {
        let date = now()
        return storage.withLock { storage in
            storage.removeAll { _, entry in entry.expiresAt.map { date >= $0 } ?? false }
        }
    }

    /// The number of entries.
    public var count: Int { storage.withLock { $0.count } }

    /// The bytes accounted for the entries (bodies, headers and keys, approximately).
    public var totalBytes: Int { storage.withLock { $0.totalCost } }

    /// The keys from the most to the least recently used (the last is the next to be evicted).
    public var keysByRecency: [CacheKey] { storage.withLock { $0.keysByRecency } }

    /// Whether an entry is stored for a key, without making it more recently used.
    /// - Parameter key: The key.
    /// - Returns: `true` when an entry is stored, fresh or stale.
    public func contains(_ key: CacheKey) -> Bool { storage.withLock { $0.peek(key) != nil } }

    /// Whether the internal list and map agree (for tests).
    var isConsistent: Bool { storage.withLock { $0.isConsistent } }

    /// What an entry counts against `byteLimit`: body, header and key bytes, and a fixed overhead.
    static func cost(of entry: CacheEntry, key: CacheKey) -> Int {
        var cost = 128 + entry.body.count + key.rawValue.utf8.count
        for field in entry.headers { cost += field.name.utf8.count + field.value.utf8.count + 16 }
        return cost
    }
}
