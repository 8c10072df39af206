import Foundation
import ServerAPIKit
import ServerAPITesting
import Testing

@testable import ServerAPIMemoryCache

@Suite struct MemoryCacheTests {
    @Test("a stored entry is looked up as it was stored, and replaced by a newer one")
    func roundTrip() async {
        let cache = MemoryCache()
        let entry = makeEntry("one", expiresAt: Date().addingTimeInterval(60))
        await cache.store(entry, for: .test("a"))
        #expect(await cache.lookup(.test("a")) == entry)
        #expect(await cache.lookup(.test("b")) == nil)
        let newer = makeEntry("two", expiresAt: Date().addingTimeInterval(60))
        await cache.store(newer, for: .test("a"))
        #expect(await cache.lookup(.test("a")) == newer)
        #expect(cache.count == 1)
        #expect(cache.isConsistent)
    }

    @Test("the count limit evicts the least recently used entry; a lookup makes an entry recent")
    func countLimit() async {
        let cache = MemoryCache(configuration: .init(countLimit: 3))
        for name in ["a", "b", "c"] { await cache.store(makeEntry(name), for: .test(name)) }
        #expect(cache.keysByRecency == [.test("c"), .test("b"), .test("a")])
        _ = await cache.lookup(.test("a"))
        await cache.store(makeEntry("d"), for: .test("d"))
        #expect(cache.keysByRecency == [.test("d"), .test("a"), .test("c")])
        #expect(await cache.lookup(.test("b")) == nil)
        await cache.store(makeEntry("e"), for: .test("e"))
        #expect(!cache.contains(.test("c")))
        #expect(cache.count == 3)
        #expect(cache.isConsistent)
    }

    @Test("the byte limit evicts least recently used entries until the total fits")
    func byteLimit() async {
        let small = makeEntry(size: 1_000, seed: 1)
        let cost = MemoryCache.cost(of: small, key: .test("k0"))
        let cache = MemoryCache(configuration: .init(countLimit: 100, byteLimit: cost * 3))
        for index in 0..<3 { await cache.store(makeEntry(size: 1_000, seed: UInt8(index)), for: .test("k\(index)")) }
        #expect(cache.count == 3)
        #expect(cache.totalBytes == cost * 3)
        // An entry twice as large pushes the two oldest out.
        await cache.store(makeEntry(size: 1_900, seed: 9), for: .test("k9"))
        #expect(cache.keysByRecency == [.test("k9"), .test("k2")])
        #expect(cache.totalBytes <= cost * 3)
        #expect(cache.isConsistent)
    }

    @Test("an entry larger than the byte limit is not kept, and its older entry goes too")
    func oversizedEntry() async {
        let cache = MemoryCache(configuration: .init(byteLimit: 10_000))
        await cache.store(makeEntry("small"), for: .test("a"))
        await cache.store(makeEntry(size: 20_000, seed: 1), for: .test("a"))
        #expect(await cache.lookup(.test("a")) == nil)
        #expect(cache.count == 0)
        #expect(cache.totalBytes == 0)
    }

    @Test(
        "an entry keeps the expiry it was stored with, or none; an expired one is found until removeExpired removes it")
    func expiryAsStored() async {
        let clock = TestClock()
        let cache = MemoryCache(now: clock.dateSource)
        await cache.store(makeEntry("a", storedAt: clock.date), for: .test("a"))
        await cache.store(
            makeEntry("b", storedAt: clock.date, expiresAt: clock.date.addingTimeInterval(60)), for: .test("b"))
        #expect(await cache.lookup(.test("a")) != nil)
        #expect(await cache.lookup(.test("a"))?.expiresAt == nil)
        clock.advance(by: .seconds(1_000_000))
        #expect(await cache.lookup(.test("b"))?.expiresAt == clock.date.addingTimeInterval(60 - 1_000_000))
        #expect(cache.removeExpired() == 1)
        #expect(await cache.lookup(.test("b")) == nil)
        #expect(await cache.lookup(.test("a")) != nil)
    }

    @Test("remove and removeAll empty the cache")
    func removal() async {
        let cache = MemoryCache()
        for name in ["a", "b", "c"] { await cache.store(makeEntry(name), for: .test(name)) }
        await cache.remove(.test("b"))
        #expect(cache.keysByRecency == [.test("c"), .test("a")])
        await cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalBytes == 0)
        await cache.store(makeEntry("d"), for: .test("d"))
        #expect(cache.keysByRecency == [.test("d")])
        #expect(cache.isConsistent)
    }

    @Test("many tasks storing, reading and removing at once keep the limits and never mix entries")
    func concurrency() async {
        let cache = MemoryCache(configuration: .init(countLimit: 50, byteLimit: 1 << 20))
        let mixedUp = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    var mixedUp = 0
                    for step in 0..<2_000 {
                        let name = "k\((worker * 7 + step * 13) % 120)"
                        switch step % 5 {
                        case 0, 1:
                            await cache.store(makeEntry(name), for: .test(name))
                        case 4:
                            await cache.remove(.test(name))
                        default:
                            if let entry = await cache.lookup(.test(name)), entry.body != Data(name.utf8) {
                                mixedUp += 1
                            }
                        }
                    }
                    return mixedUp
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mixedUp == 0)
        #expect(cache.count <= 50)
        #expect(cache.totalBytes <= 1 << 20)
        #expect(cache.isConsistent)
    }
}
