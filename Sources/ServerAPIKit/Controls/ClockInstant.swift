/// A reading of an existential clock (`any Clock<Duration>`), so intervals can be measured on
/// whatever clock the manager was given — a `TestClock` in tests.
struct ClockInstant: Sendable {
    private let instant: any InstantProtocol<Duration>

    /// The clock's current instant.
    init(_ clock: any Clock<Duration>) { instant = Self.now(clock) }

    /// The time from this reading to `later`, or `nil` when the two come from different clocks.
    func duration(to later: ClockInstant) -> Duration? { Self.between(instant, later.instant) }

    private static func now<C: Clock<Duration>>(_ clock: C) -> any InstantProtocol<Duration> { clock.now }

    // Opens the first instant so the second can be cast to its concrete type.
    private static func between<I: InstantProtocol<Duration>>(
        _ start: I, _ end: any InstantProtocol<Duration>
    ) -> Duration? {
        guard let end = end as? I else { return nil }
        return start.duration(to: end)
    }
}
