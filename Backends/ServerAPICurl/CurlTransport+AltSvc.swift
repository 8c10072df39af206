internal import CCurl
@_spi(Backend) import ServerAPIKit

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

extension CurlTransport {
    /// Where a `CurlTransport` keeps the alternative services servers announce (`Alt-Svc`, RFC 7838: libcurl's
    /// alt-svc cache), so that an `Alt-Svc: h3=":443"` answer moves the later calls to that origin onto HTTP/3.
    ///
    /// Set it in `Configuration.altSvc`. Alternatives are taken only where the configured `HTTPVersion` allows their
    /// protocol: HTTP/3 ones with `.http3` or `.http3Only`.
    ///
    /// An HTTP/3 alternative that cannot be reached (nothing answers on UDP, a firewall drops it) does not fail the
    /// call: with `.http3` the call goes again at once over TCP to the origin, and the transport marks the
    /// alternative broken, as browsers do: the origin's calls ignore it for five minutes, then for twice as long
    /// each time it fails again. The cache itself keeps the announcement until its `ma` (max-age) ends.
    public struct AltSvcCache: Sendable, Hashable {
        /// The file, or `nil` for one of the transport's own.
        let file: URL?

        /// Kept for the transport's life: libcurl's transfers share it through a file of the transport's own in the
        /// temporary folder, removed with the transport.
        public static let memory = AltSvcCache(file: nil)

        /// Kept in `file` (libcurl's alt-svc format), read when a call starts and written when it ends, so that it
        /// outlives the process: beside a cookie jar, say. The file need not exist yet; its folder must.
        /// - Parameter file: The cache file.
        public static func file(_ file: URL) -> AltSvcCache { AltSvcCache(file: file) }
    }
}

/// A transport's alt-svc cache file, shared by its loops' transfers, and the HTTP/3 alternatives that failed; the
/// file of `AltSvcCache.memory` is removed when the last loop lets go of it.
///
/// libcurl keeps the cache in each easy handle, reads the file when `CURLOPT_ALTSVC` is set and writes it only when
/// the handle is cleaned up: a loop therefore makes a new handle after each transfer that used it
/// (`CurlEasyHandle.renew()`), so that what one transfer learned reaches the next, on any loop. libcurl neither
/// falls back from an alternative it cannot reach nor offers a way to drop one: a broken alternative is kept out of
/// a transfer by leaving HTTP/3 out of the protocols it may take alternatives for (`CURLOPT_ALTSVC_CTRL`).
final class CurlAltSvcFile: Sendable {
    let path: String
    private let owned: Bool
    /// The origins (`host:port`) whose HTTP/3 alternative failed: until when their calls ignore it, and how many
    /// times it failed.
    private let broken = Locked<[String: (until: ContinuousClock.Instant, failures: Int)]>([:])

    /// How long an alternative that failed once is ignored; each further failure doubles it, up to two days
    /// (Chromium's rule).
    static let brokenPeriod: Duration = .seconds(300)
    static let longestBrokenPeriod: Duration = .seconds(2 * 24 * 3600)

    init(_ cache: CurlTransport.AltSvcCache) {
        if let file = cache.file {
            path = file.path
            owned = false
        } else {
            let name = "serverapikit-altsvc-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).txt"
            path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
            owned = true
        }
    }

    deinit {
        if owned { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Hands the cache to `easy`'s next transfer, to `url`: every alternative protocol is accepted, but HTTP/3 while
    /// the origin's HTTP/3 alternative is marked broken, and the configured HTTP version decides which are used.
    func apply(to easy: CurlEasyHandle, url: URL) throws(ServerAPIError) {
        let protocols =
            isBroken(Self.origin(url)) ? CURLALTSVC_H1 | CURLALTSVC_H2 : CURLALTSVC_H1 | CURLALTSVC_H2 | CURLALTSVC_H3
        try easy.set(CURLOPT_ALTSVC_CTRL, Int(protocols))
        try easy.set(CURLOPT_ALTSVC, path)
    }

    /// Called when a call to `url` could not connect: when the cache holds an unexpired HTTP/3 alternative for its
    /// origin that the call may have taken (not already marked broken), marks it broken and returns `true`: the
    /// call should go again, over TCP.
    func alternativeFailed(for url: URL, now: Date = Date()) -> Bool {
        let origin = Self.origin(url)
        guard Self.http3Alternatives(in: path, for: origin, now: now) else { return false }
        let instant = ContinuousClock.now
        // Checked and marked in one step: two calls failing at once count as one failure.
        return broken.withLock { table in
            if let mark = table[origin], instant < mark.until { return false }
            let failures = (table[origin]?.failures ?? 0) + 1
            let period = Self.brokenPeriod * (1 << min(failures - 1, 16))
            table[origin] = (instant + min(period, Self.longestBrokenPeriod), failures)
            return true
        }
    }

    /// The origins whose HTTP/3 alternative is ignored now (tests).
    var brokenOrigins: [String] {
        let now = ContinuousClock.now
        return broken.withLock { table in table.filter { now < $0.value.until }.keys.sorted() }
    }

    private func isBroken(_ origin: String) -> Bool {
        let now = ContinuousClock.now
        return broken.withLock { table in table[origin].map { now < $0.until } ?? false }
    }

    /// `host:port` of `url`, as libcurl's cache file writes an origin (an IPv6 address without its brackets).
    static func origin(_ url: URL) -> String {
        "\(bare(url.host ?? "")):\(url.port ?? (url.scheme?.lowercased() == "http" ? 80 : 443))"
    }

    /// Whether libcurl's cache file at `path` announces an HTTP/3 alternative for `origin` that has not expired at
    /// `now`. A line is `src-alpn src-host src-port dst-alpn dst-host dst-port "YYYYMMDD HH:MM:SS" persist prio`,
    /// the date in UTC.
    static func http3Alternatives(in path: String, for origin: String, now: Date) -> Bool {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 8, fields[3] == "h3", "\(bare(fields[1])):\(fields[2])" == origin else { continue }
            // Unreadable, it counts as unexpired: libcurl read the same line.
            guard let expiry = expiry(fields[6], fields[7]) else { return true }
            if expiry > now { return true }
        }
        return false
    }

    /// A host name in lower case, an IPv6 address without its brackets.
    private static func bare(_ host: some StringProtocol) -> String {
        host.lowercased().filter { $0 != "[" && $0 != "]" }
    }

    /// The date of a cache line's `"YYYYMMDD` and `HH:MM:SS"` fields (UTC).
    private static func expiry(_ day: Substring, _ time: Substring) -> Date? {
        let digits = (day + time).filter(\.isNumber).compactMap(\.wholeNumberValue)
        guard digits.count == 14 else { return nil }
        func number(_ range: Range<Int>) -> Int { digits[range].reduce(0) { $0 * 10 + $1 } }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar.date(
            from: DateComponents(
                year: number(0..<4), month: number(4..<6), day: number(6..<8), hour: number(8..<10),
                minute: number(10..<12), second: number(12..<14)))
    }
}
