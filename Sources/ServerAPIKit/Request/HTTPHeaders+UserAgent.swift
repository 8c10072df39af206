extension HTTPHeaders {
    /// The `User-Agent` every transport sends for a request that sets none: `ServerAPIKit/<version>`.
    public static let defaultUserAgent = "ServerAPIKit/\(serverAPIKitVersion)"

    /// Adds `User-Agent: ServerAPIKit/<version>` unless a `User-Agent` field is already there (whatever
    /// its case or value, empty included).
    ///
    /// Transports call it on the headers they send, so that every backend sends the same default (and
    /// none sends its library's own); a call replaces it with its own `User-Agent`, directly or through
    /// the manager's default headers or a plugin.
    package mutating func addDefaultUserAgent() {
        if !contains("User-Agent") { add(name: "User-Agent", value: Self.defaultUserAgent) }
    }
}
