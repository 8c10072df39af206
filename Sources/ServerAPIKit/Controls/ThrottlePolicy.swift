/// How often the same call may be sent: at most once per `interval`.
///
/// "The same call" is the same method, normalized URL (query included), body and credentials
/// (`Authorization`, `Cookie` and the call's varying headers), sent through the same manager.
public struct ThrottlePolicy: Sendable, Hashable {
    /// What a call sent again too soon gets instead of a network answer.
    public enum Behavior: Sendable, Hashable {
        /// A `ServerAPIError` of kind `throttled`.
        case fail
        /// The previous successful result of the same call, formatted for this call; `throttled`
        /// when there is none (the previous call failed or has not finished yet).
        case returnPrevious
    }

    /// The shortest time between two sends, measured on the manager's `configuration.clock`.
    public var interval: Duration
    /// What a call sent again too soon gets.
    public var onThrottle: Behavior

    /// Creates a policy that keeps the same call from being sent again within `interval`.
    /// - Parameters:
    ///   - interval: The shortest time between two sends.
    ///   - onThrottle: What a call sent again too soon gets.
    public init(interval: Duration, onThrottle: Behavior = .fail) {
        self.interval = interval
        self.onThrottle = onThrottle
    }
}
