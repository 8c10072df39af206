import ServerAPIFileCache
import ServerAPIKit
import ServerAPIMemoryCache

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(ServerAPICurl)
    import ServerAPICurl
#endif

/// The manager `sapi` sends through: the chosen transport, formatter and cache.
struct Composition {
    var manager: ServerAPIManager
    var formatter: any ResponseFormatting
    /// The curl transport's loop threads as a task executor (`CurlTransport.executor`); nil for another transport.
    var executor: (any TaskExecutor)?

    /// - Parameters:
    ///   - options: The command line.
    ///   - plugins: The manager's plugins (the request printer).
    ///   - cookies: The `--session`'s cookie jar, if any.
    ///   - features: `sapi-full`'s features; nil in the lean `sapi`, which hands the commands needing them over.
    init(
        _ options: Options, plugins: [any ServerAPIPlugin] = [], cookies: (any CookieStorage)? = nil,
        features: (any FoundationFeatures)?
    ) throws {
        if options.envelope {
            formatter = EnvelopeFormatter(
                codeKey: options.codeKey, messageKey: options.messageKey, dataKey: options.dataKey,
                successCodes: Set(options.successCodes))
        } else {
            formatter = PlainFormatter()
        }
        let cache: (any CachePolicy)?
        switch options.cache {
        case .none: cache = nil
        case .memory: cache = MemoryCache()
        case .file:
            cache =
                options.cacheDirectory.map { FileCache(directory: URL(fileURLWithPath: $0)) }
                ?? FileCache(appName: "sapi")
        }
        let transport = try Self.recorded(
            options.offline ? OfflineTransport() : try Self.transport(options, features: features), options,
            features: features)
        #if canImport(ServerAPICurl)
            executor = (transport as? CurlTransport)?.executor
        #endif
        var configuration = ServerAPIManager.Configuration()
        configuration.cookies = cookies
        manager = ServerAPIManager(
            transport: transport, formatter: formatter, cache: cache, plugins: plugins, configuration: configuration)
    }

    /// The file of a `--session`: a path (it has a `/`) as given, else the named session of the URL's host,
    /// `$XDG_CONFIG_HOME/sapi/sessions/HOST[_PORT]/NAME.json` (`~/.config` without `XDG_CONFIG_HOME`).
    static func sessionFile(
        _ session: String, url: String, environment: [String: String] = Sapi.environment(["XDG_CONFIG_HOME", "HOME"])
    ) throws -> URL {
        if session.contains("/") { return URL(fileURLWithPath: session) }
        guard !session.isEmpty, session != ".", session != ".." else {
            throw UsageError(message: "\"\(session)\" is not a session name", hint: "a name, or a path with a /")
        }
        let parsed = URL(string: url).flatMap { $0.host == nil ? nil : $0 } ?? URL(string: "http://" + url)
        guard let host = parsed?.host?.lowercased(), !host.isEmpty else {
            throw UsageError(message: "a named --session needs a URL with a host", hint: "give the session's path")
        }
        let folder = parsed?.port.map { "\(host)_\($0)" } ?? host
        let config =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? Paths.home) + "/.config"
        return URL(fileURLWithPath: config)
            .appendingPathComponent("sapi/sessions", isDirectory: true)
            .appendingPathComponent(folder.replacing(":", with: "_"), isDirectory: true)
            .appendingPathComponent(session + ".json")
    }

    /// `--har`: the transport wrapped in one that records every exchange to the file (redacted unless
    /// `--show-credentials`).
    static func recorded(
        _ transport: any RequestPerforming, _ options: Options, features: (any FoundationFeatures)?
    ) throws -> any RequestPerforming {
        guard let har = options.har else { return transport }
        let file = URL(fileURLWithPath: Paths.expandingTilde(har))
        return try Self.required(features, "--har").recorded(transport, to: file, redacted: !options.showCredentials)
    }

    /// `features`, which the lean `sapi` does not have: it hands a command that needs them to `sapi-full` before
    /// it gets here (`FullBuild`).
    static func required(_ features: (any FoundationFeatures)?, _ option: String) throws -> any FoundationFeatures {
        guard let features else {
            throw UsageError(message: "\(option) is in \(FullBuild.name), not in this build of sapi")
        }
        return features
    }

    static func transport(_ options: Options, features: (any FoundationFeatures)?) throws -> any RequestPerforming {
        if let replay = options.replay {
            // `--replay`: answers from the file; nothing is sent, so no backend setting applies.
            let features = try Self.required(features, "--replay")
            do {
                return try features.replaying(URL(fileURLWithPath: Paths.expandingTilde(replay)))
            } catch {
                var error = ServerAPIError.wrap(error)
                error.message = "--replay: \(error.message)"
                throw error
            }
        }
        var extraCA: URL?
        let verify = try Self.verify(options)
        if let path = options.extraCA ?? verify.caFile {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw UsageError(message: "cannot read the CA file \(path)")
            }
            extraCA = URL(fileURLWithPath: path)
        }
        let proxy = try Self.proxy(options)
        let tls = try tlsOptions(options)
        switch options.backend ?? .curl {
        case .curl:
            #if canImport(ServerAPICurl)
                // One loop: sapi makes one call at a time, and the default (one per core) costs a second thread
                // when the origin maps to another loop, and the cgroup files read for the count.
                var configuration = CurlTransport.Configuration(loopCount: 1)
                configuration.additionalTrustedCAFile = extraCA
                configuration.proxy = proxy
                configuration.tls = tls
                if !verify.enabled, let host = URL(string: RequestBuilder.expandURL(options.url))?.host {
                    configuration.insecureHosts = [host]
                    StandardError.write(
                        "sapi: warning: --verify no: the TLS certificate of \(host) is not verified for this call\n")
                }
                if let version = options.httpVersion { configuration.httpVersion = version }
                do throws(ServerAPIError) {
                    return try CurlTransport(validating: configuration)
                } catch {
                    // HTTP/3 on a libcurl without it: the message says what to install.
                    if error.kind == .unsupported { throw UsageError(message: error.message, hint: "--http-version 2") }
                    // Unreadable --cert/--key files or a malformed --pin are bad input (exit 1), not a TLS failure.
                    throw UsageError(message: error.message)
                }
            #else
                // ServerAPICurl is for Linux and macOS (Package.swift).
                throw UsageError(
                    message: "the curl backend is not available on this platform", hint: "--backend urlsession")
            #endif
        case .urlsession:
            let features = try Self.required(features, "--backend urlsession")
            if let version = options.httpVersion, let refusal = features.urlSessionRefusal(version) {
                throw UsageError(message: refusal, hint: "--backend curl")
            }
            guard verify.enabled else {
                throw UsageError(
                    message:
                        "the urlsession backend cannot turn TLS verification off (FoundationNetworking has no such setting)",
                    hint: "--backend curl --verify no")
            }
            guard tls.isEmpty else {
                throw UsageError(message: features.urlSessionRefusal(tls), hint: "--backend curl")
            }
            guard options.unixSocket == nil, !options.url.lowercased().contains("+unix://") else {
                throw UsageError(
                    message: "the urlsession backend cannot connect to a Unix-domain socket", hint: "--backend curl")
            }
            guard extraCA == nil else {
                // FoundationNetworking on Linux has no way to add a trusted CA per session.
                throw UsageError(
                    message: "--insecure-ca is not supported by the urlsession backend", hint: "--backend curl")
            }
            do throws(ServerAPIError) {
                return try features.urlSessionTransport(proxy: proxy)
            } catch {
                throw UsageError(message: error.message, hint: "--backend curl")
            }
        }
    }

    /// `--verify`: on (`yes`, the default), off (`no`), or on with the CA certificates of a file.
    static func verify(_ options: Options) throws -> (enabled: Bool, caFile: String?) {
        guard let value = options.verify else { return (true, nil) }
        switch value.lowercased() {
        case "yes", "true": return (true, nil)
        case "no", "false": return (false, nil)
        default:
            guard options.extraCA == nil else {
                throw UsageError(message: "--verify CA_FILE and --insecure-ca FILE name the same thing; give one")
            }
            return (true, Paths.expandingTilde(value))
        }
    }

    /// Refuses challenge credentials (`-A digest`) that the chosen backend cannot answer.
    static func checkCredentials(
        _ credentials: HTTPCredentials, _ options: Options, features: (any FoundationFeatures)?
    ) throws {
        guard options.backend == .urlsession else { return }
        let features = try Self.required(features, "--backend urlsession")
        throw UsageError(message: features.urlSessionRefusal(credentials), hint: "--backend curl")
    }

    /// The `--proxy` setting: a URL, `env`, or none.
    static func proxy(_ options: Options) throws -> Proxy? {
        guard let text = options.proxy else {
            guard options.noProxy.isEmpty else { throw UsageError(message: "--no-proxy needs --proxy") }
            return nil
        }
        if text.lowercased() == "env" {
            guard options.noProxy.isEmpty else {
                throw UsageError(message: "--no-proxy does not apply to --proxy env", hint: "set no_proxy instead")
            }
            return .environment
        }
        do {
            return try Proxy(text, bypass: options.noProxy)
        } catch {
            throw UsageError(message: error.message)
        }
    }

    /// `--pin`, `--cert`, `--key`, `--key-pass` and `--legacy-tls` as TLS options.
    static func tlsOptions(_ options: Options) throws -> TLSOptions {
        var tls = TLSOptions()
        if !options.pins.isEmpty { tls.pins = [.sha256(options.pins)] }
        if options.legacyTLS, let host = URL(string: RequestBuilder.expandURL(options.url))?.host {
            tls.legacyProtocolHosts = [host]
            StandardError.write("sapi: warning: --legacy-tls: \(host) may use TLS 1.0 or 1.1 for this call\n")
        }
        if let certificate = options.clientCertificate {
            tls.clientCertificate = ClientCertificate(
                certificateFile: URL(fileURLWithPath: certificate),
                keyFile: options.clientKey.map(URL.init(fileURLWithPath:)), passphrase: options.keyPassphrase)
        } else if options.clientKey != nil || options.keyPassphrase != nil {
            throw UsageError(message: "--key and --key-pass need --cert")
        }
        return tls
    }
}

/// `--offline`: a transport that sends nothing. The request printer has shown the call by the time it is
/// handed here; the call then ends with `NotSent`.
struct OfflineTransport: RequestPerforming {
    struct NotSent: Error {}

    var name: String { "offline" }

    func perform(_ request: TransportRequest) async throws -> TransportResponse {
        throw ServerAPIError(.cancelled, "--offline: the request was not sent", url: request.url, underlying: NotSent())
    }

    /// A WebSocket's handshake, printed as a request is, and not sent.
    func webSocket(_ request: TransportRequest) async throws -> WebSocketUpgrade {
        throw ServerAPIError(.cancelled, "--offline: the request was not sent", url: request.url, underlying: NotSent())
    }
}
