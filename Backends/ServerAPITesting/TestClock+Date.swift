#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TestClock {
    /// The wall-clock date at which every `TestClock` starts: a fixed date, so that tests do not depend on
    /// when they run.
    public static let startDate = Date(timeIntervalSinceReferenceDate: 700_000_000)

    /// The clock read as a wall clock, for APIs that measure time in `Date`s: `startDate` plus the time
    /// advanced so far.
    public var date: Date {
        let offset = now.offset.components
        return Self.startDate.addingTimeInterval(Double(offset.seconds) + Double(offset.attoseconds) / 1e18)
    }

    /// A date source that moves with this clock, for parameters that take one (the caches' `now:`).
    ///
    /// ```swift
    /// let clock = TestClock()
    /// let cache = MemoryCache(configuration: .init(defaultTTL: .seconds(60)), now: clock.dateSource)
    /// clock.advance(by: .seconds(61))   // every entry stored before is now expired
    /// ```
    public var dateSource: @Sendable () -> Date { { self.date } }
}
