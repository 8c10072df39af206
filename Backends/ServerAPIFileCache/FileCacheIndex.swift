import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a `FileCache` knows about its directory: each entry file's size and last use, and the
/// total, so that the size limit is kept without listing the directory on every store.
///
/// Built from the directory on first use (last use = the file's modification time, which hits
/// refresh), then kept up to date by the instance's own operations. Files another instance or
/// process adds become known when this one reads them or lists the directory again.
struct FileCacheIndex {
    /// One entry file.
    struct Record: Equatable {
        var size: Int64
        var lastUsed: Date
        /// The identity of the file when this instance last checked its body, if it may be trusted.
        var verified: FileIdentity?
    }

    private(set) var records: [String: Record] = [:]
    /// File names of recently used keys: a SHA-256 costs more than a dictionary lookup.
    private(set) var fileNames: [CacheKey: String] = [:]
    static let maxRememberedNames = 4_096
    private(set) var totalSize: Int64 = 0
    /// Whether the directory has been listed.
    var isLoaded = false
    /// Whether the directory is known to exist.
    var directoryExists = false

    /// Records a file's size and last use, replacing what was known.
    mutating func record(_ name: String, size: Int64, lastUsed: Date, verified: FileIdentity? = nil) {
        totalSize += size - (records[name]?.size ?? 0)
        records[name] = Record(size: size, lastUsed: lastUsed, verified: verified)
    }

    /// Parsed URLs of recently read entries: parsing costs more than a dictionary lookup.
    private(set) var urls: [String: URL] = [:]

    /// Remembers a parsed URL (forgetting them all when there are too many).
    mutating func remember(_ url: URL, for text: String) {
        if urls.count >= Self.maxRememberedNames { urls.removeAll(keepingCapacity: true) }
        urls[text] = url
    }

    /// Remembers the file name of a key (forgetting them all when there are too many).
    mutating func remember(_ name: String, for key: CacheKey) {
        if fileNames.count >= Self.maxRememberedNames { fileNames.removeAll(keepingCapacity: true) }
        fileNames[key] = name
    }

    /// Marks a known file as used now.
    mutating func touch(_ name: String, at date: Date) {
        records[name]?.lastUsed = date
    }

    /// Forgets a file.
    mutating func forget(_ name: String) {
        if let record = records.removeValue(forKey: name) { totalSize -= record.size }
    }

    /// Forgets every file.
    mutating func forgetAll() {
        records.removeAll()
        totalSize = 0
    }

    /// Chooses and forgets the least recently used files until the total is at most `limit`.
    /// - Parameters:
    ///   - limit: The size to get under.
    ///   - keeping: A file never chosen (the one just stored).
    /// - Returns: The names to remove from the directory.
    mutating func evict(toFit limit: Int64, keeping: String?) -> [String] {
        var victims: [String] = []
        // Usually one or two files go: a scan for the oldest each time costs less than sorting them all.
        while totalSize > limit, victims.count < 8 {
            guard let oldest = oldest(excluding: keeping) else { return victims }
            forget(oldest)
            victims.append(oldest)
        }
        guard totalSize > limit else { return victims }
        let candidates = records.filter { $0.key != keeping }.sorted { Self.isOlder($0, than: $1) }
        for (name, _) in candidates where totalSize > limit {
            forget(name)
            victims.append(name)
        }
        return victims
    }

    private func oldest(excluding keeping: String?) -> String? {
        var oldest: (key: String, value: Record)?
        for record in records where record.key != keeping {
            if let current = oldest, !Self.isOlder(record, than: current) { continue }
            oldest = record
        }
        return oldest?.key
    }

    /// Least recently used first; the name breaks ties, so that the order is the same every time.
    private static func isOlder(_ left: (key: String, value: Record), than right: (key: String, value: Record)) -> Bool
    {
        (left.value.lastUsed, left.key) < (right.value.lastUsed, right.key)
    }
}

/// What identifies one version of a file: any write, truncation or replacement changes it,
/// because the kernel sets the change time (`touch` cannot set it back).
struct FileIdentity: Equatable {
    var inode: UInt64
    var size: Int64
    var modified: Date
    var changed: Date
}
