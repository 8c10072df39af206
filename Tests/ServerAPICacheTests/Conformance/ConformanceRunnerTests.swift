import Foundation
import ServerAPIKit
import ServerAPITesting
import Testing

/// The conformance suite's own machinery: its script notation, its dates, and that its checks can fail.
@Suite struct ConformanceRunnerTests {
    /// A cache that keeps nothing: every lookup misses.
    struct ForgetfulCache: CachePolicy {
        func lookup(_ key: CacheKey) async throws -> CacheEntry? { nil }
        func store(_ entry: CacheEntry, for key: CacheKey) async throws {}
        func remove(_ key: CacheKey) async throws {}
        func removeAll() async throws {}
    }

    @Test("the script notation reads the call, the origin's answer and the checks")
    func notation() throws {
        let steps = try ConformanceStep.parse(
            #"""
            POST /target ?q=1 setup pause delay=5 locations
            > Foo: 1
            > Bar: | 1, 2 |
            >> abc
            < 206
            < Expires: @-30
            <? Age: abc
            << 01234
            --
            GET ims-from-previous rfc850=if-modified-since
            > If-Modified-Since: @-3000
            = etag-validated
            = status any
            = header Age > 2
            = header A == B
            = header a: 1
            = no-header Connection: x
            = sent Foo
            = not-sent Bar: 2
            = text any
            = body unchecked
            = method HEAD
            = setup-only type,header
            """#)
        #expect(steps.count == 2)
        let first = steps[0]
        #expect(first.method == "POST" && first.pathSuffix == "target" && first.query == "q=1")
        #expect(first.isSetup && first.pauseAfter && first.originDelay == 5 && first.relativeLocations)
        #expect(
            first.requestHeaders == [.init(name: "Foo", value: .text("1")), .init(name: "Bar", value: .text(" 1, 2 "))])
        #expect(first.requestBody == "abc" && first.status == 206 && first.responseBody == "01234")
        #expect(
            first.responseHeaders.map(\.field) == [
                .init(name: "Expires", value: .date(offset: -30)), .init(name: "Age", value: .text("abc")),
            ])
        #expect(first.responseHeaders.map(\.checked) == [true, false])
        let second = steps[1]
        #expect(second.modifiedSinceFromPrevious && second.rfc850Dates == ["if-modified-since"])
        #expect(second.requestHeaders == [.init(name: "If-Modified-Since", value: .date(offset: -3000))])
        #expect(second.outcome == .etagValidated && second.expectedStatus == .some(nil))
        #expect(second.expectedHeaders == [.greaterThan("Age", 2), .sameAs("A", "B"), .equals("a", .text("1"))])
        #expect(second.absentHeaders.map(\.name) == ["Connection"] && second.absentHeaders.first?.value == .text("x"))
        #expect(second.sentHeaders.map(\.name) == ["Foo"] && second.sentHeaders.first?.value == nil)
        #expect(second.unsentHeaders.first?.value == .text("2"))
        #expect(second.expectedText == .some(nil) && !second.checksBody && second.expectedMethod == "HEAD")
        #expect(second.setupChecks == ["type", "header"])
        #expect(throws: ConformanceStep.ParseError.self) { try ConformanceStep.parse("GET\n= maybe-cached") }
    }

    @Test("dates are written as IMF-fixdate, or in the obsolete RFC 850 form")
    func dates() {
        let date = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDateText.format(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDateText.format(date, rfc850: true) == "Sunday, 06-Nov-94 08:49:37 GMT")
        let field = ConformanceField(name: "Expires", value: .date(offset: 3_600))
        #expect(ConformanceOrigin.text(field, now: date) == "Sun, 06 Nov 1994 09:49:37 GMT")
    }

    @Test("the origin answers 304 to the previous step's validators (as scripted when the cache answered it), else 999")
    func originValidation() async throws {
        let testCase = ConformanceCase(
            "validation", .required, group: "test",
            #"""
            GET setup pause
            < ETag: "a"
            --
            GET setup
            < ETag: "b"
            --
            GET
            = etag-validated
            """#)
        let origin = ConformanceOrigin(testCase, clock: TestClock(), baseURL: "https://origin.test/case")
        let url = try #require(URL(string: "https://origin.test/case"))
        func status(_ headers: HTTPHeaders) async throws -> Int? {
            guard
                case .response(let status, _, _) = try await origin.answer(TransportRequest(url: url, headers: headers))
                    .outcome
            else { return nil }
            return status
        }
        origin.begin(step: 1)
        #expect(try await status([:]) == 200)
        // Step 2 is answered by the cache: the origin never sends its ETag, yet step 3 revalidates against it.
        origin.begin(step: 3)
        #expect(try await status(["If-None-Match": "\"b\""]) == 304)
        #expect(try await status(["If-None-Match": "\"a\""]) == 999)
        #expect(try await status([:]) == 999)
        // A request naming its step is answered as that step's.
        #expect(try await status([ConformanceRunner.stepHeader: "1"]) == 200)
        #expect(origin.received.map(\.step) == [1, 3, 3, 3, 1])
    }

    /// Cases where some step must be answered by, or revalidated from, a stored response (a step sending its own
    /// validators is left out: without a cache, forwarding them is the right answer).
    static let needingAStoredResponse = ConformanceCase.all.filter { testCase in
        testCase.steps.contains { step in
            !step.isSetup && !step.setupChecks.contains("type")
                && [.cached, .etagValidated, .lmValidated].contains(step.outcome)
                && !step.requestHeaders.contains {
                    ["if-none-match", "if-modified-since"].contains($0.name.lowercased())
                }
        }
    }

    @Test("a cache that keeps nothing fails every case that needs a stored response, and passes plain not-cached ones")
    func forgetfulCache() async throws {
        #expect(Self.needingAStoredResponse.count > 100)
        for testCase in Self.needingAStoredResponse {
            let failures = try await ConformanceRunner.run(testCase, cache: ForgetfulCache(), clock: TestClock())
            #expect(!failures.isEmpty, "\(testCase.id) passed without a cache")
        }
        for id in ["freshness-max-age-0", "cc-resp-no-store", "vary-no-match", "invalidate-POST"] {
            let testCase = try #require(ConformanceCase.all.first { $0.id == id })
            let failures = try await ConformanceRunner.run(testCase, cache: ForgetfulCache(), clock: TestClock())
            #expect(failures.isEmpty, "\(id): \(failures)")
        }
    }
}
