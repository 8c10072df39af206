import Foundation

extension ServerAPIManager {
    /// The cache key of a call, or `nil` when the call does not use the cache (no cache, mode
    /// `never`, or a method that is not cacheable).
    ///
    /// Varying headers are read from the call and from the manager's default headers, so that
    /// an `Authorization` set either way keeps two users' entries apart. Headers added later by
    /// plugins are not part of the key: set such headers on the call, or as default headers.
    func cacheKey(for api: ServerAPI, base: TransportRequest) -> CacheKey? {
        guard cache != nil, api.usesCache else { return nil }
        guard !api.varyingHeaders.isEmpty, !configuration.defaultHeaders.isEmpty else {
            return CacheKey(request: base, varying: api.varyingHeaders)
        }
        var request = base
        for field in configuration.defaultHeaders where !request.headers.contains(field.name) {
            request.headers.add(name: field.name, value: field.value)
        }
        return CacheKey(request: request, varying: api.varyingHeaders)
    }
}
