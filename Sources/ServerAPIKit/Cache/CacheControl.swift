#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Cache-Control` directives a private client cache acts on, read from headers.
///
/// Honoured (when `ServerAPIManager.Configuration.honorsHTTPCacheHeaders` is on): `no-store`
/// (not stored; in a request too), `no-cache` (stored, but stale at once, so it is revalidated
/// before use) and `max-age` (the entry's lifetime, less the response's `Age`). An invalid
/// `max-age` counts as 0, as RFC 9111 asks. Everything else is ignored: a client cache has no
/// use for `public`, `private` or `s-maxage`.
public struct CacheControl: Sendable, Hashable {
    /// The response must not be stored.
    public var noStore = false
    /// The response may be stored but must be revalidated before each use.
    public var noCache = false
    /// How many seconds the response stays fresh, from when it was generated.
    public var maxAge: Int?

    /// Reads every `Cache-Control` field of `headers`.
    /// - Parameter headers: Request or response headers.
    public init(_ headers: HTTPHeaders) {
        for value in headers.values(for: "Cache-Control") {
            for directive in value.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1)
                guard let first = parts.first else { continue }
                let name = HTTPSyntax.trimmed(first).lowercased()
                let argument =
                    parts.count > 1
                    ? String(HTTPSyntax.stripping("\"", from: HTTPSyntax.trimmed(parts[1])))
                    : nil
                switch name {
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "max-age": maxAge = argument.flatMap { Int($0) }.map { max(0, $0) } ?? 0
                default: break
                }
            }
        }
    }

    /// When a response with these headers, received at `date`, stops being fresh; `nil` when the
    /// headers say nothing about it.
    /// - Parameters:
    ///   - headers: The response headers (for `Age`).
    ///   - date: When the response was received.
    /// - Returns: The expiry, or `nil`.
    public func expiry(headers: HTTPHeaders, receivedAt date: Date) -> Date? {
        if noCache { return date }
        guard let maxAge else { return nil }
        let age = headers["Age"].flatMap { Int(HTTPSyntax.trimmed($0)) } ?? 0
        return date.addingTimeInterval(TimeInterval(max(0, maxAge - max(0, age))))
    }
}
