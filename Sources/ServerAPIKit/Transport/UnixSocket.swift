#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// HTTP over a Unix-domain socket: the URL forms and the rules every transport applies.
///
/// A call reaches a server listening on a socket in one of two ways:
/// - a `http+unix://` (or `https+unix://`) URL whose host is the socket's path, percent-encoded, as
///   async-http-client writes them: `http+unix://%2Fvar%2Frun%2Fapp.sock/items?x=1`. It is sent as
///   `http://localhost/items?x=1` (so `Host: localhost`) through `/var/run/app.sock`;
/// - an ordinary URL with `ServerAPI.unixSocket(_:)` (`TransportRequest.unixSocketPath`): the URL's host
///   is the `Host` header, and the connection goes to the socket.
package enum UnixSocket {
    /// The longest socket path the system accepts (`sun_path` holds 108 bytes with its NUL on Linux).
    package static let maxPathLength = 107

    /// Splits a `http+unix://` or `https+unix://` URL into the http(s) URL to send and the socket's path.
    /// - Returns: `nil` for any other URL, or one whose host is not a percent-encoded path.
    package static func split(_ url: URL) -> (url: URL, socketPath: String)? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http+unix" || scheme == "https+unix",
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let encoded = components.percentEncodedHost, !encoded.isEmpty,
            let socketPath = PercentEncoding.decode(encoded), !socketPath.isEmpty
        else { return nil }
        components.scheme = scheme == "http+unix" ? "http" : "https"
        components.percentEncodedHost = "localhost"
        components.port = nil
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        guard let target = components.url else { return nil }
        return (target, socketPath)
    }

    /// The URL async-http-client's form gives for a socket and a request path.
    /// - Parameters:
    ///   - socketPath: The socket.
    ///   - path: The request's path and query, from "/".
    ///   - secure: `https+unix` rather than `http+unix`.
    package static func url(socketPath: String, path: String = "/", secure: Bool = false) -> URL? {
        // Foundation's `urlHostAllowed` without "/", ":" and "%": unreserved, sub-delims, "[" and "]".
        let host = PercentEncoding.encode(socketPath) { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default: "-._~!$&'()*+,;=[]".utf8.contains(byte)
            }
        }
        let tail = path.hasPrefix("/") ? path : "/" + path
        return URL(string: (secure ? "https+unix://" : "http+unix://") + host + tail)
    }

    /// Checks a socket path: not empty, no NUL byte, and short enough for the system.
    /// - Throws: `invalidRequest` that says what is wrong.
    package static func validate(_ path: String) throws(ServerAPIError) {
        guard !path.isEmpty else { throw ServerAPIError(.invalidRequest, "the Unix socket path is empty") }
        guard !path.utf8.contains(0) else {
            throw ServerAPIError(.invalidRequest, "the Unix socket path has a NUL byte")
        }
        guard path.utf8.count <= maxPathLength else {
            throw ServerAPIError(
                .invalidRequest,
                "the Unix socket path is \(path.utf8.count) bytes long; the system accepts \(maxPathLength)")
        }
    }
}
