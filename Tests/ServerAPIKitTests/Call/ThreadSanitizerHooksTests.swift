import Testing

@testable import ServerAPIKit

@Suite struct ThreadSanitizerHooksTests {
    /// Under ThreadSanitizer (CI's instrumented passes) every annotation the package calls is found: a misspelt name
    /// would silently leave a hand-over unannotated. Without the tool, none is.
    @Test func everyAnnotationIsFoundOrNone() {
        let found = [
            ThreadSanitizerHooks.acquire != nil, ThreadSanitizerHooks.release != nil,
            ThreadSanitizerHooks.happensBefore != nil, ThreadSanitizerHooks.happensAfter != nil,
        ]
        #expect(Set(found).count == 1, "found: \(found)")
    }
}
