import Foundation

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
        copy.cacheableMethods.formUnion(methods)
        return copy
    }

    /// Whether the manager's cache takes part in this call: its mode reads or writes the cache
    /// and its method is cacheable.
    public var usesCache: Bool { cacheMode != .never && cacheableMethods.contains(method) }
}
