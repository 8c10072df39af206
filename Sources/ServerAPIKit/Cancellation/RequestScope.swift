#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A set of calls owned by something with a lifetime — a view model, a controller, a session —
/// that cancels them all when it is cancelled or deallocated.
///
/// ```swift
/// final class SearchModel {
///     private let scope = RequestScope(manager: manager)
///
///     func search(_ text: String) {
///         scope.send(searchAPI.query("q", text)) { [weak self] result in self?.show(result) }
///     }
///     // When the model goes away, so does `scope`, and every search still running ends with `cancelled`.
/// }
/// ```
/// - Important: A call started with a completion handler does not keep the scope alive, so
///   dropping the owner cancels it. An `async` call keeps the scope alive while its caller
///   awaits it (the caller holds a reference); such calls end when `cancel()` is called or the
///   awaiting task is cancelled. Cancelling a scope does not close it: calls started afterwards run.
public final class RequestScope: Sendable {
    /// The registry of the operation the current task's calls join, set by `perform` for the operation's
    /// duration.
    @TaskLocal static var current: InFlightRegistry?

    /// The manager `send` uses.
    public let manager: ServerAPIManager?
    /// The operations running in the scope, by key.
    private let runs = Locked((next: UInt64(0), open: [UInt64: InFlightRegistry]()))

    /// Creates a scope.
    /// - Parameter manager: The manager `send` uses; without one, `perform` binds calls to any manager.
    public init(manager: ServerAPIManager? = nil) {
        self.manager = manager
    }

    deinit { cancel() }

    /// Cancels every call running in the scope; each ends with `cancelled`.
    public func cancel() {
        // After releasing the lock: a call's cancellation may call back in.
        let runs = runs.withLock { runs in
            defer { runs.open = [:] }
            return Array(runs.open.values)
        }
        for run in runs { run.cancelAll(.scope, andLater: true) }
    }

    /// The number of operations (`perform`, `send`) running in the scope.
    public var activeCount: Int { runs.withLock { $0.open.count } }

    /// Opens an operation's run; close it with `close(_:)`.
    func open() -> (key: UInt64, run: InFlightRegistry) {
        let run = InFlightRegistry()
        let key = runs.withLock { runs in
            runs.next += 1
            runs.open[runs.next] = run
            return runs.next
        }
        return (key, run)
    }

    /// Closes an operation's run that ended.
    func close(_ run: (key: UInt64, run: InFlightRegistry)) {
        runs.withLock { _ = $0.open.removeValue(forKey: run.key) }
    }

    /// Runs an operation in the scope: the calls it makes, in its own task and in the tasks it starts,
    /// are cancelled when the scope is.
    ///
    /// The operation runs in the caller's task: no task is made for it. Cancelling the scope cancels the
    /// operation's calls, those in flight and those it starts afterwards; other work in the operation (a
    /// sleep) is not interrupted.
    /// - Parameter operation: The work, such as `{ try await manager.send(ProductsRequest(shopID: 7)) }`.
    /// - Returns: What the operation returns.
    /// - Throws: What the operation throws, as `ServerAPIError`; `cancelled` when the scope was cancelled.
    public func perform<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        let opened = open()
        defer { close(opened) }
        do {
            return try await Self.$current.withValue(opened.run) { try await operation() }
        } catch {
            throw ServerAPIError.wrap(error)
        }
    }

    /// Sends a call with the scope's manager; it is cancelled when the scope is.
    /// - Parameters:
    ///   - api: The call.
    ///   - progress: Called with upload and download progress, from any thread.
    /// - Returns: The formatted result.
    /// - Throws: `ServerAPIError`; `invalidRequest` when the scope has no manager.
    public func send(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> ServerResult {
        let manager = try requireManager(for: api)
        return try await perform { try await manager.send(api, progress: progress) }
    }

    /// Sends a call with the scope's manager and decodes a model at the call's key path.
    /// - Throws: `ServerAPIError`; `invalidRequest` when the scope has no manager.
    public func send<Model: Decodable & Sendable>(_ api: ServerAPI, decoding type: Model.Type) async throws -> Model {
        let manager = try requireManager(for: api)
        return try await perform { try await manager.send(api, decoding: type) }
    }

    /// Sends a call with the scope's manager and delivers its result to a completion handler,
    /// called exactly once; the running call does not keep the scope alive.
    /// - Returns: A handle with the call's id and a way to cancel it.
    @discardableResult
    public func send(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<ServerResult, ServerAPIError>) -> Void
    ) -> RequestHandle {
        guard let manager else {
            completion(.failure(Self.noManager(api)))
            return RequestHandle(id: api.id, cancel: {})
        }
        // The completion holds the scope weakly, so the owner can still let it go.
        let opened = open()
        return Self.$current.withValue(opened.run) {
            manager.send(api, progress: progress) { [weak self] result in
                self?.close(opened)
                completion(result)
            }
        }
    }

    private func requireManager(for api: ServerAPI) throws(ServerAPIError) -> ServerAPIManager {
        guard let manager else { throw Self.noManager(api) }
        return manager
    }

    private static func noManager(_ api: ServerAPI) -> ServerAPIError {
        ServerAPIError(
            .invalidRequest, "the request scope has no manager: create it with one, or use scope.perform",
            requestID: api.id)
    }
}
