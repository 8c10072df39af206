extension ServerAPIManager {
    /// Stops the manager as a server app does when it is told to (a deploy, a scale-down): new calls are refused,
    /// the calls in flight get `gracePeriod` to finish, and then the transport the manager owns is shut down.
    ///
    /// ```swift
    /// let manager = ServerAPIManager(transport: CurlTransport())
    /// // … the app runs …
    /// await manager.shutdown(gracePeriod: .seconds(10))  // on SIGTERM
    /// ```
    /// In order:
    /// 1. From the call on, every new call (`send`, `stream`, `webSocket`, a batch, an event source's next connection)
    ///    fails at once with `ServerAPIError.Kind.shuttingDown`, before anything is sent.
    /// 2. The calls in flight go on: whole calls and downloads, streamed bodies being read, retries. Each open
    ///    WebSocket is closed at once with 1001 (going away), its close handshake running in the grace period; an
    ///    event source waiting to reconnect stops waiting.
    /// 3. When the last call has ended, or `gracePeriod` has passed on the manager's clock, whichever comes first,
    ///    the calls still in flight are cancelled: they fail with `cancelled`, a download keeping its partial file
    ///    for a resume (`DownloadTarget.resume`).
    /// 4. Once every call has ended, the transport is shut down (`RequestPerforming.shutdown(gracePeriod:)`) when the
    ///    manager owns it (`ownsTransport`): for `CurlTransport`, that returns once its threads have exited.
    ///
    /// Calling it again, or from several tasks at once, is safe: every caller returns when the first one's shutdown
    /// has completed (the first caller's grace period is the one that counts). Cancelling the calling task ends the
    /// grace period at once; the method still returns only once every call has ended.
    ///
    /// - Important: Who owns what: a manager owns the transport it was made with unless it was made with
    ///   `ownsTransport: false`. A transport shared by several managers is made with that by each of them, and
    ///   shut down by the code that made it, once the managers are: `await manager.shutdown(...)` for each, then
    ///   `await transport.shutdown(gracePeriod: .zero)`. The cache, the cookie storage and the plugins are the
    ///   app's: shutting down does not touch them.
    /// - Parameter gracePeriod: How long the calls in flight may take to finish before they are cancelled;
    ///   `.zero` cancels them at once.
    public func shutdown(gracePeriod: Duration) async {
        guard shutdownState.begin() else { return await shutdownState.waitUntilDone() }
        registry.close()
        if await !drain(within: gracePeriod) {
            registry.cancelAll(.shutdown, andLater: false)
            // Not cancellable: the method returns only once every call has ended, and a cancelled call ends
            // promptly (every transport tears its connection down).
            _ = await Task { await registry.waitUntilEmpty() }.value
        }
        if ownsTransport { await transport.shutdown(gracePeriod: .zero) }
        shutdownState.finish()
    }

    /// Whether `shutdown(gracePeriod:)` was called: the manager takes no new calls.
    public var isShuttingDown: Bool { registry.isClosed }

    /// Waits for the calls in flight to end, for at most `gracePeriod` on the manager's clock, or until the calling
    /// task is cancelled. - Returns: Whether every call ended in time.
    private func drain(within gracePeriod: Duration) async -> Bool {
        let clock = configuration.clock
        let registry = self.registry
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await registry.waitUntilEmpty() }
            group.addTask {
                try? await clock.sleep(for: gracePeriod)
                return false
            }
            let drained = await group.next() ?? false
            group.cancelAll()
            return drained
        }
    }
}

/// Where a shutdown is (the manager's, a transport's): not started, running (with who waits for its end), done.
/// The first caller of `shutdown(gracePeriod:)` runs it; the others wait for it.
package final class ShutdownState: Sendable {
    private enum Phase {
        case running
        case shuttingDown([CheckedContinuation<Void, Never>])
        case shutDown
    }

    private let phase = Locked(Phase.running)

    package init() {}

    /// Starts the shutdown. - Returns: `true` for the first caller, who runs it.
    package func begin() -> Bool {
        phase.withLock { phase in
            guard case .running = phase else { return false }
            phase = .shuttingDown([])
            return true
        }
    }

    /// Returns once the shutdown has completed.
    package func waitUntilDone() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = phase.withLock { phase -> Bool in
                guard case .shuttingDown(var waiters) = phase else { return true }
                waiters.append(continuation)
                phase = .shuttingDown(waiters)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The shutdown has completed: its waiters are resumed.
    package func finish() {
        let waiters = phase.withLock { phase -> [CheckedContinuation<Void, Never>] in
            defer { phase = .shutDown }
            if case .shuttingDown(let waiters) = phase { return waiters }
            return []
        }
        for waiter in waiters { waiter.resume() }
    }
}
