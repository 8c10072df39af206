internal import CCurl

extension CurlTransport {
    /// The content codings this process's libcurl decodes, in the order libcurl offers them in
    /// `Accept-Encoding`: `deflate` and `gzip` with zlib, `br` with brotli, `zstd` with zstd (libcurl 7.72
    /// and later). Debian 12's libcurl 7.88 has all four.
    ///
    /// With `Configuration.automaticDecompression` (the default) a request without its own
    /// `Accept-Encoding` offers exactly these, and a body in any of them is decoded, even when the request
    /// sets its own `Accept-Encoding`. A response in another coding (`compress`, or one the server
    /// invents) fails with a `network` error saying its content coding could not be decoded, as does a
    /// body that is not valid in its coding: the caller never gets encoded bytes presented as decoded ones.
    /// Without `automaticDecompression`, nothing is offered or decoded: the body arrives as the server
    /// sent it, with its `Content-Encoding`.
    public static var supportedContentCodings: [String] {
        guard let info = curl_version_info(CURLVERSION_FOURTH) else { return [] }
        let features = info.pointee.features
        var codings: [String] = []
        if features & CURL_VERSION_LIBZ != 0 { codings += ["deflate", "gzip"] }
        if features & CURL_VERSION_BROTLI != 0 { codings.append("br") }
        if features & Self.zstdFeature != 0 { codings.append("zstd") }
        return codings
    }

    /// `CURL_VERSION_ZSTD` (1 << 26), spelled out: older curl headers do not define it.
    private static let zstdFeature: Int32 = 1 << 26
}
