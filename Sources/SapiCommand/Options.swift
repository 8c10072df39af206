import ServerAPIKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything the command line asked for.
struct Options {
    enum Backend: String, CaseIterable {
        case curl, urlsession
    }

    enum CacheStore: String, CaseIterable {
        case none, memory, file
    }

    var method: HTTPMethod?
    var url = ""
    var items: [RequestItem] = []
    var backend: Backend?
    var form = false
    var timeout: Double?
    var retry = 0
    var keyPath: String?
    var envelope = false
    var codeKey = "code"
    var messageKey = "msg"
    var dataKey = "data"
    var successCodes = ["0"]
    var download = false
    var resume = false
    var cache = CacheStore.none
    var cacheDirectory: String?
    var cacheMode: CacheMode?
    /// What `--print` (or `-h`, `-b`, `-m`) asked for; `nil`: `-v`'s, or the default for the output.
    var print: Set<Character>?
    /// How many times `-v` was given.
    var verbose = 0
    var pretty: OutputStyle.Pretty?
    var sorted: Bool?
    var style: OutputStyle.Theme?
    /// `--raw TEXT`: the request body.
    var rawBody: String?
    var ignoreStdin = false
    var offline = false
    /// `--verify no|yes|CA_FILE`.
    var verify: String?
    /// `--show-credentials`: print `Authorization` and `Proxy-Authorization` values with `-v`.
    var showCredentials = false
    var checkStatus = false
    var stream = false
    var extraCA: String?
    var proxy: String?
    var httpVersion: HTTPVersion?
    var noProxy: [String] = []
    var stallTimeout: StallTimeout?
    var pins: [String] = []
    /// `--max-ratio N|none`: how many times its encoded size a content-coded body may expand to; `nil` for the
    /// library's default (100).
    var maxRatio: MaxRatio?
    enum MaxRatio: Equatable {
        case ratio(Int)
        case unlimited
    }
    /// `--legacy-tls`: the URL's host may use TLS 1.0 or 1.1.
    var legacyTLS = false
    var clientCertificate: String?
    var clientKey: String?
    var keyPassphrase: String?
    var maxRedirects = 10
    /// `--max-body-size SIZE`: the largest body sapi holds in memory to format it or read it at a key path.
    var maxBodySize = Options.defaultMaxBodySize
    var session: String?
    var unixSocket: String?
    /// `--har FILE`: record the run's exchanges to a HAR 1.2 file.
    var har: String?
    /// `--replay FILE`: answer from a HAR file instead of the network.
    var replay: String?
    var showHelp = false
    var showVersion = false
    // MARK: - WebSockets
    /// A WebSocket: a `ws://` or `wss://` URL, or `--ws` for an `http(s)://` one.
    var webSocket = false
    /// `--subprotocol NAME` (repeated, or a comma-separated list): `Sec-WebSocket-Protocol`.
    var subprotocols: [String] = []
    /// `--max-message-size SIZE`: the largest WebSocket message received.
    var maxMessageSize: Int?
    /// `--ping-interval SECONDS`: a keep-alive ping this often.
    var pingInterval: Double?
    /// `--linger SECONDS`: how long a WebSocket keeps printing what arrives after standard input ended.
    var linger = Options.defaultLinger
    /// `--no-deflate`: offer no permessage-deflate compression on a WebSocket.
    var webSocketDeflate = true
    // MARK: - auth and sessions
    /// `-a user[:password]`, or the token with `-A bearer`.
    var auth: String?
    var authType: AuthSetting.Kind?
    var ignoreNetrc = false
    /// `--session-read-only`: `session` names the session, which is used but never written.
    var sessionReadOnly = false

    /// The letters `--print` takes.
    static let printLetters: Set<Character> = ["H", "B", "h", "b", "m"]

    /// What is printed: `--print` (or `-h`, `-b`, `-m`); else `-v`'s `HBhb`, `-vv`'s `HBhbm`; else `--offline`'s
    /// request (`HB`); else the response headers and body on a terminal (`hb`), only its body when piped (`b`).
    func printed(terminal: Bool) -> Set<Character> {
        if let print { return print }
        if verbose >= 2 { return ["H", "B", "h", "b", "m"] }
        if verbose == 1 { return ["H", "B", "h", "b"] }
        if offline { return ["H", "B"] }
        // A WebSocket's messages; its handshake's head is status, not output (see `WebSocketClient`).
        if webSocket { return ["b"] }
        return terminal ? ["h", "b"] : ["b"]
    }

    // MARK: - downloads

    /// `--output FILE`: the download's file, or (without `--download`) where standard output goes.
    var output: String?

    /// The default `--linger`: a second, long enough for a server on the same continent to answer the last line.
    static let defaultLinger = 1.0

    /// The default `--max-body-size`: 64 MiB, the library's default for a body held in memory.
    static let defaultMaxBodySize: Int64 = ResponseSizeRule.defaultMemoryLimit

    /// A size as `--max-body-size` takes it: bytes, or a number with K, M or G (KiB, MiB, GiB); `nil` when
    /// it is not one.
    static func parseSize(_ text: String) -> Int64? {
        var digits = Substring(text.trimmingWhitespace().uppercased())
        if digits.hasSuffix("IB") { digits = digits.dropLast(2) }
        let shifts: [Character: Int64] = ["K": 10, "M": 20, "G": 30]
        var shift: Int64 = 0
        if let last = digits.last, let found = shifts[last] {
            shift = found
            digits = digits.dropLast()
        } else if text.uppercased().hasSuffix("IB") {
            return nil
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int64(digits), value > 0,
            value <= Int64.max >> shift
        else { return nil }
        return value << shift
    }

    /// Whether `text` is an HTTP token (RFC 9110 §5.6.2), as a subprotocol name must be (RFC 6455 §4.1).
    static func isToken(_ text: String) -> Bool {
        let punctuation = Set("!#$%&'*+-.^_`|~".unicodeScalars)
        return !text.isEmpty
            && text.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || punctuation.contains($0))
            }
    }

    /// The methods `sapi` accepts as its first argument.
    static let methods: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options]

    static let cacheModes: [(String, CacheMode)] = [
        ("never", .never), ("store-only", .storeOnly), ("return-cache-else-load", .returnCacheElseLoad),
        ("return-cache-then-load", .returnCacheThenLoad), ("load-else-return-cache", .loadElseReturnCache),
        ("cache-only", .cacheOnly),
    ]
}

/// One command-line option: its names, whether it takes a value, its help line, and what it sets.
struct OptionSpec: Sendable {
    var names: [String]
    var value: String?
    var help: String
    var apply: @Sendable (inout Options, String) throws -> Void
}

extension Options {
    /// The option table: parsing and `--help` both read it.
    static let specs: [OptionSpec] = [
        OptionSpec(names: ["--backend"], value: "curl|urlsession", help: "the transport (default: curl)") {
            guard let backend = Backend(rawValue: $1.lowercased()) else {
                throw UsageError(message: "unknown backend \"\($1)\"", hint: "use curl or urlsession")
            }
            $0.backend = backend
        },
        OptionSpec(
            names: ["--http-version"], value: "VERSION",
            help: "1.1, 2 (over TLS: the default), 2-prior-knowledge, 3 (QUIC, else TCP) or 3-only (QUIC only)"
        ) {
            guard let version = HTTPVersion(name: $1.lowercased()) else {
                throw UsageError(
                    message: "unknown HTTP version \"\($1)\"", hint: "use 1.1, 2, 2-prior-knowledge, 3 or 3-only")
            }
            $0.httpVersion = version
        },
        OptionSpec(names: ["--form", "-f"], help: "send name=value fields as a form, not JSON") { o, _ in
            o.form = true
        },
        OptionSpec(
            names: ["--timeout"], value: "SECONDS",
            help: "give up on an attempt after this long (default 60; given with -S, it bounds the whole stream)"
        ) {
            guard let seconds = Double($1), seconds > 0 else {
                throw UsageError(message: "--timeout needs a positive number of seconds, not \"\($1)\"")
            }
            $0.timeout = seconds
        },
        OptionSpec(names: ["--retry"], value: "N", help: "retry failed attempts up to N times") {
            guard let count = Int($1), count >= 0 else {
                throw UsageError(message: "--retry needs a count, not \"\($1)\"")
            }
            $0.retry = count
        },
        OptionSpec(names: ["--key-path"], value: "PATH", help: "print only this part of the JSON (a.b[0].c)") {
            $0.keyPath = $1
        },
        OptionSpec(names: ["--envelope"], help: "read a business envelope {code, msg, data}") { o, _ in
            o.envelope = true
        },
        OptionSpec(names: ["--code-key"], value: "KEY", help: "the envelope's code key (default code)") {
            $0.envelope = true
            $0.codeKey = $1
        },
        OptionSpec(names: ["--msg-key"], value: "KEY", help: "the envelope's message key (default msg)") {
            $0.envelope = true
            $0.messageKey = $1
        },
        OptionSpec(names: ["--data-key"], value: "KEY", help: "the envelope's data key (default data)") {
            $0.envelope = true
            $0.dataKey = $1
        },
        OptionSpec(names: ["--success-codes"], value: "LIST", help: "the envelope's success codes (default 0)") {
            $0.envelope = true
            $0.successCodes = $1.split(separator: ",").map { $0.trimmingWhitespace() }
        },
        OptionSpec(
            names: ["--cache"], value: "none|memory|file", help: "cache responses, as HTTP caching says (default none)"
        ) {
            guard let store = CacheStore(rawValue: $1.lowercased()) else {
                throw UsageError(message: "unknown cache \"\($1)\"", hint: "use none, memory or file")
            }
            $0.cache = store
        },
        OptionSpec(names: ["--cache-dir"], value: "DIR", help: "the file cache's directory") { $0.cacheDirectory = $1 },
        OptionSpec(
            names: ["--session"], value: "NAME|PATH",
            help: "keep cookies, auth and headers between runs: a named session of the URL's host, or a file (with a /)"
        ) { $0.session = $1 },
        OptionSpec(
            names: ["--cache-mode"], value: "MODE",
            help:
                "never, store-only, return-cache-else-load (default), return-cache-then-load, load-else-return-cache, cache-only"
        ) { options, value in
            guard let mode = Options.cacheModes.first(where: { $0.0 == value.lowercased() })?.1 else {
                throw UsageError(message: "unknown cache mode \"\(value)\"", hint: "see sapi --help")
            }
            options.cacheMode = mode
        },
        OptionSpec(
            names: ["--print", "-p"], value: "WHAT",
            help: "H request headers, B request body, h response headers, b response body, m metadata"
        ) {
            let wanted = Set($1)
            guard !wanted.isEmpty, wanted.isSubset(of: Options.printLetters) else {
                throw UsageError(
                    message: "--print takes letters of HBhbm, not \"\($1)\"",
                    hint: "H request headers, B request body, h response headers, b response body, m metadata")
            }
            $0.print = wanted
        },
        OptionSpec(names: ["--headers", "-h"], help: "print the response headers only (-p h)") { o, _ in
            o.print = ["h"]
        },
        OptionSpec(names: ["--body", "-b"], help: "print the response body only (-p b)") { o, _ in o.print = ["b"] },
        OptionSpec(names: ["--meta", "-m"], help: "print the response metadata only (-p m)") { o, _ in
            o.print = ["m"]
        },
        OptionSpec(
            names: ["--verbose", "-v"], help: "print the request too (-p HBhb); -vv adds the metadata (-p HBhbm)"
        ) { o, _ in o.verbose += 1 },
        OptionSpec(
            names: ["--show-credentials"],
            help: "print Authorization and Proxy-Authorization values with -v, and keep credentials in --har"
        ) { o, _ in o.showCredentials = true },
        OptionSpec(
            names: ["--har"], value: "FILE",
            help: "write the run's exchanges to FILE as HAR 1.2 (credentials redacted unless --show-credentials)"
        ) {
            guard !$1.isEmpty else { throw UsageError(message: "--har needs a file name") }
            $0.har = $1
        },
        OptionSpec(
            names: ["--replay"], value: "FILE",
            help: "answer from the HAR file FILE instead of the network (see HAR below)"
        ) {
            guard !$1.isEmpty else { throw UsageError(message: "--replay needs a file name") }
            $0.replay = $1
        },
        OptionSpec(
            names: ["--pretty"], value: "all|colors|format|none",
            help: "colour and format the output (default: all on a terminal, none when piped)"
        ) {
            guard let pretty = OutputStyle.Pretty(rawValue: $1.lowercased()) else {
                throw UsageError(message: "unknown --pretty \"\($1)\"", hint: "use all, colors, format or none")
            }
            $0.pretty = pretty
        },
        OptionSpec(names: ["--sorted"], help: "sort JSON keys and headers when formatting (the default)") { o, _ in
            o.sorted = true
        },
        OptionSpec(names: ["--unsorted"], help: "keep JSON keys and headers in the order they came") { o, _ in
            o.sorted = false
        },
        OptionSpec(names: ["--style", "-s"], value: "dark|light", help: "the colour theme (default dark; auto: dark)") {
            let name = $1.lowercased() == "auto" ? "dark" : $1.lowercased()
            guard let theme = OutputStyle.Theme(rawValue: name) else {
                throw UsageError(message: "unknown style \"\($1)\"", hint: "use dark or light")
            }
            $0.style = theme
        },
        OptionSpec(names: ["--raw"], value: "TEXT", help: "send TEXT as the request body (JSON unless --form)") {
            $0.rawBody = $1
        },
        OptionSpec(names: ["--ignore-stdin", "-I"], help: "never read the request body from standard input") { o, _ in
            o.ignoreStdin = true
        },
        OptionSpec(names: ["--offline"], help: "print the request (as -v would) without sending it") { o, _ in
            o.offline = true
        },
        OptionSpec(
            names: ["--verify"], value: "yes|no|CA_FILE",
            help:
                "verify TLS certificates (yes, the default); no: not for this call (curl, with a warning); or trust CA_FILE"
        ) { $0.verify = $1 },
        OptionSpec(
            names: ["--stream", "-S"],
            help: "print the body as it arrives: bytes, JSON lines or server-sent events (see streaming below)"
        ) { o, _ in o.stream = true },
        OptionSpec(names: ["--check-status"], help: "exit 3, 4 or 5 when the status is 3xx, 4xx or 5xx") { o, _ in
            o.checkStatus = true
        },
        OptionSpec(names: ["--insecure-ca"], value: "FILE", help: "also trust the CA certificates in FILE") {
            $0.extraCA = $1
        },
        OptionSpec(
            names: ["--legacy-tls"],
            help: "let the URL's host use TLS 1.0 or 1.1 (below the 1.2 floor) for this call, with a warning (curl)"
        ) { o, _ in o.legacyTLS = true },
        OptionSpec(
            names: ["--proxy"], value: "URL|env",
            help: "send through this http(s) or socks proxy (socks5h://, socks5://, socks4a://, socks4://; "
                + "user:password@ allowed); env: http_proxy/https_proxy/no_proxy"
        ) { $0.proxy = $1 },
        OptionSpec(names: ["--no-proxy"], value: "HOSTS", help: "hosts --proxy does not apply to (a,.b.com,*)") {
            $0.noProxy = $1.split(separator: ",").map { $0.trimmingWhitespace() }
        },
        OptionSpec(
            names: ["--stall-timeout"], value: "BYTES/SECONDS",
            help: "fail when slower than BYTES a second for SECONDS (e.g. 1000/30)"
        ) {
            let parts = $1.split(separator: "/")
            guard parts.count == 2, let bytes = Int64(parts[0]), bytes > 0, let seconds = Double(parts[1]),
                seconds > 0
            else {
                throw UsageError(message: "--stall-timeout needs BYTES/SECONDS such as 1000/30, not \"\($1)\"")
            }
            $0.stallTimeout = StallTimeout(bytesPerSecond: bytes, duration: .milliseconds(Int64(seconds * 1000)))
        },
        OptionSpec(
            names: ["--pin"], value: "SHA256",
            help: "accept only a server key with this base64 SHA-256 pin (repeat for backups; curl only)"
        ) { $0.pins.append($1) },
        OptionSpec(names: ["--cert"], value: "FILE", help: "present this PEM client certificate (curl only)") {
            $0.clientCertificate = $1
        },
        OptionSpec(names: ["--key"], value: "FILE", help: "the client certificate's PEM private key") {
            $0.clientKey = $1
        },
        OptionSpec(names: ["--key-pass"], value: "PASS", help: "the passphrase of an encrypted --key") {
            $0.keyPassphrase = $1
        },
        OptionSpec(names: ["--max-redirects"], value: "N", help: "follow at most N redirects (default 10; 0: none)") {
            guard let count = Int($1), count >= 0 else {
                throw UsageError(message: "--max-redirects needs a count, not \"\($1)\"")
            }
            $0.maxRedirects = count
        },
        OptionSpec(
            names: ["--max-body-size"], value: "SIZE",
            help: "the largest body read whole to format it or for --key-path, --envelope, --cache (default 64M)"
        ) {
            guard let size = Options.parseSize($1) else {
                throw UsageError(
                    message: "--max-body-size needs a size such as 1048576, 512K, 64M or 2G, not \"\($1)\"")
            }
            $0.maxBodySize = size
        },
        OptionSpec(
            names: ["--max-ratio"], value: "N|none",
            help: "how many times its compressed size a body may expand (a decompression bomb stops; default 100)"
        ) {
            if $1.lowercased() == "none" {
                $0.maxRatio = .unlimited
            } else if let ratio = Int($1), ratio >= 1 {
                $0.maxRatio = .ratio(ratio)
            } else {
                throw UsageError(message: "--max-ratio needs a whole number of at least 1, or none, not \"\($1)\"")
            }
        },
        OptionSpec(
            names: ["--follow", "-F"], help: "follow redirects: sapi's default (httpie needs it); see redirects below"
        ) { o, _ in
            if o.maxRedirects == 0 { o.maxRedirects = 10 }
        },
        OptionSpec(names: ["--unix-socket"], value: "PATH", help: "connect to a Unix-domain socket (curl backend)") {
            $0.unixSocket = $1
        },
        // auth and sessions
        OptionSpec(
            names: ["--auth", "-a"], value: "USER[:PASS]",
            help: "credentials (asks for the password on the terminal when it is left out); TOKEN with -A bearer"
        ) { $0.auth = $1 },
        OptionSpec(
            names: ["--auth-type", "-A"], value: "basic|bearer|digest",
            help: "the auth scheme (default basic; digest: curl only)"
        ) {
            guard let kind = AuthSetting.Kind(rawValue: $1.lowercased()) else {
                throw UsageError(message: "unknown auth type \"\($1)\"", hint: "use basic, bearer or digest")
            }
            $0.authType = kind
        },
        OptionSpec(names: ["--ignore-netrc"], help: "do not read credentials from $NETRC or ~/.netrc") { o, _ in
            o.ignoreNetrc = true
        },
        OptionSpec(
            names: ["--session-read-only"], value: "NAME|PATH", help: "use a --session without updating it"
        ) {
            $0.session = $1
            $0.sessionReadOnly = true
        },
        // downloads
        OptionSpec(
            names: ["--download", "-d"],
            help: "save the body to a file (--output, or a name from the response), with a progress bar"
        ) { o, _ in o.download = true },
        OptionSpec(
            names: ["--output", "-o"], value: "FILE", help: "the --download file; without --download, print into FILE"
        ) {
            guard !$1.isEmpty else { throw UsageError(message: "--output needs a file name") }
            $0.output = $1
        },
        OptionSpec(names: ["--continue", "-c"], help: "resume a partial --download --output FILE") { o, _ in
            o.resume = true
        },
        // WebSockets
        OptionSpec(
            names: ["--ws", "--websocket"],
            help: "open a WebSocket to an http(s) URL (ws:// and wss:// URLs need no flag); see WebSockets below"
        ) { o, _ in o.webSocket = true },
        OptionSpec(
            names: ["--subprotocol"], value: "NAME[,NAME]",
            help: "offer WebSocket subprotocols (Sec-WebSocket-Protocol), in order of preference; repeatable"
        ) {
            let names = $1.split(separator: ",").map { $0.trimmingWhitespace() }
            guard !names.isEmpty, names.allSatisfy(Options.isToken) else {
                throw UsageError(
                    message: "--subprotocol needs subprotocol names (tokens, separated by commas), not \"\($1)\"",
                    hint: "--subprotocol chat.v2,chat.v1")
            }
            $0.subprotocols += names
        },
        OptionSpec(
            names: ["--max-message-size"], value: "SIZE",
            help: "the largest WebSocket message received (default 16M): a larger one closes it (1009), exit 7"
        ) {
            guard let size = Options.parseSize($1), size <= Int.max else {
                throw UsageError(
                    message: "--max-message-size needs a size such as 65536, 512K or 16M, not \"\($1)\"")
            }
            $0.maxMessageSize = Int(size)
        },
        OptionSpec(
            names: ["--ping-interval"], value: "SECONDS",
            help: "ping the WebSocket's server this often; no pong within the interval: exit 2"
        ) {
            guard let seconds = Double($1), seconds > 0, seconds.isFinite else {
                throw UsageError(message: "--ping-interval needs a positive number of seconds, not \"\($1)\"")
            }
            $0.pingInterval = seconds
        },
        OptionSpec(
            names: ["--linger"], value: "SECONDS",
            help: "after standard input ends, print what the WebSocket receives this long before closing (default 1)"
        ) {
            guard let seconds = Double($1), seconds >= 0, seconds.isFinite else {
                throw UsageError(message: "--linger needs a number of seconds (0 or more), not \"\($1)\"")
            }
            $0.linger = seconds
        },
        OptionSpec(
            names: ["--no-deflate"],
            help: "offer no permessage-deflate compression on a WebSocket (offered by default)"
        ) { o, _ in o.webSocketDeflate = false },
        OptionSpec(names: ["--help"], help: "show this help") { o, _ in o.showHelp = true },
        OptionSpec(names: ["--version"], help: "show the version") { o, _ in o.showVersion = true },
    ]

    /// Parses the arguments (without the program name).
    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var positionals: [String] = []
        var index = 0
        var onlyPositionals = false
        // Where the positional right after --download would go: the old `--download FILE` form.
        var afterDownload: Int?
        /// Remembers where the argument at `next` would go when it is a positional right after --download.
        func noteDownload(at next: Int) {
            if !onlyPositionals, next < arguments.count, !arguments[next].hasPrefix("-") || arguments[next] == "-" {
                afterDownload = positionals.count
            }
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            // -vv is -v twice.
            if argument.count > 2, argument.dropFirst().allSatisfy({ $0 == "v" }) {
                options.verbose += argument.count - 1
                continue
            }
            // Combined short options, as httpie's parser takes them: -dc is -d -c; an option that takes a
            // value ends the group, with the rest as its value or, when nothing is left, the next argument
            // (-dco FILE, -oFILE).
            if !argument.hasPrefix("--"), argument.count > 2, !specs.contains(where: { $0.names.contains(argument) }) {
                var letters = argument.dropFirst()[...]
                while let letter = letters.popFirst() {
                    let name = "-" + String(letter)
                    guard let spec = specs.first(where: { $0.names.contains(name) }) else {
                        throw UsageError(message: "unknown option \(name) in \(argument)", hint: "see sapi --help")
                    }
                    guard spec.value != nil else {
                        try apply(spec, &options, "")
                        if spec.names.contains("--download"), letters.isEmpty { noteDownload(at: index) }
                        continue
                    }
                    if letters.isEmpty {
                        guard index < arguments.count else { throw UsageError(message: "\(name) needs a value") }
                        try apply(spec, &options, arguments[index])
                        index += 1
                    } else {
                        try apply(spec, &options, String(letters))
                    }
                    break
                }
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let spec = specs.first(where: { $0.names.contains(name) }) else {
                throw UsageError(message: "unknown option \(name)", hint: "see sapi --help")
            }
            if spec.value != nil {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError(message: "\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                try apply(spec, &options, value)
            } else {
                guard inlineValue == nil else { throw UsageError(message: "\(name) takes no value") }
                try apply(spec, &options, "")
                if spec.names.contains("--download") { noteDownload(at: index) }
            }
        }
        if options.showHelp || options.showVersion { return options }
        guard !positionals.isEmpty else {
            throw UsageError(message: "no URL given", hint: "sapi [METHOD] URL [ITEM ...]")
        }
        if positionals.count >= 2, let method = methods.first(where: { $0.rawValue == positionals[0].uppercased() }) {
            options.method = method
            positionals.removeFirst()
            afterDownload = afterDownload.map { $0 - 1 }
        }
        if let afterDownload { try checkOldDownloadForm(positionals, afterDownload) }
        options.url = positionals.removeFirst()
        for argument in positionals {
            guard let item = RequestItem.parse(argument) else {
                throw UsageError(
                    message: "\"\(argument)\" is not a request item",
                    hint: "items are name=value, name:=json, Header:Value, name==value or field@path")
            }
            options.items.append(item)
        }
        if options.resume && (!options.download || options.output == nil) {
            throw UsageError(
                message: "--continue resumes a named file: it needs --download and --output FILE",
                hint: "sapi -d -c -o FILE URL")
        }
        if RequestBuilder.isWebSocketURL(options.url) { options.webSocket = true }
        if options.webSocket {
            try checkWebSocket(options)
        } else if !options.subprotocols.isEmpty || options.maxMessageSize != nil || options.pingInterval != nil
            || options.linger != defaultLinger || !options.webSocketDeflate
        {
            throw UsageError(
                message:
                    "--subprotocol, --max-message-size, --ping-interval, --linger and --no-deflate are for WebSockets",
                hint: "a ws:// or wss:// URL, or --ws for an http(s) URL")
        }
        if options.stream { try checkStream(options) }
        if options.har != nil, options.replay != nil {
            throw UsageError(
                message: "--har records what the network answers and --replay answers without it: give one",
                hint: "sapi --har FILE URL to record, sapi --replay FILE URL to replay")
        }
        if options.authType != nil && options.auth == nil {
            throw UsageError(message: "--auth-type needs --auth", hint: "sapi -A bearer -a TOKEN URL")
        }
        return options
    }

    /// `--download` is a flag (httpie's): `sapi URL --download FILE` would send FILE as a request item,
    /// and `sapi --download FILE URL` would request FILE. Both are refused with the new form as a hint.
    /// - Parameters:
    ///   - positionals: URL and items, the method removed.
    ///   - index: The position of the argument that came right after `--download`.
    private static func checkOldDownloadForm(_ positionals: [String], _ index: Int) throws(UsageError) {
        let looksLikeURL = { (text: String) in
            text.contains("://") || (text.hasPrefix(":") && text.dropFirst().first?.isNumber == true)
        }
        // After a method (`-d GET URL`) the index is -1: the flag came before the method, not the form.
        guard index >= 0, index < positionals.count else { return }
        guard index > 0 || (positionals.count > 1 && looksLikeURL(positionals[1])) else { return }
        throw UsageError(
            message:
                "--download takes no value: it is a flag, and \"\(positionals[index])\" after it is not a file name",
            hint:
                "sapi -d -o \(positionals[index]) URL to name the file, or sapi -d URL to take the name from the response"
        )
    }

    /// A WebSocket's handshake is one GET without a body, sent straight to the server, and its messages are
    /// printed as they arrive: options for a body, a download, a cache, retries or a route it does not take are
    /// refused rather than ignored.
    private static func checkWebSocket(_ options: Options) throws(UsageError) {
        let hint = "sapi ws://HOST/PATH [Header:Value ...] [name==value ...], then one message a line on standard input"
        if let method = options.method, method != .get {
            throw UsageError(message: "a WebSocket opens with GET, not \(method.rawValue)", hint: hint)
        }
        if RequestBuilder.hasBodyItems(options) || options.rawBody != nil {
            throw UsageError(
                message: "a WebSocket handshake has no body: send messages as lines on standard input", hint: hint)
        }
        let cache = options.cache != .none || options.cacheDirectory != nil || options.cacheMode != nil
        let version = options.httpVersion.flatMap { $0 == .http1 ? nil : $0 }
        let refused: [(Bool, String)] = [
            (options.download || options.resume, "--download and --continue"),
            (options.stream, "--stream (a WebSocket's messages are always printed as they arrive)"),
            (cache, "the cache options"),
            (options.envelope, "--envelope"),
            (options.retry > 0, "--retry"),
            (options.stallTimeout != nil, "--stall-timeout"),
            (options.unixSocket != nil, "--unix-socket"),
            (version != nil, "--http-version \(version?.description ?? "") (the handshake is HTTP/1.1)"),
            (options.authType == .digest, "-A digest (the handshake answers no challenge)"),
        ]
        if let (_, what) = refused.first(where: \.0) {
            throw UsageError(message: "\(what) cannot be used with a WebSocket", hint: hint)
        }
    }

    /// `--stream` prints one body as it arrives: it cannot save it, cache it or read it as one envelope.
    private static func checkStream(_ options: Options) throws(UsageError) {
        if options.download {
            throw UsageError(
                message: "--stream prints the body as it arrives and cannot be combined with --download",
                hint: "sapi --stream -o FILE URL, or sapi -d -o FILE URL without --stream")
        }
        if options.cache != .none || options.cacheDirectory != nil || options.cacheMode != nil {
            throw UsageError(
                message:
                    "a streamed response is never cached: --cache, --cache-dir and --cache-mode cannot go with --stream",
                hint: "drop the cache options, or drop --stream")
        }
        if options.envelope {
            throw UsageError(
                message: "--envelope reads one whole body and cannot be combined with --stream",
                hint: "--stream --key-path PATH applies the key path to each JSON line or event")
        }
    }

    private static func apply(_ spec: OptionSpec, _ options: inout Options, _ value: String) throws(UsageError) {
        do {
            try spec.apply(&options, value)
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError(message: "\(error)")
        }
    }

    /// The `--help` text, built from the option table.
    static var helpText: String {
        var lines = [
            "usage: sapi [METHOD] URL [ITEM ...] [OPTIONS]",
            "       sapi ws[s]://HOST/PATH [Header:Value ...] [name==value ...] [OPTIONS]   (a WebSocket)",
            "",
            "An HTTP client built on ServerAPIKit.",
            "",
            "  METHOD   GET (default; POST when there are body items), HEAD, POST, PUT, PATCH, DELETE, OPTIONS",
            "  URL      a full URL, or :PORT/path for http://localhost:PORT/path (http:// when no scheme)",
            "  ITEM     name=value      a string field (JSON body; form field with --form)",
            "           name:=json      a raw JSON value (number, true, [1,2], {\"a\":1})",
            "           Header:Value    a request header",
            "           name==value     a query parameter",
            "           field@path      a file part (makes the body multipart)",
            "           A backslash escapes a separator: a\\=b=c is the field \"a=b\".",
            "",
            "options (short ones combine: -dc is -d -c, and -dco FILE ends with -o's value):",
        ]
        for spec in specs {
            let left = spec.names.joined(separator: ", ") + (spec.value.map { " " + $0 } ?? "")
            lines.append(
                "  " + left.padded(to: max(28, left.count + 2)) + spec.help)
        }
        lines += [
            "",
            "streaming (--stream, -S):",
            "  The body is written as it arrives, with nothing buffered. A text/event-stream body is printed",
            "  one event at a time: \"event: TYPE\" when the type is not message, \"id: ID\" when the id",
            "  changed, \"retry: MS\" when asked, then the data; a blank line between events (coloured on a",
            "  terminal). Other bodies are written byte for byte.",
            "  With --key-path, each event's data (or each line of any other body, such as NDJSON) is read as",
            "  JSON and the value found is printed: from events, a string is printed as it is, with no",
            "  newline, so that the text fragments of a streamed answer join up",
            "  (sapi -S URL --key-path choices[0].delta.content); any other value is printed as one line of",
            "  JSON. From lines, every value is one line of JSON. Events or lines where the key path finds",
            "  nothing are skipped, and so are empty data and [DONE]; data that is not JSON is skipped with a",
            "  warning on stderr. Exit 9 when the key path found nothing in the whole body.",
            "  An application/json body whose first line is not a whole JSON value is one document: the",
            "  key path applies to it once it has arrived.",
            "  Time: without --timeout, the default 60 s bounds the wait for the head and the stream then runs",
            "  as long as it keeps coming (--stall-timeout ends one that stalls); --timeout N bounds the whole",
            "  stream, as curl's -m does: at N seconds it stops, exit 2.",
            "  A 4xx or 5xx body is written as it came. Ctrl-C stops the stream and exits 130; a reader that",
            "  leaves (| head) stops it quietly. --download, the cache options and --envelope do not go with it.",
            "",
            "input and output:",
            "  The body is made of the items, or is --raw TEXT, or is standard input when it is piped (never a",
            "  terminal) and there are no body items: JSON unless --form or a Content-Type item says otherwise,",
            "  POST unless a METHOD is given. --ignore-stdin (-I) leaves standard input alone.",
            "  What is printed: --print letters (-p hb), or -h, -b, -m, -v (HBhb), -vv (HBhbm); the default is",
            "  hb on a terminal and b when piped; --offline prints HB and sends nothing. On a terminal JSON is",
            "  indented, keys and header fields sorted, and coloured (--pretty, --unsorted, --style); piped,",
            "  the body is written exactly as it came. NO_COLOR (set, not empty) turns colours off unless",
            "  --pretty asks for them.",
            "  On a terminal, what came from the network (bodies, header fields, events, WebSocket messages) shows",
            "  its control characters as less and git do: ESC as ^[, a lone CR as ^M, DEL as ^?, C1 controls and",
            "  bidirectional overrides as <U+202E>, so that a server cannot set the terminal's title or clear its",
            "  screen. Lines on stderr (errors quote URLs, Locations, close reasons) always show them so. Piped (| cat,",
            "  -o FILE), the bytes are written exactly as they came.",
            "  A body printed as it came is written as it arrives, in bounded memory, whatever its size. One sapi",
            "  must read whole (to indent or colour JSON, or for --key-path, --envelope or --cache) is held in",
            "  memory up to --max-body-size (64M by default; K, M and G suffixes): a larger one stops the call",
            "  with \"response too large\" (exit 7). Raise it, pipe the output (--pretty none), or use -d.",
            "  A compressed body that expands more than --max-ratio times its size (100 by default) stops as a",
            "  decompression bomb (exit 7), whatever --max-body-size says; --max-ratio none lifts that check.",
            "  ~/.config/sapi/config.json ($SAPI_CONFIG_DIR/config.json, or under $XDG_CONFIG_HOME) may hold",
            "  {\"default_options\": [\"--style\", \"light\"]}: options put before the command line's.",
            "",
            "redirects:",
            "  sapi follows up to 10 redirects by default, as the library does; httpie follows none without",
            "  --follow. An API call that meets a redirect (http to https, a moved path, a trailing slash) almost",
            "  always wants its target, and credentials and cookies never go to another host on the way.",
            "  --max-redirects 0 stops at the first 3xx (printed; exit 3 with --check-status); more than N is",
            "  exit 6. --follow (-F) is accepted for httpie's habit.",
            "",
            "WebSockets (ws://, wss://, or --ws for an http(s) URL):",
            "  The handshake goes through the same options as a call: Header:Value and name==value items, -a,",
            "  --session, --timeout (the handshake only), --verify, --pin, --cert. Each line of standard input (typed",
            "  or piped) is sent as one text message; -I sends nothing and listens. When standard input ends",
            "  (Ctrl-D, or the end of a pipe), sapi prints what arrives for --linger seconds more (default 1), then",
            "  closes with 1000, waits for the server's close (at most 5 s) and exits 0. Ctrl-C closes with 1000",
            "  and exits 130.",
            "  Each message received is printed on a line of its own on stdout: text as it came; on a terminal, JSON",
            "  is coloured (not indented: one message, one line). With --key-path, each message is read as JSON and",
            "  the value found is printed as one line of JSON; messages where it finds nothing are skipped, those",
            "  that are not JSON with a warning; exit 9 when it found nothing in any. A binary message is not",
            "  printed: a line on stderr gives its size. -p h (or -v) prints the handshake's response head first",
            "  (m, the metadata, is not printed).",
            "  Status lines go to stderr: \"connected to URL\" (and the subprotocol the server chose, and",
            "  permessage-deflate when it agreed to compress: offered unless --no-deflate), and how it",
            "  closed. The server's close with 1000 or 1001 (or no code) exits 0; another code is an error (exit 7),",
            "  as is a connection that breaks (7), a message over --max-message-size (7, closed with 1009), a ping",
            "  unanswered within --ping-interval (2, closed with 1001), a refused handshake (3, 4 or 5 for its",
            "  status). The curl backend has them with any libcurl (on Linux); the urlsession backend on Linux has",
            "  none (its FoundationNetworking was built without them): an error, exit 1. --proxy applies (an",
            "  HTTP proxy through a CONNECT tunnel); --unix-socket, --retry, the cache, --stream and --download do",
            "  not; --har records the handshake and every message.",
            "",
            "HAR (--har, --replay):",
            "  --har FILE writes every exchange of the run (each attempt, a streamed body with its chunks, a",
            "  download's bytes, a failure such as a refused connection) to FILE as HAR 1.2, which browsers'",
            "  developer tools open; FILE is replaced. Authorization, Proxy-Authorization, Cookie and",
            "  Set-Cookie values are redacted unless --show-credentials. --replay FILE answers from such a file",
            "  (or one a browser exported) and never touches the network: a request is matched by method and",
            "  URL (query in any order); one the file lacks fails, naming the closest entry and what differed.",
            "  The file is read whole, at most 256 MiB, and checked: a number out of range or text that is not",
            "  the base64 it says it is fails at once (exit 9), naming the entry and the field.",
            "",
            "TLS:",
            "  Certificates are verified. --verify CA_FILE trusts that file's CAs (as --insecure-ca); --verify no",
            "  turns verification off for the URL's host for this call only, with a warning (curl backend).",
            "  TLS 1.2 is the floor: a server that offers only TLS 1.0 or 1.1 fails (exit 7) unless --legacy-tls",
            "  lets the URL's host use them for this call, with a warning (curl backend).",
            "",
            "auth and sessions:",
            "  Credentials come from -a, else the --session, else $NETRC or ~/.netrc (machine HOST login U",
            "  password P, or default), which gives basic auth for its host. They are never sent to another",
            "  host on a redirect. A session (a named one is $XDG_CONFIG_HOME/sapi/sessions/HOST_PORT/NAME.json,",
            "  mode 0600) keeps the cookies, -a and the Header:Value items (not Content-*, If-*, Cookie) and",
            "  sends them with later calls unless the command line gives its own.",
            "",
            "downloads (--download, -d):",
            "  sapi -d URL saves the body in the current directory under the name the response suggests:",
            "  Content-Disposition's filename* or filename (its last path component, leading dots removed), else",
            "  the URL's last path segment, else index; these two get an extension from Content-Type when they",
            "  have none (.json, .html, .txt, .bin, ...). An existing file is never overwritten: NAME-1, NAME-2, ...",
            "  sapi -d -o FILE URL saves to FILE. The body goes to FILE.part, renamed to FILE when whole.",
            "  --continue (-c) resumes FILE.part (Range, and If-Range with the recorded ETag or Last-Modified).",
            "  When there is no FILE.part but a partial FILE (made by another program), FILE is renamed to",
            "  FILE.part and resumed; an attempt that fails before a byte is written puts FILE back as it was,",
            "  one that fails later keeps FILE.part for the next --continue. A FILE that is already complete",
            "  (the server answers 416 for its size) is not downloaded again. A server that ignores Range sends",
            "  the whole body: it replaces the partial one, never appended to it.",
            "  A 3xx not followed, a 4xx or a 5xx saves nothing and leaves FILE and FILE.part as they were:",
            "  a line on stderr, exit 3, 4 or 5 (with or without --check-status).",
            "  Without --download, --output FILE writes what would be printed into FILE instead.",
            "",
            "exit codes (httpie's 0-6 and 130; 7-9 are sapi's own):",
            "  0    ok",
            "  1    usage, invalid input, or another error",
            "  2    timed out",
            "  3    a 3xx that was not followed (--max-redirects 0), with --check-status or --download",
            "  4    a 4xx, with --check-status or --download",
            "  5    a 5xx, with --check-status or --download",
            "       (a status --retry retries that still fails after the last retry: 4 or 5 likewise)",
            "  6    too many redirects",
            "  7    cannot connect, TLS (the line names the failure: pin mismatch, certificate not trusted,",
            "       hostname mismatch, client certificate rejected, ...), network, response too large; a",
            "       WebSocket the server closed with a code other than 1000 or 1001",
            "  8    business-code failure with --envelope",
            "  9    decoding failed, or --key-path not found",
            "  130  interrupted (Ctrl-C); a partial --download is kept for --continue; a WebSocket is closed (1000)",
        ]
        return lines.joined(separator: "\n")
    }
}
