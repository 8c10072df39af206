#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Adds a bearer token to every request and refreshes it when the server rejects it — once for
/// a whole wave of rejections — then retries the rejected calls with the new token.
///
/// ```swift
/// let auth = AuthRefreshPlugin(token: store.accessToken) { expired in
///     try await store.refresh()                    // returns the new access token
/// }
/// let manager = ServerAPIManager(transport: transport, plugins: [auth])
/// ```
/// - A rejection is a status in `statuses` (401) or a business code in `businessCodes`.
/// - Concurrent rejections share ONE refresh. A call rejected with a token older than the current
///   one does not refresh again: it retries with the current token.
/// - A failing refresh fails every call waiting for it with a `ServerAPIError` of the rejection's
///   kind and status whose `underlying` error is the refresh's error.
/// - At most `maxRefreshes` refreshes run within `window`; past that, rejected calls fail at once
///   (a server that keeps answering 401 after a fresh token cannot make the app loop).
/// - Calls made from inside the refresh closure (a login call through the same manager) are
///   left alone: they get no token and never wait for the refresh they belong to.
/// - A call that sets the header itself keeps it, and its rejections are not the plugin's business.
///
/// Retries use the manager's plugin retries (`Configuration.maxPluginRetries`, 2 by default).
/// - Important: Put this plugin before a `SigningPlugin`, so the signature covers the token.
public final class AuthRefreshPlugin: ServerAPIPlugin {
    /// Gets a new token; `expired` is the token the server rejected (`nil` when there was none).
    public typealias Refresh = @Sendable (_ expired: String?) async throws -> String

    /// How the token is sent, what counts as a rejection, and how many refreshes are allowed.
    public struct Configuration: Sendable {
        /// The header that carries the token.
        public var headerName: String
        /// The header value for a token.
        public var headerValue: @Sendable (String) -> String
        /// The statuses that mean "the token was rejected".
        public var statuses: Set<Int>
        /// The business codes that mean "the token was rejected" (errors of kind `business`).
        public var businessCodes: Set<String>
        /// The most refreshes within `window`.
        public var maxRefreshes: Int
        /// The window `maxRefreshes` counts in.
        public var window: Duration
        /// The clock `window` is measured on.
        public var clock: any Clock<Duration>

        /// Creates settings: the header the token goes in, which responses mean it expired, and the refresh limits.
        public init(
            headerName: String = "Authorization",
            headerValue: @escaping @Sendable (String) -> String = { "Bearer \($0)" },
            statuses: Set<Int> = [401],
            businessCodes: Set<String> = [],
            maxRefreshes: Int = 3,
            window: Duration = .seconds(60),
            clock: any Clock<Duration> = ContinuousClock()
        ) {
            self.headerName = headerName
            self.headerValue = headerValue
            self.statuses = statuses
            self.businessCodes = businessCodes
            self.maxRefreshes = maxRefreshes
            self.window = window
            self.clock = clock
        }
    }

    private struct State {
        var token: String?
        /// Header values of recent tokens, newest last: a rejection carrying one of them is stale.
        var issued: [String] = []
        var refreshStarts: [ClockInstant] = []
        var refreshCount = 0
        /// Failures to report from `prepare` on the retry the manager makes for the call.
        var failures: [RequestID: ServerAPIError] = [:]
        /// Calls whose failure `prepare` just reported: not to be retried again.
        var reported: Set<RequestID> = []
        /// How many refreshes have finished, successful or not.
        var finishedRefreshes = 0
        /// The last refresh's error when it failed, with `finishedRefreshes` at its end.
        var lastFailure: (generation: Int, error: any Error)?
        /// `finishedRefreshes` when each call's current attempt was prepared: a rejection of an
        /// attempt sent before a refresh ended belongs to that refresh's wave.
        var sentAt: [RequestID: Int] = [:]
    }

    private enum Step {
        case retry
        case ignore
        case fail(ServerAPIError)
        /// The wave this rejection belongs to already ended with a failed refresh.
        case refreshFailed(any Error)
        case await(SingleFlight<Int, String>.Ticket, expired: String?)
    }

    /// Set while a refresh runs, so calls made by the refresh closure are recognised.
    private static let refreshing = TaskLocal<ObjectIdentifier?>(wrappedValue: nil)

    private let configuration: Configuration
    private let refresh: Refresh
    private let state: Locked<State>
    /// The refresh in flight, shared by every call rejected in one wave (internal for tests).
    let refreshes = SingleFlight<Int, String>()

    /// Creates a plugin that sends the token with every call and, when calls are rejected, refreshes it once for all
    /// of them.
    /// - Parameters:
    ///   - token: The current token, if there is one.
    ///   - configuration: Header, rejections and refresh limits.
    ///   - refresh: Gets a new token; a thrown error fails the calls waiting for it.
    public init(token: String?, configuration: Configuration = Configuration(), refresh: @escaping Refresh) {
        self.configuration = configuration
        self.refresh = refresh
        var state = State(token: token)
        if let token { state.issued = [configuration.headerValue(token)] }
        self.state = Locked(state)
    }

    /// The current token.
    public var token: String? { state.withLock { $0.token } }

    /// How many refreshes have been started.
    public var refreshCount: Int { state.withLock { $0.refreshCount } }

    /// Replaces the token (after a sign-in) or removes it (after a sign-out).
    public func setToken(_ token: String?) {
        state.withLock { state in
            state.token = token
            if let token { Self.remember(configuration.headerValue(token), in: &state) }
        }
    }

    public func prepare(_ request: TransportRequest, for api: ServerAPI) async throws -> TransportRequest {
        let failure = state.withLock { state -> ServerAPIError? in
            guard let failure = state.failures.removeValue(forKey: api.id) else { return nil }
            state.reported.insert(api.id)
            return failure
        }
        if let failure { throw failure }
        guard Self.refreshing.get() != ObjectIdentifier(self) else { return request }
        let token = state.withLock { state -> String? in
            state.sentAt[api.id] = state.finishedRefreshes
            return state.token
        }
        guard !request.headers.contains(configuration.headerName), let token else { return request }
        var request = request
        request.headers.add(name: configuration.headerName, value: configuration.headerValue(token))
        return request
    }

    public func shouldRetry(
        after error: ServerAPIError, request: TransportRequest, api: ServerAPI, attempt: Int
    ) async -> RetryDecision {
        if state.withLock({ $0.reported.remove(api.id) }) != nil { return .doNotRetry }
        guard isRejection(error), Self.refreshing.get() != ObjectIdentifier(self) else { return .useDefault }
        switch step(for: error, sent: request.headers[configuration.headerName], api: api) {
        case .ignore:
            return .useDefault
        case .retry:
            return .retryAfter(.zero)
        case .fail(let failure):
            // The manager retries; `prepare` then fails the call with this clear error.
            state.withLock { $0.failures[api.id] = failure }
            return .retryAfter(.zero)
        case .refreshFailed(let refreshError):
            reportRefreshFailure(refreshError, rejecting: error, request: request, api: api)
            return .retryAfter(.zero)
        case .await(let ticket, let expired):
            if ticket.isLeader {
                let id = ObjectIdentifier(self)
                refreshes.start(ticket) { [refresh] in
                    // The wave's bookkeeping is updated before the flight closes, so a late
                    // rejection of the same wave either joins the flight or sees how it ended.
                    do {
                        let token = try await Self.refreshing.withValue(id) { try await refresh(expired) }
                        self.finishRefresh(token: token, failure: nil)
                        return .success(token)
                    } catch {
                        self.finishRefresh(token: nil, failure: error)
                        return .failure(error)
                    }
                }
            }
            let outcome = await refreshes.wait(ticket)
            // A cancelled call goes back to the manager, which ends it as cancelled.
            if Task.isCancelled { return .retryAfter(.zero) }
            if case .failure(let refreshError) = outcome {
                reportRefreshFailure(refreshError, rejecting: error, request: request, api: api)
            }
            return .retryAfter(.zero)
        }
    }

    /// Records the clear error that `prepare` fails the call with on the manager's retry.
    private func reportRefreshFailure(
        _ refreshError: any Error, rejecting error: ServerAPIError, request: TransportRequest, api: ServerAPI
    ) {
        let failure = ServerAPIError(
            error.kind, "\(Self.rejection(error)) and refreshing the token failed: \(refreshError)",
            requestID: api.id, url: request.url, status: error.status, code: error.code,
            underlying: refreshError)
        state.withLock { $0.failures[api.id] = failure }
    }

    private func finishRefresh(token: String?, failure: (any Error)?) {
        state.withLock { state in
            state.finishedRefreshes += 1
            if let token {
                state.token = token
                Self.remember(configuration.headerValue(token), in: &state)
            }
            state.lastFailure = failure.map { (state.finishedRefreshes, $0) }
        }
    }

    public func didComplete(_ api: ServerAPI, metrics: RequestMetrics, error: ServerAPIError?) {
        // Forget a failure the manager had no retry left to report.
        state.withLock { state in
            state.failures[api.id] = nil
            state.reported.remove(api.id)
            state.sentAt[api.id] = nil
        }
    }

    /// Decides, in one step, whether a rejection is stale, joins the refresh in flight, starts
    /// one, or has hit the refresh limit.
    private func step(for error: ServerAPIError, sent: String?, api: ServerAPI) -> Step {
        let now = ClockInstant(configuration.clock)
        return state.withLock { state -> Step in
            let current = state.token.map(configuration.headerValue)
            if let sent, sent != current {
                // An older token of ours: refreshed since, retry with the current one. Any other
                // value is the call's own credential.
                return state.issued.contains(sent) ? .retry : .ignore
            }
            if sent == nil && current != nil { return .retry }
            // Rejected with the current token (or none): a new wave — join its refresh or start one.
            if let ticket = refreshes.enter(0, progress: nil, opening: false) {
                return .await(ticket, expired: state.token)
            }
            // Sent before the last refresh ended, and that refresh failed: the same wave, already
            // answered. Refreshing again for it would be a second refresh for one wave.
            if let failure = state.lastFailure, let sentAt = state.sentAt[api.id], sentAt < failure.generation {
                return .refreshFailed(failure.error)
            }
            state.refreshStarts.removeAll { start in
                start.duration(to: now).map { $0 >= configuration.window } ?? true
            }
            guard state.refreshStarts.count < configuration.maxRefreshes else {
                return .fail(
                    ServerAPIError(
                        error.kind,
                        "\(Self.rejection(error)) after \(state.refreshStarts.count) token refreshes within "
                            + String(cFormat: "%g s", configuration.window.seconds) + "; not refreshing again",
                        requestID: api.id, url: error.url, status: error.status, code: error.code))
            }
            state.refreshStarts.append(now)
            state.refreshCount += 1
            guard let ticket = refreshes.enter(0, progress: nil, opening: true) else { return .ignore }
            return .await(ticket, expired: state.token)
        }
    }

    private func isRejection(_ error: ServerAPIError) -> Bool {
        if error.kind == .httpStatus, let status = error.status { return configuration.statuses.contains(status) }
        if error.kind == .business, let code = error.code { return configuration.businessCodes.contains(code) }
        return false
    }

    private static func rejection(_ error: ServerAPIError) -> String {
        if error.kind == .business, let code = error.code { return "the server answered business code \(code)" }
        let status = error.status ?? 0
        return "the server answered \(status) \(HTTPStatus.reason(status))"
    }

    private static func remember(_ value: String, in state: inout State) {
        state.issued.removeAll { $0 == value }
        state.issued.append(value)
        if state.issued.count > 16 { state.issued.removeFirst(state.issued.count - 16) }
    }
}
