import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `--session` file: the headers, auth and cookies kept for later calls, in httpie's layout:
///
/// ```json
/// {"__meta__": {"about": "sapi session file", "sapi": "0.1.0"},
///  "auth": {"type": "basic", "raw_auth": "user:pass"},
///  "cookies": [{"name": "a", "value": "1", "domain": "example.com", ...}],
///  "headers": {"X-Api": "1"}}
/// ```
///
/// Cookies are the library's `Cookie` values, as `FileCookieStorage` writes them, so a session file from
/// before (`{"format": "serverapikit-cookies", "version": 1, "cookies": [...]}`) is read as a session
/// with cookies only, and written back in this layout when the call changes it.
struct SessionFile: Equatable {
    var url: URL
    /// Headers, in the order they were first stored (names compared case-insensitively).
    var headers: [HTTPHeaders.Field] = []
    var auth: AuthSetting?
    var cookies: [Cookie] = []
    /// Whether the file exists: a new session is written after its first call.
    var exists = false

    /// The headers a session never keeps: those that describe one call's body or condition (httpie's
    /// `Content-` and `If-` prefixes), and `Cookie`, which the cookie jar keeps.
    static func isStored(header name: String) -> Bool {
        let lower = name.lowercased()
        return !lower.hasPrefix("content-") && !lower.hasPrefix("if-") && lower != "cookie"
    }

    /// Reads the session in `url`; a missing file is an empty session.
    /// - Throws: `UsageError` when the file cannot be read or is not a session (it is left as it is).
    static func load(_ url: URL) throws(UsageError) -> SessionFile {
        var session = SessionFile(url: url)
        guard FileManager.default.fileExists(atPath: url.path) else { return session }
        let invalid = { (why: String) in
            UsageError(
                message: "the session file \(url.path) cannot be read: \(why); it was left as it is",
                hint: "fix or remove the file, or use another --session")
        }
        guard let data = FileManager.default.contents(atPath: url.path) else { throw invalid("permission denied") }
        guard let json = try? JSONValue(parsing: data), case .object(let object) = json else {
            throw invalid("it is not a JSON object")
        }
        session.exists = true
        if let headers = object["headers"] {
            guard case .object(let members) = headers, members.values.allSatisfy({ $0.stringValue != nil }) else {
                throw invalid("\"headers\" is not an object of strings")
            }
            session.headers = members.sorted { $0.key < $1.key }.map {
                HTTPHeaders.Field(name: $0.key, value: $0.value.stringValue ?? "")
            }
        }
        if let auth = object["auth"], !auth.isNull {
            guard case .object(let fields) = auth else { throw invalid("\"auth\" is not an object") }
            // httpie writes {"type": null, "raw_auth": null} for a session without auth.
            if let raw = fields["raw_auth"]?.stringValue {
                let type = fields["type"]?.stringValue?.lowercased() ?? "basic"
                guard let kind = AuthSetting.Kind(rawValue: type) else {
                    throw invalid("unknown auth type \"\(type)\"")
                }
                session.auth = AuthSetting(kind: kind, raw: raw)
            }
        }
        if let cookies = object["cookies"] {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            guard let bytes = try? JSONEncoder().encode(cookies),
                let list = try? decoder.decode([Cookie].self, from: bytes)
            else { throw invalid("\"cookies\" is not a list of cookies") }
            for (index, cookie) in list.enumerated() {
                if let defect = cookie.defect { throw invalid("cookie \(index + 1) cannot be sent: \(defect)") }
            }
            session.cookies = list
        }
        return session
    }

    /// A cookie storage filled with the session's cookies, for the call's manager.
    func makeCookieStorage() -> MemoryCookieStorage {
        let storage = MemoryCookieStorage()
        for cookie in cookies { storage.store(cookie) }
        return storage
    }

    /// The call with the session's headers (those the command line does not set) and its auth applied.
    func apply(to api: ServerAPI, commandLineHeaders: [String]) -> ServerAPI {
        var api = api
        let given = Set(commandLineHeaders.map { $0.lowercased() })
        for field in headers where !given.contains(field.name.lowercased()) {
            api = api.setHeader(field.name, field.value)
        }
        return api
    }

    /// The session after a call: the command line's headers and auth stored, the jar's cookies kept.
    func updated(headers items: [(String, String)], auth: AuthSetting?, cookies jar: [Cookie]) -> SessionFile {
        var next = self
        for (name, value) in items where Self.isStored(header: name) {
            if let index = next.headers.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) {
                next.headers[index] = HTTPHeaders.Field(name: name, value: value)
            } else {
                next.headers.append(HTTPHeaders.Field(name: name, value: value))
            }
        }
        if let auth { next.auth = auth }
        next.cookies = jar
        return next
    }

    /// Whether writing `next` in place of this session changes the file.
    func needsSaving(_ next: SessionFile) -> Bool {
        !exists || headers != next.headers || auth != next.auth || Set(cookies) != Set(next.cookies)
    }

    /// The file's bytes.
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let cookieList = try JSONDecoder().decode(JSONValue.self, from: try encoder.encode(cookies))
        let object: JSONValue = [
            "__meta__": ["about": "sapi session file", "sapi": .string(Sapi.version)],
            "headers": .object(
                Dictionary(headers.map { ($0.name, JSONValue.string($0.value)) }, uniquingKeysWith: { _, last in last })
            ),
            "cookies": cookieList,
            "auth": auth.map { ["type": .string($0.kind.rawValue), "raw_auth": .string($0.raw)] }
                ?? ["type": nil, "raw_auth": nil],
        ]
        let writer = JSONEncoder()
        writer.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try writer.encode(object)
    }

    /// Writes the session whole, readable by its owner only (a temporary file, 0600, renamed over it; the
    /// folder is created 0700).
    /// - Throws: `PrivateFile.Failure` naming the file and the reason.
    func save() throws {
        try PrivateFile.write(try encoded(), to: url)
    }
}
