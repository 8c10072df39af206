// A Hummingbird app whose handlers call an upstream service through ServerAPIKit, with swift-log, swift-metrics
// and distributed tracing on both sides: Hummingbird's middlewares for the incoming request, ServerAPIKit's plugins
// for the outgoing calls (children of the request's span, their context sent upstream).
//
//   UPSTREAM_URL=http://127.0.0.1:8080 UPSTREAM_API_KEY=s3cret PORT=8090 swift run --package-path Integrations/Example
//   curl http://127.0.0.1:8090/greet/ada
//   curl -i http://127.0.0.1:8090/status/503
//   kill -TERM <pid>   # the requests in progress and their upstream calls finish, then the process exits
import Foundation
import Hummingbird
import Logging
import ServerAPICurl
import ServerAPIKit
import ServerAPILogging
import ServerAPIMetrics
import ServerAPIServiceLifecycle
import ServerAPITracing
import ServiceLifecycle

let environment = ProcessInfo.processInfo.environment
guard let upstream = environment["UPSTREAM_URL"].flatMap(URL.init(string:)) else {
    FileHandle.standardError.write(
        Data("serverapi-hummingbird-example: error: set UPSTREAM_URL (httpbin's URL)\n".utf8))
    exit(1)
}
let port = environment["PORT"].flatMap(Int.init) ?? 8090
// Sent upstream as `api_key`: the logs show it as <redacted>.
let apiKey = environment["UPSTREAM_API_KEY"] ?? "demo-key"

var logger = Logger(label: "example")
logger.logLevel = .debug
// In a real app: LoggingSystem.bootstrap(...), MetricsSystem.bootstrap(...), InstrumentationSystem.bootstrap(...)
// with the app's backends; the plugins use whatever is bootstrapped.
let manager = ServerAPIManager(
    transport: CurlTransport(),
    plugins: [TracingPlugin(), SwiftMetricsPlugin(), SwiftLogPlugin(logger: Logger(label: "upstream"))]
)

let router = Router()
router.add(middleware: LogRequestsMiddleware(.info))
router.add(middleware: MetricsMiddleware())
router.add(middleware: TracingMiddleware())

// Calls the upstream with the name and relays what it echoed.
router.get("greet/:name") { _, context -> String in
    let name = try context.parameters.require("name")
    let api = ServerAPI(url: upstream.appendingPathComponent("anything/greet"))
        .query("name", name)
        .query("api_key", apiKey)
        .timeout(.seconds(5))
        .retry(2)
    let result = try await manager.send(api)
    let echoed = result.json?["args"]?["name"]?.stringValue ?? "?"
    return "hello \(echoed): upstream answered \(result.status) via \(result.metrics.transportName ?? "?")\n"
}

// Maps an upstream failure to 502 Bad Gateway.
router.get("status/:code") { _, context -> HTTPResponse.Status in
    let code = try context.parameters.require("code", as: Int.self)
    do {
        _ = try await manager.send(ServerAPI(url: upstream.appendingPathComponent("status/\(code)")).format(.data))
        return .ok
    } catch let error as ServerAPIError {
        context.logger.warning("upstream failed", metadata: ["error": "\(error.kind.rawValue)"])
        return .badGateway
    }
}

let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port)),
    logger: logger
)
// SIGTERM (a deploy) or Ctrl-C shuts the group down gracefully, in the reverse order of the list: the app stops
// taking requests and finishes those it has, then the manager lets its remaining upstream calls finish (for at most
// 10 seconds) and stops its transport.
let group = ServiceGroup(
    services: [ServerAPIManagerService(manager, gracePeriod: .seconds(10)), app],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: logger
)
try await group.run()
