import Foundation
@_spi(Backend) import ServerAPIKit
import ServerAPITesting

/// The origin of a conformance case: answers each call of the case with the step's scripted response,
/// dated on the test clock, and records every request that reached it.
///
/// Each response carries `Origin-Count` (how many requests the origin has answered, this one included),
/// `Origin-Step` (the step whose call was in progress) and `Origin-Now` (the origin's clock, in seconds
/// since 1970), so that a delivered response tells where it came from. A request's step is the one its
/// `Conformance-Step` header names, as a cache that revalidates in the background sends it on.
final class ConformanceOrigin: Sendable {
    /// A request that reached the origin.
    struct Received: Sendable {
        var step: Int
        var method: String
        var headers: HTTPHeaders
        /// The checked headers the origin sent back, values of one name joined with ", ".
        var sentHeaders: [(name: String, value: String)]
    }

    private struct State {
        var step = 0
        var received: [Received] = []
        /// The headers sent for each step, as sent (dates formatted), for the 304 decision of the next step.
        var sentByStep: [Int: HTTPHeaders] = [:]
    }

    let testCase: ConformanceCase
    let clock: TestClock
    let baseURL: String
    private let state = Locked(State())

    init(_ testCase: ConformanceCase, clock: TestClock, baseURL: String) {
        self.testCase = testCase
        self.clock = clock
        self.baseURL = baseURL
    }

    /// Makes `step` (numbered from 1) the one whose scripted response the origin gives.
    func begin(step: Int) { state.withLock { $0.step = step } }

    var received: [Received] { state.withLock { $0.received } }

    func answer(_ request: TransportRequest) async throws -> MockStub {
        // A request names its step (a revalidation the cache makes in the background copies the call's headers),
        // else it belongs to the step in progress.
        let current = state.withLock { $0.step }
        let stepNumber =
            request.headers[ConformanceRunner.stepHeader].flatMap(Int.init).flatMap {
                testCase.steps.indices.contains($0 - 1) ? $0 : nil
            } ?? current
        let step = testCase.steps[stepNumber - 1]
        if step.originDelay > 0 { clock.advance(by: .seconds(step.originDelay)) }
        let now = clock.date
        let count = state.withLock { $0.received.count } + 1

        var status = step.status ?? 200
        if step.outcome == .etagValidated || step.outcome == .lmValidated {
            // The validators of the previous step's response: as sent, or as scripted when the cache answered
            // that step (a scripted date offset was never turned into a date, so it matches nothing).
            let previous =
                state.withLock { $0.sentByStep[stepNumber - 1] } ?? Self.scripted(testCase.steps[stepNumber - 2])
            let lastModified = previous["Last-Modified"]
            let etag = previous["ETag"]
            if let lastModified, request.headers["If-Modified-Since"] == lastModified {
                status = 304
            } else if let etag, request.headers["If-None-Match"] == etag {
                status = 304
            } else {
                // The origin expected a conditional request and did not get one.
                status = 999
            }
        }

        var headers: HTTPHeaders = [:]
        headers.add(name: "Origin-Count", value: String(count))
        headers.add(name: "Origin-Step", value: String(stepNumber))
        headers.add(name: "Origin-Now", value: String(Int(now.timeIntervalSince1970)))
        var checked: [(name: String, value: String)] = []
        for (field, isChecked) in step.responseHeaders {
            var value = Self.text(field, now: now, rfc850: step.rfc850Dates)
            let lowered = field.name.lowercased()
            if step.relativeLocations, lowered == "location" || lowered == "content-location" {
                value = value.isEmpty ? baseURL : "\(baseURL)/\(value)"
            }
            headers.add(name: field.name, value: value)
            guard isChecked else { continue }
            if let index = checked.firstIndex(where: { $0.name.lowercased() == lowered }) {
                checked[index].value += ", \(value)"
            } else {
                checked.append((field.name, value))
            }
        }
        if !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: "text/plain") }

        let sent = headers
        state.withLock { state in
            state.received.append(
                Received(
                    step: stepNumber, method: request.method.rawValue, headers: request.headers, sentHeaders: checked))
            state.sentByStep[stepNumber] = sent
        }
        if step.disconnect {
            return .failure(ServerAPIError(.network, "the origin closed the connection (conformance script)"))
        }
        let hasBody = status != 204 && status != 304 && request.method != .head
        let body = hasBody ? (step.responseBody ?? testCase.id) : ""
        return MockStub(.response(status: status, headers: headers, body: Data(body.utf8)))
    }

    /// The scripted headers of `step` that are plain text.
    static func scripted(_ step: ConformanceStep) -> HTTPHeaders {
        var headers: HTTPHeaders = [:]
        for (field, _) in step.responseHeaders {
            if case .text(let text) = field.value { headers.add(name: field.name, value: text) }
        }
        return headers
    }

    /// A scripted value as sent: a date offset becomes an HTTP date from `now`.
    static func text(_ field: ConformanceField, now: Date, rfc850: Set<String> = []) -> String {
        switch field.value {
        case .text(let text): text
        case .date(let offset):
            HTTPDateText.format(
                now.addingTimeInterval(TimeInterval(offset)), rfc850: rfc850.contains(field.name.lowercased()))
        }
    }
}

/// HTTP dates as an origin writes them (RFC 9110 §5.6.7): IMF-fixdate, or the obsolete RFC 850 form.
enum HTTPDateText {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longWeekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ date: Date, rfc850: Bool = false) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
        let weekday = (parts.weekday ?? 1) - 1
        let time = "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
        let month = months[(parts.month ?? 1) - 1]
        let year = parts.year ?? 1970
        if rfc850 {
            return "\(longWeekdays[weekday]), \(two(parts.day))-\(month)-\(two(year % 100)) \(time) GMT"
        }
        return "\(weekdays[weekday]), \(two(parts.day)) \(month) \(year) \(time) GMT"
    }
}
