import Foundation
import ServerAPIKit
import ServerAPITestSupport
import Testing

@testable import ServerAPIFileCache

/// Damaged, foreign and unwritable files: always a miss or a clear error, never a crash or a wrong entry.
@Suite struct FileCacheDamageTests {
    /// Ways an entry file can be damaged.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case empty, shorterThanHeader, headerOnly, truncatedByOne, truncatedHalf, appendedByte
        case flippedHeaderByte, flippedMetadataByte, flippedBodyByte, flippedLastByte, randomBytes, foreignText
        case otherVersion

        var testDescription: String { rawValue }

        func apply(to data: Data) -> Data {
            var data = data
            switch self {
            case .empty: return Data()
            case .shorterThanHeader: return data.prefix(40)
            case .headerOnly: return data.prefix(CacheFileFormat.headerSize)
            case .truncatedByOne: return data.dropLast()
            case .truncatedHalf: return data.prefix(data.count / 2)
            case .appendedByte: return data + [0]
            case .flippedHeaderByte: data[17] ^= 0x01
            case .flippedMetadataByte: data[CacheFileFormat.headerSize + 6] ^= 0x20
            case .flippedBodyByte: data[data.count - 1_000] ^= 0x80
            case .flippedLastByte: data[data.count - 1] ^= 0x01
            case .randomBytes: return Data((0..<data.count).map { _ in UInt8.random(in: 0...255) })
            case .foreignText: return Data("<html>not a cache file</html>\n".utf8)
            case .otherVersion:
                // The previous format's version with a header checksum that is right for it: only the version
                // tells the reader that the layout after the header is not its own.
                data[4] = 1
                let checksum = XXH64.hash(Data(data.prefix(56)))
                withUnsafeBytes(of: checksum.littleEndian) { data.replaceSubrange(56..<64, with: $0) }
            }
            return data
        }
    }

    @Test("a damaged or foreign entry file is a miss and is removed", arguments: Damage.allCases, [2_000, 200_000])
    func damaged(damage: Damage, bodySize: Int) async throws {
        try await withTemporaryDirectory { directory in
            let cache = FileCache(directory: directory)
            try await cache.store(makeEntry(size: bodySize, seed: 5), for: .test("a"))
            let file = cache.fileURL(for: .test("a"))
            try damage.apply(to: Data(contentsOf: file)).write(to: file)
            #expect(await cache.lookup(.test("a")) == nil)
            #expect(!FileManager.default.fileExists(atPath: file.path))
            // The cache still works afterwards.
            let entry = makeEntry(size: bodySize, seed: 6, expiresAt: .distantFuture)
            try await cache.store(entry, for: .test("a"))
            #expect(await cache.lookup(.test("a")) == entry)
        }
    }

    @Test("a fresh instance also rejects damaged files; removeExpired removes those with a bad header")
    func damagedAfterRestart() async throws {
        try await withTemporaryDirectory { directory in
            for name in ["a", "b", "c"] {
                try await FileCache(directory: directory).store(makeEntry(size: 3_000, seed: 1), for: .test(name))
            }
            let paths = FileCache(directory: directory)
            let a = paths.fileURL(for: .test("a"))
            let b = paths.fileURL(for: .test("b"))
            try Damage.flippedHeaderByte.apply(to: Data(contentsOf: a)).write(to: a)
            try Damage.flippedBodyByte.apply(to: Data(contentsOf: b)).write(to: b)
            let restarted = FileCache(directory: directory)
            #expect(try restarted.removeExpired() == 1)
            #expect(!FileManager.default.fileExists(atPath: a.path))
            #expect(await restarted.lookup(.test("b")) == nil)
            #expect(!FileManager.default.fileExists(atPath: b.path))
            #expect(await restarted.lookup(.test("c")) != nil)
        }
    }

    @Test("a file checked and trusted is checked again once replaced or truncated")
    func changedAfterTrust() async throws {
        try await withTemporaryDirectory { directory in
            // Trusted at once (no racy-timestamp delay), so that the second lookup skips the body hash.
            let cache = FileCache(directory: directory, configuration: .init(), now: { Date() }, trustDelay: 0)
            for name in ["a", "b"] {
                try await cache.store(makeEntry(size: 100_000, seed: 1, expiresAt: .distantFuture), for: .test(name))
                #expect(await cache.lookup(.test(name)) != nil)
                #expect(await cache.lookup(.test(name)) != nil)
            }
            let a = cache.fileURL(for: .test("a"))
            try Damage.flippedBodyByte.apply(to: Data(contentsOf: a)).write(to: a, options: .atomic)
            #expect(await cache.lookup(.test("a")) == nil)
            let b = try FileHandle(forWritingTo: cache.fileURL(for: .test("b")))
            try b.truncate(atOffset: 90_000)
            try b.close()
            #expect(await cache.lookup(.test("b")) == nil)
        }
    }

    @Test("with verifiesEveryRead, an overwrite in place of the same size is caught on the next hit")
    func verifiesEveryRead() async throws {
        try await withTemporaryDirectory { directory in
            let cache = FileCache(
                directory: directory, configuration: .init(verifiesEveryRead: true), now: { Date() }, trustDelay: 0)
            try await cache.store(makeEntry(size: 100_000, seed: 1, expiresAt: .distantFuture), for: .test("a"))
            #expect(await cache.lookup(.test("a")) != nil)
            let handle = try FileHandle(forWritingTo: cache.fileURL(for: .test("a")))
            try handle.seek(toOffset: 99_000)
            try handle.write(contentsOf: Data([0xff, 0xfe, 0xfd]))
            try handle.close()
            #expect(await cache.lookup(.test("a")) == nil)
        }
    }

    @Test("a symbolic link in place of an entry is never followed, and a store replaces the link, not its target")
    func symbolicLink() async throws {
        try await withTemporaryDirectory { directory in
            let cache = FileCache(directory: directory.appendingPathComponent("cache"))
            let entryFile = cache.fileURL(for: .test("a"))
            try await cache.store(makeEntry("a", expiresAt: .distantFuture), for: .test("a"))
            // A valid entry for the very key, reached through a link: still not read.
            let target = directory.appendingPathComponent("elsewhere")
            try FileManager.default.moveItem(at: entryFile, to: target)
            try FileManager.default.createSymbolicLink(at: entryFile, withDestinationURL: target)
            let original = try Data(contentsOf: target)
            #expect(await cache.lookup(.test("a")) == nil)
            #expect(FileManager.default.fileExists(atPath: target.path))

            try await cache.store(makeEntry("b", expiresAt: .distantFuture), for: .test("a"))
            #expect(await cache.lookup(.test("a"))?.body == Data("b".utf8))
            let type = try FileManager.default.attributesOfItem(atPath: entryFile.path)[.type] as? FileAttributeType
            #expect(type == .typeRegular)
            #expect(try Data(contentsOf: target) == original)
        }
    }

    @Test("a writer killed mid-write leaves the old entry readable and the half file unused")
    func killedWriter() async throws {
        try await withTemporaryDirectory { directory in
            let cache = FileCache(directory: directory)
            let old = makeEntry(size: 50_000, seed: 1, expiresAt: .distantFuture)
            try await cache.store(old, for: .test("a"))
            // What a killed writer leaves: the first part of a newer entry, under a temporary name.
            let newer = CacheFileFormat.encodePrefix(makeEntry(size: 50_000, seed: 2), key: .test("a"))
            let partial = directory.appendingPathComponent(".tmp-999999-deadbeef")
            try Data(newer + [1, 2, 3]).write(to: partial)
            #expect(await cache.lookup(.test("a")) == old)
            // A new instance does not take a recent temporary file for a left-over: its writer may be alive.
            let restarted = FileCache(directory: directory)
            #expect(await restarted.lookup(.test("a")) == old)
            #expect(restarted.count == 1)
            #expect(FileManager.default.fileExists(atPath: partial.path))
        }
    }

    @Test(
        "a stored age no writer stores is damage, not a trap", arguments: [1e300, -1, .nan, .infinity, 4_294_967_297])
    func impossibleAge(seconds: Double) {
        // 1e300 s overflowed `Duration` and stopped the process (found by the cachefile fuzzer).
        #expect(throws: CacheFileFormat.Invalid.self) { try CacheFileFormat.age(seconds) }
    }

    @Test("a stored age up to the cap reads back as it was")
    func possibleAge() throws {
        #expect(try CacheFileFormat.age(0) == .zero)
        #expect(try CacheFileFormat.age(7200.5) == .milliseconds(7_200_500))
        #expect(try CacheFileFormat.age(4_294_967_296) == .seconds(4_294_967_296))
    }

    @Test("a missing directory is an empty cache, and the first store creates it")
    func missingDirectory() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("not/yet/there")
            let cache = FileCache(directory: directory)
            #expect(await cache.lookup(.test("a")) == nil)
            #expect(try cache.removeExpired() == 0)
            try await cache.removeAll()
            try await cache.store(makeEntry("a"), for: .test("a"))
            #expect(await cache.lookup(.test("a"))?.body == Data("a".utf8))
            // Removed behind the cache's back: the next store creates it again.
            try FileManager.default.removeItem(at: root.appendingPathComponent("not"))
            #expect(await cache.lookup(.test("a")) == nil)
            try await cache.store(makeEntry("b"), for: .test("b"))
            #expect(await cache.lookup(.test("b"))?.body == Data("b".utf8))
        }
    }

    @Test("a directory that cannot be created is a clear file-system error from store, never a crash")
    func unwritableDirectory() async throws {
        try await withTemporaryDirectory { root in
            // A regular file where a parent directory should be: mkdir fails even for root.
            let blocker = root.appendingPathComponent("blocker")
            try Data("file".utf8).write(to: blocker)
            let cache = FileCache(directory: blocker.appendingPathComponent("cache"))
            let error = await #expect(throws: ServerAPIError.self) {
                try await cache.store(makeEntry("a"), for: .test("a"))
            }
            #expect(error?.kind == .fileSystem)
            #expect(error?.message.contains(blocker.path) == true)
            #expect(await cache.lookup(.test("a")) == nil)
        }
    }

    @Test("a regular file in place of the directory is a clear file-system error")
    func directoryIsAFile() async throws {
        try await withTemporaryDirectory { root in
            let path = root.appendingPathComponent("cache")
            try Data("file".utf8).write(to: path)
            let cache = FileCache(directory: path)
            let error = await #expect(throws: ServerAPIError.self) {
                try await cache.store(makeEntry("a"), for: .test("a"))
            }
            #expect(error?.kind == .fileSystem)
            #expect(error?.message.contains("not a directory") == true)
        }
    }

    @Test(
        "a read-only file system is a clear file-system error",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self")))
    func readOnlyFileSystem() async throws {
        // /proc refuses new files to everyone, root included.
        let cache = FileCache(directory: URL(fileURLWithPath: "/proc/self"))
        let error = await #expect(throws: ServerAPIError.self) {
            try await cache.store(makeEntry("a"), for: .test("a"))
        }
        #expect(error?.kind == .fileSystem)
        #expect(await cache.lookup(.test("a")) == nil)
    }

    @Test("two instances on one directory, storing and reading at once, never corrupt each other")
    func twoInstances() async throws {
        try await withTemporaryDirectory { directory in
            let first = FileCache(
                directory: directory, configuration: .init(sizeLimit: 1 << 20, synchronizesWrites: false))
            let second = FileCache(
                directory: directory, configuration: .init(sizeLimit: 1 << 20, synchronizesWrites: false))
            let problems = await withTaskGroup(of: Int.self) { group in
                for worker in 0..<8 {
                    let cache = worker % 2 == 0 ? first : second
                    group.addTask {
                        var problems = 0
                        for step in 0..<120 {
                            let name = "k\((worker + step) % 10)"
                            // Two versions of every key, of different sizes, so a mix-up shows.
                            let version = UInt8((worker + step) % 2)
                            let size = version == 0 ? 3_000 : 90_000
                            if step % 3 == 0 {
                                do {
                                    try await cache.store(makeEntry(size: size, seed: version), for: .test(name))
                                } catch { problems += 1 }
                            } else if let entry = await cache.lookup(.test(name)) {
                                let expected =
                                    entry.body.count == 3_000
                                    ? makeEntry(size: 3_000, seed: 0) : makeEntry(size: 90_000, seed: 1)
                                if entry.body != expected.body || entry.headers != expected.headers { problems += 1 }
                            }
                        }
                        return problems
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(problems == 0)
            let third = FileCache(directory: directory)
            for index in 0..<10 {
                #expect(await third.lookup(.test("k\(index)")) != nil)
            }
        }
    }
}
