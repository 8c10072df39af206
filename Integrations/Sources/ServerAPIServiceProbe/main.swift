// A server app in miniature, for the lifecycle tests: a service group of a workload and the manager's service,
// stopped by SIGTERM. The workload sends PROBE_CALLS calls to the fault fixture's slow route (PROBE_DELAY_MS each)
// and one that never answers; once every call is on its way it prints "ready". On SIGTERM the group shuts the manager
// down first (services stop in the reverse order of the list): the slow calls finish in the grace period
// (PROBE_GRACE_MS), the one that never answers is cancelled at its end. The workload then prints each call's outcome,
// tries one more call once it is told to stop (refused: the manager is shutting down), and returns.
//
//   SAPI_FIXTURE_URL=http://127.0.0.1:PORT PROBE_CALLS=20 swift run --package-path Integrations serverapi-service-probe
import Foundation
import Logging
import ServerAPICurl
import ServerAPIKit
import ServerAPIServiceLifecycle
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Counts the attempts handed to the transport.
final class Sent: ServerAPIPlugin {
    private let count = Mutex(0)
    let target: Int
    let onTarget: @Sendable () -> Void

    init(target: Int, onTarget: @escaping @Sendable () -> Void) {
        self.target = target
        self.onTarget = onTarget
    }

    func willSend(_ request: TransportRequest, for api: ServerAPI) {
        if count.withLock({ count in
            count += 1
            return count == target
        }) {
            onTarget()
        }
    }
}

/// Writes a line to standard output at once (the test reads it as it comes).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// How a call ended, as one line.
func outcome(_ result: Result<ServerResult, any Error>) -> String {
    switch result {
    case .success(let result): "ok \(result.status)"
    case .failure(let error as ServerAPIError): "error \(error.kind.rawValue): \(error.message)"
    case .failure(let error): "error \(error)"
    }
}

struct Workload: Service {
    let manager: ServerAPIManager
    let fixture: String
    let calls: Int
    let delay: Int

    func run() async throws {
        let slow = (0..<calls).map { URL(string: "\(fixture)/sometimes-slow?percent=100&delay_ms=\(delay)&n=\($0)")! }
        let hanging = URL(string: "\(fixture)/hang?key=probe-\(UUID().uuidString)")!
        let lines = await withTaskGroup(of: String.self) { group in
            for url in slow + [hanging] {
                group.addTask {
                    let result: Result<ServerResult, any Error>
                    do {
                        result = .success(
                            try await manager.send(ServerAPI(url: url).timeout(.seconds(600)).format(.data)))
                    } catch {
                        result = .failure(error)
                    }
                    return (url == hanging ? "hanging " : "slow ") + outcome(result)
                }
            }
            var lines: [String] = []
            for await line in group { lines.append(line) }
            return lines
        }
        for line in lines.sorted() { say(line) }
        try? await gracefulShutdown()
        let late: Result<ServerResult, any Error>
        do { late = .success(try await manager.send(ServerAPI(url: slow[0]).format(.data))) } catch {
            late = .failure(error)
        }
        say("late " + outcome(late))
    }
}

let environment = ProcessInfo.processInfo.environment
guard let fixture = environment["SAPI_FIXTURE_URL"] else {
    FileHandle.standardError.write(Data("serverapi-service-probe: error: set SAPI_FIXTURE_URL\n".utf8))
    exit(1)
}
let calls = environment["PROBE_CALLS"].flatMap(Int.init) ?? 20
let delay = environment["PROBE_DELAY_MS"].flatMap(Int.init) ?? 1500
let grace = environment["PROBE_GRACE_MS"].flatMap(Int.init) ?? 5000

let sent = Sent(target: calls + 1) { say("ready") }
let manager = ServerAPIManager(transport: CurlTransport(), plugins: [sent])
var logger = Logger(label: "serverapi-service-probe")
logger.logLevel = .warning
let group = ServiceGroup(
    services: [
        Workload(manager: manager, fixture: fixture, calls: calls, delay: delay),
        ServerAPIManagerService(manager, gracePeriod: .milliseconds(grace)),
    ],
    gracefulShutdownSignals: [.sigterm], logger: logger)
try await group.run()
say("exited")
