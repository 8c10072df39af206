internal import CCurl

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
