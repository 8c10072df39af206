import Foundation
import ServerAPITesting
import Testing

@Suite("TestClock")
struct TestClockTests {
    @Test("its date starts at the fixed start date and moves only when the clock is advanced")
    func date() {
        let clock = TestClock()
        let source = clock.dateSource
        #expect(clock.date == TestClock.startDate)
        #expect(source() == TestClock.startDate)
        clock.advance(by: .seconds(61))
        #expect(clock.date == TestClock.startDate.addingTimeInterval(61))
        #expect(source() == clock.date)
        clock.advance(by: .milliseconds(500))
        #expect(source() == TestClock.startDate.addingTimeInterval(61.5))
        #expect(TestClock().date == TestClock.startDate)
    }
}
