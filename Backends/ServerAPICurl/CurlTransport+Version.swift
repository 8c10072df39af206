internal import CCurl
import ServerAPIKit

extension CurlTransport {
    /// The version of the libcurl this process loaded (`curl_version_info`), such as `"7.88.1"`.
    ///
    /// What a transfer can do depends on it, not on the headers the package was built with: over HTTP/2,
    /// for example, libcurl 8.9 and later end a streamed request body when the response ends first, where
    /// 7.88 keeps the response's end from the reader until the request body ends (see the Streaming article).
    public static var libcurlVersion: String {
        guard let info = curl_version_info(CURLVERSION_FOURTH), let version = info.pointee.version else { return "" }
        return String(cString: version)
    }
}

extension CurlTransport {
    /// Whether the libcurl this process loaded speaks HTTP/3 (`CURL_VERSION_HTTP3`): Debian's GnuTLS flavour from
    /// 8.x does (ngtcp2 and nghttp3), its OpenSSL flavour does not. `HTTPVersion.http3` and `.http3Only` need it.
    public static var supportsHTTP3: Bool {
        guard let info = curl_version_info(CURLVERSION_FOURTH) else { return false }
        return info.pointee.features & CURL_VERSION_HTTP3 != 0
    }

    /// The TLS library of the libcurl this process loaded, as it names itself: `"OpenSSL/3.0.19"`,
    /// `"GnuTLS/3.7.9"`.
    public static var tlsLibrary: String {
        guard let info = curl_version_info(CURLVERSION_FOURTH), let name = info.pointee.ssl_version else { return "" }
        return String(cString: name)
    }

    /// Whether `CURLINFO_SSL_VERIFYRESULT` is OpenSSL's X509 code: with GnuTLS it holds GnuTLS's status bits.
    static let verifyResultIsX509 = tlsLibrary.hasPrefix("OpenSSL")

    /// Why `version` cannot be used with the loaded libcurl, or `nil`.
    static func refusal(_ version: HTTPVersion) -> ServerAPIError? {
        guard version == .http3 || version == .http3Only, !supportsHTTP3 else { return nil }
        return ServerAPIError(
            .unsupported,
            "HTTP version \(version) needs a libcurl built with HTTP/3; the loaded libcurl \(libcurlVersion) "
                + "(\(tlsLibrary)) has none: install libcurl 8 with HTTP/3, such as Debian's GnuTLS flavour "
                + "(libcurl4-gnutls-dev on Debian 13, or from bookworm-backports on Debian 12), and build against it")
    }
}
