import Foundation
import ServerAPIKit

extension ServerAPIManager {
    /// A manager that answers from a HAR recording kept next to the test: one line in a test.
    ///
    /// ```swift
    /// @Test func showsTheUser() async throws {
    ///     let manager = try ServerAPIManager.replaying("users")   // Recordings/users.har beside this file
    ///     let user = try await manager.send(ServerAPI(host: "https://api.example.com", path: "/users/1"))
    ///     #expect(user.status == 200)
    /// }
    /// ```
    /// The file is `Recordings/NAME.har` in the folder of the calling source file (`NAME` may be a path; an
    /// absolute one is used as it is). Record it once by running the test with `SAPI_HAR_MODE=record-missing`
    /// (or `record-all`) in the environment and an `upstream` transport: the variable overrides `mode` for
    /// every test, so no test changes between recording and replaying.
    /// - Parameters:
    ///   - name: The recording's name (`users`, `users.har`, `Shop/cart`) or absolute path.
    ///   - mode: The mode; `nil` for `configuration.mode` (`.replay`). `SAPI_HAR_MODE` overrides both.
    ///   - upstream: The transport the record modes send through.
    ///   - configuration: Matching, redaction and stream timing.
    ///   - formatter: The manager's formatter.
    ///   - managerConfiguration: The manager's settings.
    ///   - filePath: The calling file, whose folder holds `Recordings/`.
    /// - Returns: A manager over a `ReplayingTransport`.
    /// - Throws: What `ReplayingTransport(file:configuration:upstream:)` throws, and `invalidRequest` for an
    ///   unknown `SAPI_HAR_MODE`.
    public static func replaying(
        _ name: String, mode: HARMode? = nil, upstream: (any RequestPerforming)? = nil,
        configuration: ReplayingTransport.Configuration = ReplayingTransport.Configuration(),
        formatter: some ResponseFormatting = PlainFormatter(),
        managerConfiguration: ServerAPIManager.Configuration = ServerAPIManager.Configuration(),
        filePath: String = #filePath
    ) throws -> ServerAPIManager {
        var configuration = configuration
        configuration.mode = try HARMode.resolve(mode ?? configuration.mode)
        configuration.recordingAdvice = .environment
        let transport = try ReplayingTransport(
            file: HARMode.recordingFile(name, filePath: filePath), configuration: configuration, upstream: upstream)
        return ServerAPIManager(transport: transport, formatter: formatter, configuration: managerConfiguration)
    }
}

extension HARMode {
    /// The mode `SAPI_HAR_MODE` asks for, else `mode`.
    /// - Throws: `invalidRequest` when the variable names no mode.
    static func resolve(
        _ mode: HARMode, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ServerAPIError) -> HARMode {
        guard let value = environment[environmentVariable], !value.isEmpty else { return mode }
        guard let chosen = HARMode(rawValue: value.lowercased()) else {
            throw ServerAPIError(
                .invalidRequest,
                "\(environmentVariable)=\(value) is not a mode: use replay, record-missing or record-all")
        }
        return chosen
    }

    /// `Recordings/NAME.har` beside `filePath`; an absolute `name` as it is.
    static func recordingFile(_ name: String, filePath: String) -> URL {
        let file = name.hasSuffix(".har") ? name : name + ".har"
        if file.hasPrefix("/") { return URL(fileURLWithPath: file) }
        return URL(fileURLWithPath: filePath).deletingLastPathComponent()
            .appendingPathComponent("Recordings", isDirectory: true).appendingPathComponent(file)
    }
}
