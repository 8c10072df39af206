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

/// `sapi`'s configuration file, as httpie's and xh's: `config.json` in `$SAPI_CONFIG_DIR`, else in
/// `$XDG_CONFIG_HOME/sapi`, else in `~/.config/sapi`. Its `default_options` (an array of strings) go before
/// the command line's arguments, so that the command line overrides them.
enum Config {
    /// The configuration file's path.
    static func file(environment: [String: String]) -> URL {
        URL(fileURLWithPath: path(environment: environment))
    }

    /// The configuration file's path, as a string: this runs on every start, and URL's path operations cost more
    /// than the check.
    static func path(environment: [String: String]) -> String {
        if let directory = environment["SAPI_CONFIG_DIR"], !directory.isEmpty {
            return directory + "/config.json"
        }
        let config =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? Paths.home) + "/.config"
        return config + "/sapi/config.json"
    }

    /// The default options of the configuration file; none when there is no file.
    /// - Throws: `UsageError` naming the file when it cannot be read or is not what it should be.
    static func defaultOptions(environment: [String: String]) throws(UsageError) -> [String] {
        let path = path(environment: environment)
        guard access(path, F_OK) == 0 else { return [] }
        let url = URL(fileURLWithPath: path)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw UsageError(message: "cannot read the config file \(url.path)")
        }
        let hint = #"{"default_options": ["--style", "light"]}"#
        guard let json = try? JSONValue(parsing: data), case .object(let members) = json else {
            throw UsageError(message: "the config file \(url.path) is not a JSON object", hint: hint)
        }
        guard let options = members["default_options"] else { return [] }
        guard case .array(let elements) = options else {
            throw UsageError(message: "default_options in \(url.path) is not an array of strings", hint: hint)
        }
        var arguments: [String] = []
        for element in elements {
            guard case .string(let text) = element else {
                throw UsageError(message: "default_options in \(url.path) is not an array of strings", hint: hint)
            }
            arguments.append(text)
        }
        return arguments
    }
}
