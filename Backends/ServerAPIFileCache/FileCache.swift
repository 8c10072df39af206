@_spi(Backend) import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `CachePolicy` on disk: one file per entry, written atomically, with a time to live and a
/// total size limit kept by evicting the least recently used entries.
///
/// ```swift
/// let cache = FileCache(appName: "com.example.shop")   // ~/.cache/com.example.shop on Linux
/// let manager = ServerAPIManager(transport: transport, cache: cache)
/// let items = try await manager.send(api.cache(.loadElseReturnCache))
/// ```
/// - Each entry is a file named by the SHA-256 of its key; the full key is stored inside and
///   compared on read, so a collision is a miss. The format (documented in `CacheFileFormat.swift`) has a
///   versioned header, exact lengths and XXH64 checksums: a truncated, corrupted or foreign
///   file is a miss and is removed, never an error and never a wrong answer.
/// - A store writes a temporary file in the same directory, flushes it (`fsync`, unless
///   `Configuration.synchronizesWrites` is off) and renames it over the entry: a crash or a kill
///   mid-write leaves the old entry or none, never half of one.
/// - The directory is created with mode 0700 and entries with 0600.
/// - Recency survives restarts: a hit sets the file's modification time, and a new instance
///   rebuilds its index (sizes and last uses) from the directory on first use.
/// - Several instances and processes may share a directory: readers only ever see whole files,
///   and every operation tolerates files that vanish. Each instance keeps the size limit for
///   the files it knows (those present when it listed the directory and those it stored or read).
///
/// It only stores, finds and evicts: whether an entry is fresh, how long one lives without an expiry and how long
/// past it one is kept are the manager's to decide (`ServerAPIManager.Configuration`'s `defaultCacheTTL` and
/// `maxStaleAge`, the call's TTL). An expired entry is returned by `lookup(_:)` until it is evicted or removed
/// (`removeExpired()` removes those past their `expiresAt`).
/// - Important: Safe to use from any number of tasks at once. Operations do blocking file I/O
///   on the calling task's thread; a store waits for `fsync` unless that is turned off.
public final class FileCache: CachePolicy {
    /// The limits and the durability of a `FileCache`.
    public struct Configuration: Sendable, Hashable {
        /// The most bytes the entry files may take; the least recently used go first.
        public var sizeLimit: Int64
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
        /// Whether a store waits until its file is on the storage device (`fsync`) before renaming it
        /// into place. Turning it off is faster; after a power loss an entry may then be missing or
        /// invalid (and is then treated as a miss), never wrong.
        public var synchronizesWrites: Bool
        /// Whether every hit checks the body's checksum. When off (the default), a file this
        /// instance has already checked, and which has not changed since (same inode, size,
        /// modification and change time; the kernel sets the change time on any write, so a
        /// rewrite cannot hide), is not hashed again: a hit then costs about a plain read of the
        /// file. Header and metadata are always checked.
        public var verifiesEveryRead: Bool

        /// Creates the cache's limits; the defaults suit an app's own cache directory.
        /// - Parameters:
        ///   - sizeLimit: The most bytes the entries may take (100 MiB by default).
        ///   - synchronizesWrites: Whether stores `fsync` before renaming (on by default).
        ///   - verifiesEveryRead: Whether every hit hashes the body, changed or not (off by default).
        public init(sizeLimit: Int64 = 100 << 20, synchronizesWrites: Bool = true, verifiesEveryRead: Bool = false) {
            self.sizeLimit = max(0, sizeLimit)
            self.synchronizesWrites = synchronizesWrites
            self.verifiesEveryRead = verifiesEveryRead
        }

        /// The former initializer: the lifetimes are the manager's now, and these are not used.
        @available(
            *, deprecated,
            message:
                "use init(sizeLimit:synchronizesWrites:verifiesEveryRead:); set defaultCacheTTL and maxStaleAge on ServerAPIManager.Configuration"
        )
        public init(
            sizeLimit: Int64 = 100 << 20, defaultTTL: Duration?, maxStaleAge: Duration? = nil,
            synchronizesWrites: Bool = true, verifiesEveryRead: Bool = false
        ) {
            self.init(
                sizeLimit: sizeLimit, synchronizesWrites: synchronizesWrites, verifiesEveryRead: verifiesEveryRead)
        }

        /// The former initializer: the stale age is the manager's now, and this one is not used.
        @available(
            *, deprecated,
            message:
                "use init(sizeLimit:synchronizesWrites:verifiesEveryRead:); set maxStaleAge on ServerAPIManager.Configuration"
        )
        public init(
            sizeLimit: Int64 = 100 << 20, maxStaleAge: Duration?, synchronizesWrites: Bool = true,
            verifiesEveryRead: Bool = false
        ) {
            self.init(
                sizeLimit: sizeLimit, synchronizesWrites: synchronizesWrites, verifiesEveryRead: verifiesEveryRead)
        }
    }

    /// The directory the entry files are in.
    public let directory: URL
    /// The limits and lifetimes.
    public let configuration: Configuration

    let directoryPath: String
    let now: @Sendable () -> Date
    let index = Locked(FileCacheIndex())
    /// A checked file is trusted only once its change time is at least this old (on the wall
    /// clock): a write within the file system's timestamp granularity of the previous one could
    /// otherwise leave the change time as it was (git's "racily clean" problem).
    let trustDelay: TimeInterval
    /// Tests only: called in the middle of writing an entry's file (its header and half its body
    /// written, nothing renamed), so that a test can stop or kill the writer at a known point.
    let midWriteHook: (@Sendable () -> Void)?

    /// Files up to this size are read in one call and the body copied out; larger ones have their
    /// body read straight into its own buffer.
    static let smallFileLimit = 64 << 10
    /// A hit refreshes the file's modification time only when it is older than this, to spare
    /// the disk a metadata write on every hit; in-process recency is exact regardless.
    static let touchInterval: TimeInterval = 60
    /// Temporary files older than this are left-overs of a crashed writer and are removed.
    static let abandonedTemporaryAge: TimeInterval = 3600

    /// Creates a cache in a directory of your choice; nothing is touched until first use.
    /// - Parameters:
    ///   - directory: The directory; it is created (mode 0700, with its parents) on the first store.
    ///   - configuration: Limits and lifetimes.
    ///   - now: The clock that expiry and recency are measured on; tests pass one they control.
    public convenience init(
        directory: URL, configuration: Configuration = Configuration(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(directory: directory, configuration: configuration, now: now, trustDelay: 1)
    }

    init(
        directory: URL, configuration: Configuration, now: @escaping @Sendable () -> Date, trustDelay: TimeInterval,
        midWriteHook: (@Sendable () -> Void)? = nil
    ) {
        self.directory = directory.standardizedFileURL
        self.directoryPath = self.directory.path
        self.configuration = configuration
        self.now = now
        self.trustDelay = trustDelay
        self.midWriteHook = midWriteHook
    }

    /// Creates a cache in the platform's caches directory, in a folder named after the app.
    /// - Parameters:
    ///   - appName: The folder's name, such as a bundle identifier.
    ///   - configuration: Limits and lifetimes.
    public convenience init(appName: String, configuration: Configuration = Configuration()) {
        self.init(directory: Self.defaultDirectory(appName: appName), configuration: configuration)
    }

    /// The default directory of an app's cache: the platform caches directory
    /// (`~/Library/Caches` on Apple platforms; `$XDG_CACHE_HOME`, or else `~/.cache`, on Linux)
    /// followed by the app's name.
    /// - Parameter appName: The app's name; path separators are replaced.
    /// - Returns: The directory URL.
    public static func defaultDirectory(appName: String) -> URL {
        #if canImport(Darwin)
            let base =
                FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
        #else
            let base: URL
            if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
                base = URL(fileURLWithPath: xdg, isDirectory: true)
            } else {
                base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
                    ".cache", isDirectory: true)
            }
        #endif
        var name = appName.replacing("/", with: "_").replacing("\0", with: "_")
        if name.isEmpty || name == "." || name == ".." { name = "ServerAPIKit" }
        return base.appendingPathComponent(name, isDirectory: true)
    }

    /// The file an entry of `key` is stored in, whether or not it exists.
    /// - Parameter key: The key.
    /// - Returns: The file URL (its name is the SHA-256 of the key, in hex).
    public func fileURL(for key: CacheKey) -> URL {
        URL(fileURLWithPath: path(of: fileName(for: key)), isDirectory: false)
    }

    // MARK: CachePolicy

    /// The entry of a key, fresh or stale; `nil` when there is none, or when its file is damaged or
    /// foreign (it is then removed).
    /// - Parameter key: The key.
    /// - Returns: The entry, or `nil`.
    public func lookup(_ key: CacheKey) async -> CacheEntry? {
        loadIndexIfNeeded()
        let name = fileName(for: key)
        let path = self.path(of: name)
        let date = now()
        let trusted = configuration.verifiesEveryRead ? nil : index.withLock { $0.records[name]?.verified }
        let result = Self.read(
            path: path, key: key, touchingAt: date, trusted: trusted, trustDelay: trustDelay, parseURL: url(from:))
        switch result {
        case .hit(let entry, let size, _, let verified):
            index.withLock { $0.record(name, size: size, lastUsed: date, verified: verified) }
            return entry
        case .missing:
            index.withLock { $0.forget(name) }
            return nil
        case .invalid(let inode):
            Self.removeIfUnchanged(path, inode: inode)
            index.withLock { $0.forget(name) }
            return nil
        case .otherKey, .unreadable:
            return nil
        }
    }

    /// Stores an entry, replacing any entry of the same key, then evicts the least recently
    /// used entries until the size limit holds.
    ///
    /// An entry larger than `sizeLimit` is not kept (and any older entry of its key is removed).
    /// - Parameters:
    ///   - entry: The entry, as it is.
    ///   - key: Its key.
    /// - Throws: `ServerAPIError` of kind `fileSystem` when the directory cannot be created or
    ///   written (read-only, a regular file in the way, disk full). The old entry is then intact.
    public func store(_ entry: CacheEntry, for key: CacheKey) async throws {
        let date = now()
        let name = fileName(for: key)
        let path = self.path(of: name)
        let prefix = CacheFileFormat.encodePrefix(entry, key: key)
        let size = Int64(prefix.count + entry.body.count)
        guard size <= configuration.sizeLimit else {
            try? SystemFile.remove(path)
            index.withLock { $0.forget(name) }
            return
        }
        loadIndexIfNeeded()
        try ensureDirectory()
        try writeAtomically(prefix: prefix, body: entry.body, to: path, modified: date)
        let limit = configuration.sizeLimit
        let victims = index.withLock { index in
            index.record(name, size: size, lastUsed: date)
            return index.evict(toFit: limit, keeping: name)
        }
        // A victim another instance already removed is simply gone.
        for victim in victims { try? SystemFile.remove(self.path(of: victim)) }
    }

    /// Removes the entry of a key, if any.
    /// - Parameter key: The key.
    /// - Throws: `ServerAPIError` of kind `fileSystem` when the file exists but cannot be removed.
    public func remove(_ key: CacheKey) async throws {
        let name = fileName(for: key)
        index.withLock { $0.forget(name) }
        do {
            try SystemFile.remove(path(of: name))
        } catch {
            throw ServerAPIError(.fileSystem, "cannot remove the cache entry: \(error)", underlying: error)
        }
    }

    /// Removes every entry (and abandoned temporary files); other files in the directory are left alone.
    /// - Throws: `ServerAPIError` of kind `fileSystem` when the directory cannot be listed or an
    ///   entry cannot be removed. A missing directory is an empty cache.
    public func removeAll() async throws {
        index.withLock {
            $0.forgetAll()
            $0.isLoaded = true
        }
        var failure: SystemCallError?
        for name in try listDirectory() {
            if Self.isEntryName(name) || isAbandonedTemporary(name) {
                do { try SystemFile.remove(path(of: name)) } catch { failure = error }
            }
        }
        if let failure {
            throw ServerAPIError(.fileSystem, "cannot remove every cache entry: \(failure)", underlying: failure)
        }
    }

    /// Removes every entry whose `expiresAt` has passed, and every entry file whose header is
    /// damaged or foreign or whose size disagrees with it.
    ///
    /// Only headers are read: a damaged body is found (and the file removed) by `lookup(_:)`.
    /// - Returns: How many files were removed.
    /// - Throws: `ServerAPIError` of kind `fileSystem` when the directory cannot be listed.
    @discardableResult
    public func removeExpired() throws -> Int {
        let date = now()
        var removed = 0
        for name in try listDirectory() where Self.isEntryName(name) {
            let path = self.path(of: name)
            guard let (header, inode) = Self.readHeader(path: path) else { continue }
            let expired = header.map { $0.expiresAt.map { date >= $0 } ?? false } ?? true
            if expired {
                Self.removeIfUnchanged(path, inode: inode)
                index.withLock { $0.forget(name) }
                removed += 1
            }
        }
        return removed
    }

    /// The number of entry files this instance knows of.
    public var count: Int {
        loadIndexIfNeeded()
        return index.withLock { $0.records.count }
    }

    /// The bytes the entry files this instance knows of take.
    public var totalSize: Int64 {
        loadIndexIfNeeded()
        return index.withLock { $0.totalSize }
    }

    // MARK: Names and paths

    /// The file name of a key: the SHA-256 of the key's text, in lower-case hex.
    static func fileName(for key: CacheKey) -> String { SHA256.hex(key.rawValue.utf8) }

    /// The URL of an entry, remembered for the entries read recently.
    func url(from text: String) -> URL? {
        if let url = index.withLock({ $0.urls[text] }) { return url }
        guard let url = URL(string: text) else { return nil }
        index.withLock { $0.remember(url, for: text) }
        return url
    }

    /// The file name of a key, remembered for the keys used recently.
    func fileName(for key: CacheKey) -> String {
        if let name = index.withLock({ $0.fileNames[key] }) { return name }
        let name = Self.fileName(for: key)
        index.withLock { $0.remember(name, for: key) }
        return name
    }

    /// Whether a directory item is an entry file: 64 lower-case hex digits, nothing else.
    static func isEntryName(_ name: String) -> Bool {
        let utf8 = name.utf8
        return utf8.count == 64 && utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static let temporaryPrefix = ".tmp-"

    func path(of name: String) -> String { directoryPath + "/" + name }
}
