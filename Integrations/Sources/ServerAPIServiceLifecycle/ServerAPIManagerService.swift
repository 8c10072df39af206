public import ServerAPIKit
public import ServiceLifecycle

/// A `ServerAPIManager` as a swift-service-lifecycle `Service`: it runs until the service group shuts down
/// gracefully (SIGTERM, say), then calls `ServerAPIManager.shutdown(gracePeriod:)`, so that the calls in flight
/// finish (or are cancelled once the grace period ends) and the transport the manager owns stops before the process
/// exits.
///
/// ```swift
/// let manager = ServerAPIManager(transport: CurlTransport())
/// let app = Application(router: router)  // whose handlers call `manager`
/// let group = ServiceGroup(
///     services: [ServerAPIManagerService(manager, gracePeriod: .seconds(10)), app],
///     gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
/// A service group shuts its services down in the reverse order of the list: with the manager first, the app stops
/// taking requests and finishes those it has (their upstream calls with them) before the manager drains what is left.
///
/// - Important: The manager shuts down the transport it owns (`ServerAPIManager.ownsTransport`); a transport shared
///   by several managers is shut down by its owner after them.
public struct ServerAPIManagerService: Service {
    /// The manager the service shuts down.
    public let manager: ServerAPIManager
    /// How long the calls in flight may take to finish once the graceful shutdown begins.
    public let gracePeriod: Duration

    /// Wraps a manager.
    /// - Parameters:
    ///   - manager: The app's manager.
    ///   - gracePeriod: How long the calls in flight may take to finish once the graceful shutdown begins; keep it
    ///     shorter than the time the platform gives the process after SIGTERM (Kubernetes: 30 seconds by default).
    public init(_ manager: ServerAPIManager, gracePeriod: Duration = .seconds(10)) {
        self.manager = manager
        self.gracePeriod = gracePeriod
    }

    /// Waits for the graceful shutdown, then shuts the manager down; returns once it has.
    ///
    /// When the group cancels the service instead (a cancellation signal, another service failing), the manager is
    /// shut down without a grace period: its calls in flight are cancelled at once.
    public func run() async throws {
        let graceful: Bool
        do {
            try await gracefulShutdown()
            graceful = true
        } catch {
            graceful = false
        }
        await manager.shutdown(gracePeriod: graceful ? gracePeriod : .zero)
    }
}
