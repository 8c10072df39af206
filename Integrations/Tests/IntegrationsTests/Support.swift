import Foundation
import ServerAPICurl
import ServerAPIKit
import ServerAPIURLSession
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The transports the integration tests run on.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case curl
    case urlsession

    var testDescription: String { rawValue }

    /// A manager on this backend.
    func manager(plugins: [any ServerAPIPlugin] = []) -> ServerAPIManager {
        switch self {
        case .curl: ServerAPIManager(transport: CurlTransport(), plugins: plugins)
        case .urlsession: ServerAPIManager(transport: URLSessionTransport(), plugins: plugins)
        }
    }
}

/// The local test servers that scripts/test-server.sh starts; the tests fail (never skip) without them.
enum TestServers {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// httpbin's base URL, from `SAPI_HTTPBIN_URL` (scripts/test.sh exports it).
    static func httpbin() throws -> URL {
        guard let value = ProcessInfo.processInfo.environment["SAPI_HTTPBIN_URL"], !value.isEmpty,
            let url = URL(string: value)
        else {
            throw Missing(
                description: "SAPI_HTTPBIN_URL is not set: httpbin is not running. Run scripts/test.sh, or "
                    + "scripts/test-server.sh start; eval \"$(scripts/test-server.sh env)\"; "
                    + "swift test --package-path Integrations")
        }
        return url
    }

    /// The fault fixture's base URL, from `SAPI_FIXTURE_URL` (scripts/test-server.sh's env).
    static func fixture() throws -> String {
        guard let value = ProcessInfo.processInfo.environment["SAPI_FIXTURE_URL"], !value.isEmpty else {
            throw Missing(
                description: "SAPI_FIXTURE_URL is not set: the fault fixture is not running. Run "
                    + "scripts/test-server.sh start; eval \"$(scripts/test-server.sh env)\"")
        }
        return value.hasSuffix("/") ? String(value.dropLast()) : value
    }

    /// A URL on the fault fixture.
    static func fixture(_ path: String) throws -> URL {
        try #require(URL(string: try fixture() + path))
    }

    /// A URL on httpbin.
    static func httpbin(_ path: String) throws -> URL {
        let base = try httpbin().absoluteString
        return try #require(URL(string: (base.hasSuffix("/") ? String(base.dropLast()) : base) + path))
    }
}

/// Waits until `condition` holds, checking every 10 ms for at most `seconds`.
/// - Returns: Whether it held in time.
func poll(within seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// A loopback URL on which nothing listens.
func unusedLoopbackURL() throws -> URL {
    // Nothing listens on port 1 of the loopback address (a privileged port): connecting is refused.
    try #require(URL(string: "http://127.0.0.1:1"))
}

/// The multiplier of the tests' time bounds, from `SAPI_TEST_TIME_SCALE` (the ThreadSanitizer run sets it).
enum TestTiming {
    static let scale: Int = max(1, ProcessInfo.processInfo.environment["SAPI_TEST_TIME_SCALE"].flatMap(Int.init) ?? 1)
}

/// Runs `body` and returns the `ServerAPIError` it threw; records an issue when it returned or threw another error.
func expectServerAPIError(
    _ body: () async throws -> some Any, sourceLocation: SourceLocation = #_sourceLocation
) async -> ServerAPIError? {
    do {
        _ = try await body()
        Issue.record("expected an error, got a result", sourceLocation: sourceLocation)
        return nil
    } catch let error as ServerAPIError {
        return error
    } catch {
        Issue.record("expected a ServerAPIError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A signal a thread fires and a test waits for without sleeping; a wait ends early when its task is cancelled
/// (a test's time limit).
final class SignalCounter: Sendable {
    private struct State {
        var fired = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var next: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Fires the signal (again is harmless): every wait ends.
    func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the signal has fired.
    func wait() async {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.fired || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
