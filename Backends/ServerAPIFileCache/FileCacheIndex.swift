import Foundation

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
    }

    private(set) var records: [String: Record] = [:]
    private(set) var totalSize: Int64 = 0
    /// Whether the directory has been listed.
    var isLoaded = false
    /// Whether the directory is known to exist.
    var directoryExists = false

    /// Records a file's size and last use, replacing what was known.
    mutating func record(_ name: String, size: Int64, lastUsed: Date) {
        totalSize += size - (records[name]?.size ?? 0)
        records[name] = Record(size: size, lastUsed: lastUsed)
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
        guard totalSize > limit else { return [] }
        let candidates = records.filter { $0.key != keeping }.sorted {
            ($0.value.lastUsed, $0.key) < ($1.value.lastUsed, $1.key)
        }
        var victims: [String] = []
        for (name, _) in candidates where totalSize > limit {
            forget(name)
            victims.append(name)
        }
        return victims
    }
}
