#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A URL's user-info (`http://user:password@host/`): the core sends it as an `Authorization: Basic`
/// header and takes it out of the URL, the same way with every transport, so that the header really sent
/// shows where requests are shown (plugins, `sapi -v`, HAR files, all redacted) and the password never
/// travels in a URL that errors, logs and metrics repeat.
enum URLUserInfo {
    /// The URL without its user-info, and the `Authorization` value the user-info makes.
    /// - Parameter url: The URL.
    /// - Returns: `nil` when the URL has no user-info (nearly always: a byte search decides).
    static func split(_ url: URL) -> (url: URL, authorization: String)? {
        guard hasUserInfo(url.absoluteString),
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false), let user = components.user
        else { return nil }
        let password = components.password ?? ""
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        guard let plain = components.url else { return nil }
        return (plain, "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    /// Whether a call's URL (its `url`, or a `host` written as a URL) has user-info.
    static func carried(by api: ServerAPI) -> Bool {
        hasUserInfo(api.url?.absoluteString ?? api.host)
    }

    /// Whether the authority of a URL's text has an `@`: the text after `://`, up to the first `/`, `?` or `#`.
    static func hasUserInfo(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return false }
        bytes = bytes[colon...].dropFirst()
        guard bytes.starts(with: "//".utf8) else { return false }
        for byte in bytes.dropFirst(2) {
            switch byte {
            case UInt8(ascii: "@"): return true
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): return false
            default: continue
            }
        }
        return false
    }
}

extension ServerAPI {
    /// Whether the call's URL has user-info, which its requests carry as `Authorization`.
    var carriesUserInfo: Bool { URLUserInfo.carried(by: self) }
}
