/// The error `poll` throws when its condition did not come true in time.
public struct PollTimedOut: Error, CustomStringConvertible {
    /// What was awaited.
    public let description: String
}

/// Polls `condition` until it holds, for states that servers and transports report but offer no event for
/// (a fixture's counters, a transport's active transfers). Prefer waiting on an event where one exists.
/// - Parameters:
///   - what: What is awaited, for the error.
///   - limit: How long to keep polling; a generous bound, never an assertion about speed: 10 s by default, scaled
///     for slow builds (`TestTiming.bound`), as a ThreadSanitizer run with every suite in parallel on two cores can
///     keep a task from running for seconds.
///   - interval: The wait between two looks.
///   - condition: The state awaited.
/// - Throws: `PollTimedOut` naming `what` when `condition` did not hold within `limit`; what `condition`
///   throws; `CancellationError` when the task is cancelled.
public func poll(
    _ what: String, within limit: Duration = TestTiming.bound(.seconds(10)),
    every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw PollTimedOut(description: "timed out waiting for \(what)") }
        try await Task.sleep(for: interval)
    }
}
