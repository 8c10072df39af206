#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ServerAPIManager {
    /// A conditional request made from a stored entry's validators (`ETag`, `Last-Modified`),
    /// so that the server can answer 304 Not Modified instead of the whole body.
    struct Revalidation: Sendable {
        /// The stored entry.
        let entry: CacheEntry
        /// The call, accepting 304 as well.
        let api: ServerAPI
        /// The request, with `If-None-Match` / `If-Modified-Since`.
        let base: TransportRequest
        /// The headers of the 304, once one arrived.
        let notModified = NotModifiedHeaders()

        /// The stored response, its headers updated with those of the 304.
        func refreshedResponse(_ response: TransportResponse) -> TransportResponse {
            TransportResponse(
                status: entry.status, headers: Self.merge(entry.headers, response.headers), body: .data(entry.body),
                url: entry.url, metrics: response.metrics)
        }

        /// Stored headers updated with those a 304 carries (RFC 9111 §4.3.4); its framing headers are not taken.
        static func merge(_ stored: HTTPHeaders, _ update: HTTPHeaders) -> HTTPHeaders {
            var merged = stored
            let names = Set(update.map { $0.name.lowercased() }).subtracting(["content-length", "transfer-encoding"])
            for name in names {
                merged.remove(name: name)
                for value in update.values(for: name) { merged.add(name: name, value: value) }
            }
            return merged
        }
    }

    /// Holds the headers of a 304, and when it arrived, between the formatting of the result and
    /// the refresh of the entry.
    final class NotModifiedHeaders: Sendable {
        private let state = Locked<(headers: HTTPHeaders, receivedAt: Date)?>(nil)
        var value: (headers: HTTPHeaders, receivedAt: Date)? { state.withLock { $0 } }
        func set(_ headers: HTTPHeaders, receivedAt date: Date) { state.withLock { $0 = (headers, date) } }
    }

    /// The conditional request for a call, or `nil`: HTTP cache headers are not honoured, the
    /// mode does not both read and load (`returnCacheElseLoad`, `loadElseReturnCache`), the call
    /// sets its own validators, or no stored entry has an `ETag` or `Last-Modified`.
    func revalidation(for api: ServerAPI, base: TransportRequest, key: CacheKey?) async -> Revalidation? {
        guard configuration.honorsHTTPCacheHeaders, let cache, let key,
            api.cacheMode == .returnCacheElseLoad || api.cacheMode == .loadElseReturnCache,
            !base.headers.contains("If-None-Match"), !base.headers.contains("If-Modified-Since"),
            let entry = try? await cache.lookup(key)
        else { return nil }
        let etag = entry.headers["ETag"]
        let lastModified = entry.headers["Last-Modified"]
        guard etag != nil || lastModified != nil else { return nil }
        var request = base
        if let etag { request.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified { request.headers.add(name: "If-Modified-Since", value: lastModified) }
        var conditional = api
        switch api.acceptableStatus {
        case .any: break
        case .successful: conditional.acceptableStatus = .codes(Set(200..<300).union([304]))
        case .codes(let codes): conditional.acceptableStatus = .codes(codes.union([304]))
        }
        return Revalidation(entry: entry, api: conditional, base: request)
    }

    /// After a 304: stores the entry again as just received, with the 304's headers merged in.
    func refresh(_ revalidation: Revalidation, api: ServerAPI, in cache: any CachePolicy, key: CacheKey) async {
        guard let (update, receivedAt) = revalidation.notModified.value else { return }
        var entry = revalidation.entry
        entry.headers = Revalidation.merge(entry.headers, update)
        entry.storedAt = receivedAt
        entry.expiresAt = expiry(of: entry.headers, api: api, receivedAt: receivedAt)
        try? await cache.store(entry, for: key)
    }

    /// When a response received at `date` stops being fresh: the call's TTL; else, when HTTP cache
    /// headers are honoured, what `Cache-Control` says (`no-cache` wins over any TTL); else the
    /// manager's default TTL.
    func expiry(of headers: HTTPHeaders, api: ServerAPI, receivedAt date: Date) -> Date {
        if configuration.honorsHTTPCacheHeaders {
            let control = CacheControl(headers)
            if control.noCache { return date }
            if api.cacheTTL == nil, let expiry = control.expiry(headers: headers, receivedAt: date) { return expiry }
        }
        return date.addingTimeInterval((api.cacheTTL ?? configuration.defaultCacheTTL).seconds)
    }
}
