internal import CCurl
import ServerAPIKit

/// One libcurl easy handle with the error buffer it writes its messages to.
///
/// - Important: Loop thread only, like every libcurl handle the transport owns. The handle is
///   cleaned up and the buffer freed in `deinit`, so an easy handle can never outlive its buffer.
final class CurlEasyHandle {
    /// The `CURL *`.
    private(set) var raw: UnsafeMutableRawPointer
    /// `CURL_ERROR_SIZE` bytes for `CURLOPT_ERRORBUFFER`.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// Whether the options every transfer of the loop sets alike are on the handle (`CurlTransfer.configure`):
    /// they stay while the handle goes from one transfer to the next.
    var hasSharedOptions = false
    /// Whether the last transfer set an option that not every transfer sets (a method, a body, credentials, …):
    /// the handle is then reset before its next transfer, so that nothing of it carries over.
    var needsReset = false

    /// Makes a handle; `nil` when libcurl cannot allocate one.
    init?() {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        _ = ccurl_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }

    /// Forgets every option (keeping the connection and DNS caches the multi handle shares) and
    /// points libcurl at the error buffer again, ready for the next transfer.
    func reset() {
        curl_easy_reset(raw)
        startOver()
    }

    /// Clears the handle's pointers to the transfer that used it (callbacks' context, `CURLOPT_PRIVATE`, the
    /// header list it frees) and keeps every other option: the next transfer sets again each option a transfer
    /// may set differently. Only for a handle whose transfer did not need a reset (`needsReset`).
    func forgetTransfer() {
        _ = ccurl_easy_setopt_pointer(raw, CURLOPT_PRIVATE, nil)
        _ = ccurl_easy_setopt_pointer(raw, CURLOPT_WRITEDATA, nil)
        _ = ccurl_easy_setopt_pointer(raw, CURLOPT_HEADERDATA, nil)
        _ = ccurl_easy_setopt_slist(raw, CURLOPT_HTTPHEADER, nil)
        errorBuffer[0] = 0
    }

    /// Replaces the handle with a new one, as `reset()` does, cleaning the old one up: libcurl writes a handle's
    /// alt-svc cache to its file then and only then (see `CurlAltSvcFile`). Resets it instead when libcurl cannot
    /// make a new one.
    func renew() {
        guard let fresh = curl_easy_init() else { return reset() }
        curl_easy_cleanup(raw)
        raw = fresh
        startOver()
    }

    /// A handle without options (reset or new): it writes its messages to the buffer again, and the next
    /// transfer sets every option.
    private func startOver() {
        errorBuffer[0] = 0
        _ = ccurl_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer)
        hasSharedOptions = false
        needsReset = false
    }

    /// What libcurl wrote to the error buffer for the last failure, if anything.
    var errorMessage: String? {
        let message = String(cString: errorBuffer).trimmingTrailingWhitespace()
        return message.isEmpty ? nil : message
    }

    // MARK: Options

    func set(_ option: CURLoption, _ value: Int) throws(ServerAPIError) {
        try check(ccurl_easy_setopt_long(raw, option, value), option)
    }

    func set(_ option: CURLoption, _ value: Bool) throws(ServerAPIError) {
        try check(ccurl_easy_setopt_long(raw, option, value ? 1 : 0), option)
    }

    func set(_ option: CURLoption, offset value: Int64) throws(ServerAPIError) {
        try check(ccurl_easy_setopt_off_t(raw, option, curl_off_t(value)), option)
    }

    /// Sets a string option; libcurl copies the string.
    func set(_ option: CURLoption, _ value: String) throws(ServerAPIError) {
        try check(value.withCString { ccurl_easy_setopt_string(raw, option, $0) }, option)
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(ServerAPIError) {
        try check(ccurl_easy_setopt_pointer(raw, option, value), option)
    }

    func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?) throws(ServerAPIError) {
        try check(ccurl_easy_setopt_slist(raw, option, value), option)
    }

    /// Allows only http and https, with whichever option the headers we build against have (see the shim);
    /// a libcurl older than those headers may not know it, and ignores it.
    func restrictToHTTP() {
        _ = ccurl_easy_restrict_to_http(raw)
    }

    /// Sets an option a libcurl older than the one we build against may not know; ignored there.
    func setIfSupported(_ option: CURLoption, _ value: Int) {
        _ = ccurl_easy_setopt_long(raw, option, value)
    }

    func check(_ code: CURLcode, _ option: CURLoption) throws(ServerAPIError) {
        guard code == CURLE_OK else {
            throw ServerAPIError(
                .invalidRequest,
                "libcurl refused option \(option.rawValue) of the request: \(String(cString: curl_easy_strerror(code)))"
            )
        }
    }

    // MARK: Info

    func long(_ info: CURLINFO) -> Int? {
        var value = 0
        return ccurl_easy_getinfo_long(raw, info, &value) == CURLE_OK ? value : nil
    }

    func offset(_ info: CURLINFO) -> Int64? {
        var value: curl_off_t = 0
        return ccurl_easy_getinfo_off_t(raw, info, &value) == CURLE_OK ? Int64(value) : nil
    }

    func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard ccurl_easy_getinfo_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}

extension String {
    func trimmingTrailingWhitespace() -> String {
        var scalars = Substring(self)
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
