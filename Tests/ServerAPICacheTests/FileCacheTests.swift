import Foundation
import ServerAPIKit
import ServerAPITestSupport
import ServerAPITesting
import Testing

@testable import ServerAPIFileCache

@Suite struct FileCacheTests {
    @Test(
        "an entry reads back exactly as stored, small or large, with many headers or none",
        arguments: [
            0, 1, 4_000, 64 << 10, (64 << 10) + 1, 1 << 20,
        ])
    func roundTrip(bodySize: Int) async throws {
        try await withTemporaryDirectory { directory in
            let cache = FileCache(directory: directory)
            let now = Date()
            var entry = makeEntry(size: bodySize, seed: 7, storedAt: now, expiresAt: now.addingTimeInterval(90))
            entry.status = 203
            entry.headers.add(name: "Set-Cookie", value: "a=1")
            entry.headers.add(name: "set-cookie", value: "b=2; Path=/")
            entry.headers.add(name: "X-Unicode", value: "héllo ✓")
            await #expect(throws: Never.self) { try await cache.store(entry, for: .test("a")) }
            #expect(await cache.lookup(.test("a")) == entry)
            // Headers large enough that the metadata does not fit the first read of a large file.
            var bulky = entry
            for index in 0..<300 {
                bulky.headers.add(name: "X-Filler-\(index)", value: String(repeating: "v", count: 20))
            }
            try await cache.store(bulky, for: .test("bulky"))
            #expect(await cache.lookup(.test("bulky")) == bulky)
        }
    }

    @Test("the directory is created 0700 with its parents, entries are 0600, and no temporary file is left")
    func permissions() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("a/b/cache")
            let cache = FileCache(directory: directory)
            try await cache.store(makeEntry("x"), for: .test("x"))
            let manager = FileManager.default
            let directoryMode = try manager.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
            #expect(directoryMode == 0o700)
            let names = try manager.contentsOfDirectory(atPath: directory.path)
            #expect(names == [SHA256.hex(CacheKey.test("x").rawValue.utf8)])
            #expect(cache.fileURL(for: .test("x")).lastPathComponent == names.first)
            let fileMode =
                try manager.attributesOfItem(atPath: cache.fileURL(for: .test("x")).path)[.posixPermissions] as? Int
            #expect(fileMode == 0o600)
        }
    }

    @Test("a new instance on the same directory reads what the last one stored")
    func restart() async throws {
        try await withTemporaryDirectory { directory in
            let entry = makeEntry(size: 100_000, seed: 3, expiresAt: Date().addingTimeInterval(60))
            do {
                let first = FileCache(directory: directory)
                try await first.store(entry, for: .test("a"))
                try await first.store(makeEntry("b"), for: .test("b"))
            }
            let second = FileCache(directory: directory)
            #expect(second.count == 2)
            #expect(await second.lookup(.test("a")) == entry)
            #expect(await second.lookup(.test("b"))?.body == Data("b".utf8))
        }
    }

    @Test("the size limit evicts the least recently used entries, and a hit makes an entry recent")
    func eviction() async throws {
        try await withTemporaryDirectory { directory in
            let clock = TestClock()
            let probe = FileCache(directory: directory.appendingPathComponent("probe"))
            try await probe.store(makeEntry(size: 10_000, seed: 0), for: .test("k0"))
            let entrySize = probe.totalSize
            let cache = FileCache(
                directory: directory.appendingPathComponent("cache"), configuration: .init(sizeLimit: entrySize * 3),
                now: clock.dateSource)
            for index in 0..<3 {
                try await cache.store(makeEntry(size: 10_000, seed: UInt8(index)), for: .test("k\(index)"))
                clock.advance(by: .seconds(100))
            }
            #expect(await cache.lookup(.test("k0")) != nil)
            clock.advance(by: .seconds(100))
            try await cache.store(makeEntry(size: 10_000, seed: 3), for: .test("k3"))
            #expect(cache.count == 3)
            #expect(cache.totalSize <= entrySize * 3)
            #expect(await cache.lookup(.test("k1")) == nil)
            for name in ["k0", "k2", "k3"] { #expect(await cache.lookup(.test(name)) != nil) }
        }
    }

    @Test("recency survives a restart: the next instance evicts what was least recently used before")
    func evictionAfterRestart() async throws {
        try await withTemporaryDirectory { directory in
            let clock = TestClock()
            let size: Int64
            do {
                let cache = FileCache(directory: directory, now: clock.dateSource)
                for index in 0..<3 {
                    try await cache.store(makeEntry(size: 10_000, seed: UInt8(index)), for: .test("k\(index)"))
                    clock.advance(by: .seconds(100))
                }
                // k0 is used last, so k1 becomes the least recently used.
                #expect(await cache.lookup(.test("k0")) != nil)
                clock.advance(by: .seconds(100))
                size = cache.totalSize
            }
            let restarted = FileCache(
                directory: directory, configuration: .init(sizeLimit: size), now: clock.dateSource)
            try await restarted.store(makeEntry(size: 10_000, seed: 3), for: .test("k3"))
            #expect(await restarted.lookup(.test("k1")) == nil)
            for name in ["k0", "k2", "k3"] { #expect(await restarted.lookup(.test(name)) != nil) }
        }
    }

    @Test("an entry larger than the size limit is not stored, and its older entry is removed")
    func oversized() async throws {
        try await withTemporaryDirectory { directory in
            let cache = FileCache(directory: directory, configuration: .init(sizeLimit: 50_000))
            try await cache.store(makeEntry("small"), for: .test("a"))
            try await cache.store(makeEntry(size: 60_000, seed: 1), for: .test("a"))
            #expect(await cache.lookup(.test("a")) == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    @Test(
        "an entry keeps the expiry it was stored with, or none; an expired one is found until removeExpired removes it")
    func expiryAsStored() async throws {
        try await withTemporaryDirectory { directory in
            let clock = TestClock()
            let cache = FileCache(directory: directory, now: clock.dateSource)
            try await cache.store(makeEntry("a", storedAt: clock.date), for: .test("a"))
            try await cache.store(
                makeEntry("b", storedAt: clock.date, expiresAt: clock.date.addingTimeInterval(60)), for: .test("b"))
            #expect(await cache.lookup(.test("a")) != nil)
            #expect(await cache.lookup(.test("a"))?.expiresAt == nil)
            clock.advance(by: .seconds(1_000_000))
            #expect(await cache.lookup(.test("b"))?.expiresAt == clock.date.addingTimeInterval(60 - 1_000_000))
            #expect(try cache.removeExpired() == 1)
            #expect(await cache.lookup(.test("b")) == nil)
            #expect(await cache.lookup(.test("a")) != nil)
            #expect(cache.count == 1)
        }
    }

    @Test("remove and removeAll delete entry files and leave other files alone")
    func removal() async throws {
        try await withTemporaryDirectory { directory in
            let cache = FileCache(directory: directory)
            for name in ["a", "b", "c"] { try await cache.store(makeEntry(name), for: .test(name)) }
            try Data("keep me".utf8).write(to: directory.appendingPathComponent("notes.txt"))
            try await cache.remove(.test("b"))
            #expect(await cache.lookup(.test("b")) == nil)
            #expect(cache.count == 2)
            try await cache.removeAll()
            #expect(await cache.lookup(.test("a")) == nil)
            #expect(cache.count == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])
        }
    }

    @Test("a valid entry of another key under the same name is a miss, and is kept")
    func collision() async throws {
        try await withTemporaryDirectory { directory in
            let cache = FileCache(directory: directory)
            try await cache.store(makeEntry("a"), for: .test("a"))
            try FileManager.default.copyItem(at: cache.fileURL(for: .test("a")), to: cache.fileURL(for: .test("b")))
            #expect(await cache.lookup(.test("b")) == nil)
            #expect(FileManager.default.fileExists(atPath: cache.fileURL(for: .test("b")).path))
            #expect(await cache.lookup(.test("a"))?.body == Data("a".utf8))
        }
    }

    @Test("the default directory is the platform caches directory plus the app name")
    func defaultDirectory() {
        let url = FileCache.defaultDirectory(appName: "com.example/shop")
        #expect(url.lastPathComponent == "com.example_shop")
        #if os(Linux)
            let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"]
            let base =
                xdg.flatMap { $0.hasPrefix("/") ? $0 : nil }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache").path
            #expect(
                url.deletingLastPathComponent().standardizedFileURL.path
                    == URL(fileURLWithPath: base).standardizedFileURL.path)
        #endif
        #expect(FileCache.defaultDirectory(appName: "..").lastPathComponent == "ServerAPIKit")
    }

    @Test("many tasks storing, reading and removing at once never read back a wrong or partial entry")
    func concurrency() async throws {
        try await withTemporaryDirectory { directory in
            let cache = FileCache(
                directory: directory, configuration: .init(sizeLimit: 400_000, synchronizesWrites: false))
            let problems = await withTaskGroup(of: Int.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var problems = 0
                        for step in 0..<150 {
                            let seed = UInt8((worker * 7 + step * 13) % 24)
                            let size = Int(seed) * 5_000 + 100
                            switch step % 4 {
                            case 0:
                                do {
                                    try await cache.store(makeEntry(size: size, seed: seed), for: .test("k\(seed)"))
                                } catch { problems += 1 }
                            case 3:
                                do { try await cache.remove(.test("k\(seed)")) } catch { problems += 1 }
                            default:
                                if let entry = await cache.lookup(.test("k\(seed)")),
                                    entry.body != makeEntry(size: size, seed: seed).body
                                {
                                    problems += 1
                                }
                            }
                        }
                        return problems
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(problems == 0)
            #expect(cache.totalSize <= 400_000)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(names.allSatisfy { FileCache.isEntryName($0) })
        }
    }
}

@Suite struct FileCacheIndexTests {
    @Test("eviction takes the least recently used files first, many at once if need be", arguments: [1, 5, 30])
    func evictionOrder(victimCount: Int) {
        var index = FileCacheIndex()
        let start = Date(timeIntervalSinceReferenceDate: 0)
        // Recorded out of order, so that the order must come from the last uses.
        for number in (0..<40).shuffled() {
            index.record("f\(number)", size: 100, lastUsed: start.addingTimeInterval(Double(number)))
        }
        index.record("new", size: 100, lastUsed: start)
        let victims = index.evict(toFit: Int64(4_100 - 100 * victimCount), keeping: "new")
        #expect(victims == (0..<victimCount).map { "f\($0)" })
        #expect(index.totalSize == Int64(4_100 - 100 * victimCount))
        #expect(index.records["new"] != nil)
    }
}
