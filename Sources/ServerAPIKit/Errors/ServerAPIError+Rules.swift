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

extension ServerAPIError {
    /// The error for a call that ran past its total timeout: `timedOut`, saying how long it was.
    /// - Parameters:
    ///   - timeout: The call's total timeout.
    ///   - underlying: The backend's own error, when there is one.
    /// - Returns: The error, with the same message from every transport.
    public static func timedOut(after timeout: Duration, underlying: (any Error)? = nil) -> ServerAPIError {
        ServerAPIError(
            .timedOut, "the request timed out after \(StallTimeout.seconds(timeout))", underlying: underlying)
    }

    /// The error for a download whose file (its `.part` file, or the validator next to it) is a symbolic
    /// link: `fileSystem`, naming the link, with `POSIXError(.ELOOP)` underneath. A download never writes
    /// through a link, whose target could be any file the process may write.
    /// - Parameters:
    ///   - path: The link.
    ///   - requestID: The call's id.
    ///   - url: The call's URL.
    /// - Returns: The error.
    package static func symbolicLink(at path: String, requestID: RequestID? = nil, url: URL? = nil) -> ServerAPIError {
        ServerAPIError(
            .fileSystem,
            "\(path) is a symbolic link: a download never writes through one (remove it, or choose another file)",
            requestID: requestID, url: url, underlying: POSIXError(.ELOOP))
    }

    /// The error for a response body larger than the call's `maxResponseSize`.
    /// - Parameters:
    ///   - limit: The call's `maxResponseSize`.
    ///   - announced: The decoded length the response announced, when the head gave the failure away;
    ///     `nil` when the body was found too large as it arrived.
    ///   - status: The response's status (0 when there was none yet).
    /// - Returns: A `responseTooLarge` error.
    @usableFromInline
    package static func responseTooLarge(limit: Int64, announced: Int64? = nil, status: Int) -> ServerAPIError {
        let message =
            if let announced {
                "the response body is \(announced) bytes, more than the limit of \(limit) bytes"
            } else {
                "the response body is more than the limit of \(limit) bytes"
            }
        return ServerAPIError(.responseTooLarge, message, status: status > 0 ? status : nil)
    }

    /// The error for a content-coded response that expands more than the call's `maxDecompressionRatio`
    /// allows (a decompression bomb): `responseTooLarge`, saying it was the ratio.
    /// - Parameters:
    ///   - ratio: The call's `maxDecompressionRatio`.
    ///   - encoded: The encoded bytes the check used (received so far, or the encoded `Content-Length`).
    ///   - decoded: The decoded bytes received so far.
    ///   - status: The response's status (0 when there was none yet).
    /// - Returns: A `responseTooLarge` error.
    @usableFromInline
    package static func decompressionRatioExceeded(ratio: Int, encoded: Int64, decoded: Int64, status: Int)
        -> ServerAPIError
    {
        ServerAPIError(
            .responseTooLarge,
            decompressionRatioPrefix + "\(decoded) bytes from \(encoded) encoded bytes, more than "
                + "the decompression ratio limit of \(ratio) to 1",
            status: status > 0 ? status : nil)
    }

    /// Whether this is the error of `decompressionRatioExceeded(ratio:encoded:decoded:status:)`: a body that
    /// expanded past the ratio limit, which a larger size limit does not lift.
    package var isDecompressionRatioExceeded: Bool {
        kind == .responseTooLarge && message.hasPrefix(Self.decompressionRatioPrefix)
    }

    private static let decompressionRatioPrefix = "the response body decompresses to "

    /// The error for a content-coded body a transport stopped decoding because it expanded past what the transport
    /// can hold, with no ratio limit to stop it first: `responseTooLarge`, saying it was a decompression bomb.
    /// - Parameters:
    ///   - what: What expanded past what.
    ///   - cause: What the transport's library said.
    ///   - status: The response's status (0 when there was none yet).
    package static func decompressionBomb(_ what: String, cause: String, status: Int) -> ServerAPIError {
        ServerAPIError(.responseTooLarge, what + decompressionBombMark + cause + ")", status: status > 0 ? status : nil)
    }

    /// Whether this is the error of `decompressionBomb(_:cause:status:)`.
    package var isDecompressionBomb: Bool {
        kind == .responseTooLarge && message.contains(Self.decompressionBombMark)
    }

    private static let decompressionBombMark = ": a decompression bomb ("

    /// The error for a redirect beyond the call's `RedirectPolicy.follow(max:)`.
    /// - Parameters:
    ///   - max: The most redirects the call follows.
    ///   - status: The status of the redirect that was one too many.
    /// - Returns: A `tooManyRedirects` error.
    package static func tooManyRedirects(max: Int, status: Int) -> ServerAPIError {
        ServerAPIError(
            .tooManyRedirects, "the server redirected more than \(max) \(max == 1 ? "time" : "times")",
            status: status > 0 ? status : nil)
    }

    /// The error for a redirect whose `Location` is not an http(s) URL (`ftp:`, `mailto:`, no host, …).
    /// - Parameters:
    ///   - location: The `Location` the server sent, as it sent it.
    ///   - status: The redirect's status.
    /// - Returns: A `network` error: the server, not the call, is at fault.
    package static func redirectNotHTTP(to location: String, status: Int) -> ServerAPIError {
        ServerAPIError(
            .network, "the server redirected to \"\(location)\", which is not an http(s) URL",
            status: status > 0 ? status : nil)
    }

    /// The error for a call whose URL a transport cannot send: not http(s), or without a host.
    /// - Parameter url: The call's URL.
    /// - Returns: An `invalidRequest` error.
    package static func notHTTPURL(_ url: URL) -> ServerAPIError {
        ServerAPIError(.invalidRequest, "\(url.absoluteString) is not an http(s) URL")
    }
}
