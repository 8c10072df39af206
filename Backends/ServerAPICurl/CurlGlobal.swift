internal import CCurl

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process-wide libcurl set-up, done once before the first multi handle is made.
enum CurlGlobal {
    /// The result of `curl_global_init`: `nil` when it succeeded, else libcurl's explanation.
    ///
    /// A `static let` is initialised exactly once, thread-safely, on first use, which is what
    /// `curl_global_init` (not thread-safe in every libcurl build) requires. It is never undone with
    /// `curl_global_cleanup`: other code in the process may be using libcurl too.
    static let initializationFailure: String? = {
        // Every easy handle sets CURLOPT_NOSIGNAL, so libcurl no longer shields us from SIGPIPE
        // when a peer closes a socket mid-write: ignore it for the whole process, as SwiftNIO does.
        _ = signal(SIGPIPE, SIG_IGN)
        let code = ccurl_global_init_all()
        guard code != CURLE_OK else { return nil }
        return String(cString: curl_easy_strerror(code))
    }()
}
