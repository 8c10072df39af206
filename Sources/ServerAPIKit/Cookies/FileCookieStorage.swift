#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Cookies kept in a JSON file, session cookies included (a saved session, as `sapi --session` uses).
///
/// The file is read once, when the storage is created, and written again after each change: to a
/// temporary file in the same folder, created with permissions 0600, then renamed over the old one, so
/// that a reader never sees half a file. A file that cannot be read as a jar (corrupt, truncated, another
/// format) is treated as empty and replaced at once, never read back as valid; a cookie in it that a
/// response could not have set (an empty name, a control character) is dropped. Names and values beyond
/// ASCII are kept as UTF-8 text.
public final class FileCookieStorage: CookieStorage {
    /// The file the cookies are saved to after each change and read from at start.
    public let url: URL
    private let jar: Locked<CookieJar>
    private let now: @Sendable () -> Date

    private struct Contents: Codable {
        var format: String
        var version: Int
        var cookies: [Cookie]
    }

    private static let format = "serverapikit-cookies"

    /// Opens (or starts) the jar in `url`; its folder is created (0700) when missing.
    /// - Parameters:
    ///   - url: The file.
    ///   - limits: The caps per domain and in all.
    ///   - now: The current time, for expiry; tests pass one they control.
    public init(url: URL, limits: CookieJar.Limits = .init(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.url = url
        self.now = now
        var jar = CookieJar(limits: limits)
        var replace = false
        if let data = FileManager.default.contents(atPath: url.path) {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            if let contents = try? decoder.decode(Contents.self, from: data), contents.format == Self.format,
                contents.version == 1
            {
                // A cookie a response could not have set (a control character, an empty name) is dropped,
                // so the file never puts into a header what the parser would refuse.
                for cookie in contents.cookies where cookie.defect == nil { jar.store(cookie, now: now()) }
                // Written back when loading dropped something, so the file holds what the jar holds.
                replace = jar.cookies.count != contents.cookies.count
            } else {
                replace = true
            }
        }
        self.jar = Locked(jar)
        if replace { try? save(jar) }
    }

    public func cookies(for url: URL) -> [Cookie] {
        let now = now()
        return jar.withLock { $0.cookies(for: url, now: now) }
    }

    public func store(setCookieLines lines: [String], from url: URL) {
        let now = now()
        jar.withLock { jar in
            // Written under the lock, so that two stores never write in the wrong order.
            if jar.store(setCookieLines: lines, from: url, now: now) { try? save(jar) }
        }
    }

    public var allCookies: [Cookie] {
        let now = now()
        return jar.withLock { $0.cookies.filter { !$0.isExpired(at: now) } }
    }

    public func removeAll() {
        jar.withLock { jar in
            jar.removeAll()
            try? save(jar)
        }
    }

    /// Writes the jar whole, readable by its owner only (`PrivateFile`).
    private func save(_ jar: CookieJar) throws {
        var jar = jar
        jar.removeExpired(now: now())
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(Contents(format: Self.format, version: 1, cookies: jar.cookies))
        try PrivateFile.write(data, to: url)
    }
}
