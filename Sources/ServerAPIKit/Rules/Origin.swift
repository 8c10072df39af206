#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The origin of an http(s) URL (RFC 6454): scheme, host and port, compared ASCII case-insensitively
/// without allocating lower-cased copies.
struct Origin: Equatable {
    var scheme: String
    var host: String
    var port: Int?

    init(_ url: URL) {
        scheme = url.scheme ?? ""
        host = url.host ?? ""
        port = url.port ?? Self.defaultPort(scheme)
    }

    static func == (a: Origin, b: Origin) -> Bool {
        a.port == b.port && HTTPHeaders.sameName(a.scheme, b.scheme) && HTTPHeaders.sameName(a.host, b.host)
    }

    /// Whether a scheme is http or https, in any case.
    static func isHTTP(_ scheme: String) -> Bool {
        HTTPHeaders.sameName(scheme, "http") || HTTPHeaders.sameName(scheme, "https")
    }

    /// The port a URL without one connects to; `nil` for schemes other than http(s).
    static func defaultPort(_ scheme: String) -> Int? {
        if HTTPHeaders.sameName(scheme, "http") { return 80 }
        if HTTPHeaders.sameName(scheme, "https") { return 443 }
        return nil
    }
}
