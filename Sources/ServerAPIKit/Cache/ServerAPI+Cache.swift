#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ServerAPI {
    /// Returns a copy whose responses the cache may answer and store for these methods too.
    ///
    /// Only GET and HEAD are cached by default: the answer to a POST usually depends on more
    /// than its URL and body (it changes state). Opt in for calls that are queries in disguise,
    /// such as a search sent as a POST with a JSON body; the body's digest is part of the key.
    /// ```swift
    /// let search = ServerAPI(host: "https://api.example.com", path: "/search", method: .post)
    ///     .json(["q": "swift"])
    ///     .cache(.returnCacheElseLoad, ttl: .seconds(60))
    ///     .cacheable(methods: .post)
    /// ```
    /// - Parameter methods: Methods to add to those the cache may be used for.
    /// - Returns: The modified copy.
    public func cacheable(methods: HTTPMethod...) -> ServerAPI {
        var copy = self
        copy.additionalCacheableMethods.formUnion(methods)
        return copy
    }

    /// Whether responses to this call's method may be cached: GET, HEAD, or a method the call
    /// opted in with `cacheable(methods:)`.
    package var isCacheableMethod: Bool {
        method == .get || method == .head || additionalCacheableMethods.contains(method)
    }

    /// Whether the manager's cache takes part in this call: its mode reads or writes the cache
    /// and its method is cacheable.
    package var usesCache: Bool { cacheMode != .never && isCacheableMethod }
}
