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

/// A `.netrc` file: `machine HOST login USER password PASS` entries and a `default` one, read as curl and
/// Python's `netrc` read it.
///
/// Tokens are separated by white space; a token may be double-quoted (`"a b"`, with `\` escaping the next
/// character). A token that starts with `#` comments out the rest of its line. `macdef NAME` skips its
/// macro, which runs to the next empty line. `account` values are read and ignored. An entry without a
/// `login` gives no credentials; one without a `password` gives an empty password.
struct Netrc: Equatable {
    struct Entry: Equatable {
        /// The host; `nil` for the `default` entry.
        var machine: String?
        var login: String?
        var password: String?
    }

    var entries: [Entry] = []

    /// Parses the text of a `.netrc` file; never fails: what cannot be read is skipped.
    init(parsing text: String) {
        var tokens = Tokenizer(text)
        var current: Entry?
        func finish() {
            if let entry = current { entries.append(entry) }
            current = nil
        }
        while let token = tokens.next() {
            switch token {
            case "machine":
                finish()
                current = Entry(machine: tokens.next()?.lowercased())
            case "default":
                finish()
                current = Entry(machine: nil)
            case "login":
                let value = tokens.next()
                if current != nil { current?.login = value }
            case "password":
                let value = tokens.next()
                if current != nil { current?.password = value }
            case "account":
                _ = tokens.next()
            case "macdef":
                finish()
                _ = tokens.next()
                tokens.skipMacro()
            default:
                // An unknown token (or one outside any entry) is skipped, as curl does.
                break
            }
        }
        finish()
    }

    /// The login and password for `host`: the first `machine` entry for it, else the `default` entry,
    /// when that entry has a login.
    func credentials(for host: String) -> (login: String, password: String)? {
        let host = host.lowercased()
        let entry = entries.first { $0.machine == host } ?? entries.first { $0.machine == nil }
        guard let entry, let login = entry.login else { return nil }
        return (login, entry.password ?? "")
    }

    /// The file to read: `$NETRC`, else `~/.netrc`.
    static func path(environment: [String: String]) -> String? {
        if let path = environment["NETRC"], !path.isEmpty { return path }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.netrc"
    }

    /// The `.netrc` of the environment, or `nil` when there is none or it cannot be read.
    /// - Parameter environment: `NETRC` and `HOME`, as `sapi` reads them (`Sapi.environment`): building the whole
    ///   environment costs more at start-up than the call, and so does asking FileManager for a file that is not
    ///   there (the common case).
    static func load(environment: [String: String]) -> Netrc? {
        guard let path = path(environment: environment), access(path, F_OK) == 0,
            let data = FileManager.default.contents(atPath: path)
        else { return nil }
        return Netrc(parsing: String(decoding: data, as: UTF8.self))
    }

    private struct Tokenizer {
        private let chars: [Character]
        private var index = 0

        init(_ text: String) { chars = Array(text) }

        mutating func next() -> String? {
            while true {
                while index < chars.count, chars[index].isWhitespace { index += 1 }
                guard index < chars.count else { return nil }
                guard chars[index] == "#" else { break }
                while index < chars.count, !chars[index].isNewline { index += 1 }
            }
            var token = ""
            if chars[index] == "\"" {
                index += 1
                while index < chars.count, chars[index] != "\"" {
                    if chars[index] == "\\", index + 1 < chars.count { index += 1 }
                    token.append(chars[index])
                    index += 1
                }
                index += 1
                return token
            }
            while index < chars.count, !chars[index].isWhitespace {
                if chars[index] == "\\", index + 1 < chars.count { index += 1 }
                token.append(chars[index])
                index += 1
            }
            return token
        }

        /// Skips a macro's body: the rest of the `macdef` line, then every line up to an empty one.
        mutating func skipMacro() {
            while index < chars.count, !chars[index].isNewline { index += 1 }
            index += 1
            while index < chars.count {
                // An empty line (only a line break) ends the macro.
                if chars[index].isNewline { return }
                while index < chars.count, !chars[index].isNewline { index += 1 }
                index += 1
            }
        }
    }
}
