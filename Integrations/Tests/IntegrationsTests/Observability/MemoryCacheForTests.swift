import ServerAPIKit
import ServerAPIMemoryCache

/// A fresh memory cache per test.
enum MemoryCacheForTests {
    static func make() -> any CachePolicy { MemoryCache() }
}
