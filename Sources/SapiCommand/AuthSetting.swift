import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The credentials of a call, as `-a`/`-A`, a session or `.netrc` give them, and as a session stores them
/// (httpie's `{"type": "basic", "raw_auth": "user:pass"}`).
struct AuthSetting: Equatable {
    enum Kind: String, CaseIterable {
        case basic, bearer, digest
    }

    var kind: Kind
    /// `user:password` for basic and digest; the token for bearer.
    var raw: String

    /// The user and the password of `user:password` (split at the first colon; no colon: no password).
    var userAndPassword: (user: String, password: String?) {
        guard let colon = raw.firstIndex(of: ":") else { return (raw, nil) }
        return (String(raw[..<colon]), String(raw[raw.index(after: colon)...]))
    }

    /// The call with these credentials: an `Authorization` header for basic and bearer (so that a printer
    /// sees it as one, and `RedirectRule` drops it on another origin), challenge credentials for digest.
    func apply(to api: ServerAPI) -> ServerAPI {
        switch kind {
        case .bearer:
            return api.bearerAuth(raw)
        case .basic:
            let (user, password) = userAndPassword
            return api.basicAuth(user: user, password: password ?? "")
        case .digest:
            let (user, password) = userAndPassword
            return api.digestAuth(user: user, password: password ?? "")
        }
    }

    /// The `-a`/`-A` credentials, with the password asked for when `-a user` leaves it out.
    /// - Parameters:
    ///   - options: The command line.
    ///   - url: The call's URL, for the prompt (`user@host`).
    ///   - askPassword: Asks for the password of `user@host`; throws when it cannot (stdin not a terminal).
    /// - Returns: `nil` without `-a`.
    static func fromCommandLine(
        _ options: Options, url: URL, askPassword: (String) throws -> String
    ) throws -> AuthSetting? {
        guard let raw = options.auth else { return nil }
        let setting = AuthSetting(kind: options.authType ?? .basic, raw: raw)
        guard setting.kind != .bearer, setting.userAndPassword.password == nil else { return setting }
        guard !raw.isEmpty else {
            throw UsageError(message: "--auth needs a user name", hint: "-a USER[:PASSWORD]")
        }
        var host = url.host ?? ""
        if let port = url.port { host += ":\(port)" }
        let password = try askPassword("\(raw)@\(host)")
        return AuthSetting(kind: setting.kind, raw: raw + ":" + password)
    }
}

extension Options {
    /// The `Header:Value` items, in order.
    var headerItems: [(String, String)] {
        items.compactMap { if case .header(let name, let value) = $0 { (name, value) } else { nil } }
    }
}
