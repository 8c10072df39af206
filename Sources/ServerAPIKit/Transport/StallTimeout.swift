/// A limit on how slowly a transfer may move: it fails when fewer than `bytesPerSecond` bytes a
/// second move (sent and received together) for `duration`.
///
/// Unlike the total timeout, which bounds a whole call however healthy it is, a stall timeout lets a
/// large download run for as long as it keeps moving, and ends one that has stopped (a dead peer, a
/// half-open connection, a server that drips bytes) long before its total timeout.
///
/// ```swift
/// let download = ServerAPI(host: "https://files.example.com", path: "/big.iso")
///     .download(to: destination, resume: true)
///     .timeout(.seconds(3600))
///     .stallTimeout(below: 1024, for: .seconds(30))
/// ```
///
/// - Important: A stalled call fails with a `ServerAPIError` of kind `timedOut` whose `isStalled`
///   is `true` and whose `stallTimeout` says which limit it fell below. The speed is measured over a
///   sliding window, so a short pause in an otherwise fast transfer does not trip it; libcurl
///   measures in whole seconds (a duration is rounded up to the next second there).
public struct StallTimeout: Sendable, Hashable, CustomStringConvertible {
    /// The slowest speed that still counts as moving, in bytes per second (at least 1).
    public var bytesPerSecond: Int64
    /// How long the transfer may stay below `bytesPerSecond` before it fails.
    public var duration: Duration

    /// Creates a limit that fails a transfer slower than `bytesPerSecond` for longer than `duration`.
    /// - Parameters:
    ///   - bytesPerSecond: The slowest acceptable speed, in bytes per second (at least 1).
    ///   - duration: How long the transfer may stay slower than that (positive).
    public init(bytesPerSecond: Int64, duration: Duration) {
        self.bytesPerSecond = bytesPerSecond
        self.duration = duration
    }

    /// Whether the limit can be enforced: a positive speed and a positive duration.
    package var isValid: Bool { bytesPerSecond > 0 && duration > .zero }

    /// `below 1024 B/s for 30 s`.
    public var description: String { "below \(bytesPerSecond) B/s for \(Self.seconds(duration))" }

    /// `2 s`, `0.5 s`.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard attoseconds != 0 else { return "\(seconds) s" }
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return "\((value * 1000).rounded() / 1000) s"
    }

    /// The error a transport throws for a transfer that fell below this limit: `timedOut`, with
    /// `isStalled` true.
    /// - Parameter underlying: The backend's own error, when there is one.
    /// - Returns: The error.
    package func error(underlying: (any Error)? = nil) -> ServerAPIError {
        ServerAPIError(
            .timedOut, "the transfer stalled: it moved \(description)",
            underlying: StallTimeout.Exceeded(limit: self, underlying: underlying))
    }

    /// The `underlying` error of a `ServerAPIError` thrown because a transfer stalled: what a transport throws it
    /// with, in the `Transport` SPI (`@_spi(Transport) import ServerAPIKit`); a caller reads
    /// `ServerAPIError.stallTimeout`.
    @_spi(Transport) public struct Exceeded: Error, Sendable, CustomStringConvertible {
        /// The limit the transfer fell below.
        public var limit: StallTimeout
        /// The backend's own error (such as libcurl's), when there is one.
        public var underlying: (any Error)?

        /// Creates the detail of a stall failure (the `underlying` of a `timedOut` error).
        /// - Parameters:
        ///   - limit: The limit the transfer fell below.
        ///   - underlying: The backend's own error.
        public init(limit: StallTimeout, underlying: (any Error)? = nil) {
            self.limit = limit
            self.underlying = underlying
        }

        /// "the transfer stalled: …", with the limit that was not met.
        public var description: String {
            "the transfer stalled: \(limit)" + (underlying.map { " (\($0))" } ?? "")
        }
    }
}
