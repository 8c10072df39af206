import Foundation
import ServerAPIKit
import Testing

@Suite("Exchange state machine")
struct ExchangeStateMachineTests {
    typealias Machine = ExchangeStateMachine

    static func request(
        _ url: String = "http://api.test/start", method: HTTPMethod = .get, maxResponseSize: Int64? = nil,
        redirects: RedirectPolicy = .follow(max: 5)
    ) -> TransportRequest {
        TransportRequest(url: URL(string: url)!, method: method, maxResponseSize: maxResponseSize, redirects: redirects)
    }

    // Small views of the actions, so that each check is one `#expect`.

    static func name(_ action: Machine.HeadAction) -> String {
        switch action {
        case .interim: "interim"
        case .receiveBody: "receiveBody"
        case .decideDownload: "decideDownload"
        case .dropBody: "dropBody"
        case .fail(let error): "fail \(error.kind)"
        case .ignore: "ignore"
        }
    }

    static func name(_ action: Machine.DownloadAction) -> String {
        switch action {
        case .writeToFile: "writeToFile"
        case .keepInMemory: "keepInMemory"
        case .alreadyComplete: "alreadyComplete"
        case .restart: "restart"
        case .fail(let error): "fail \(error.kind)"
        case .ignore: "ignore"
        }
    }

    static func name(_ action: Machine.BodyAction) -> String {
        switch action {
        case .keep: "keep"
        case .write: "write"
        case .drop: "drop"
        case .fail(let error): "fail \(error.kind)"
        }
    }

    static func name(_ action: Machine.FinishAction) -> String {
        switch action {
        case .deliver(let status): "deliver \(status)"
        case .follow(let next): "follow \(next.url.absoluteString)"
        case .restart: "restart"
        case .fail(let error): "fail \(error.kind)"
        case .ignore: "ignore"
        }
    }

    static func failure(_ action: Machine.HeadAction) -> ServerAPIError? {
        if case .fail(let error) = action { error } else { nil }
    }

    static func failure(_ action: Machine.FinishAction) -> ServerAPIError? {
        if case .fail(let error) = action { error } else { nil }
    }

    static func redirectHead(to location: String) -> HTTPHeaders { ["Location": location, "Content-Length": "5"] }

    // MARK: Heads

    @Test("a 1xx head is ignored and the final head after it is the caller's", arguments: [100, 102, 103])
    func interimThenFinal(interim: Int) {
        var machine = Machine(download: false)
        #expect(Self.name(machine.headReceived(status: interim, headers: [:], request: Self.request())) == "interim")
        #expect(machine.phase == .waitingForHead)
        #expect(machine.awaitsHead)
        let action = machine.headReceived(status: 200, headers: ["Content-Length": "3"], request: Self.request())
        #expect(Self.name(action) == "receiveBody")
        #expect(machine.phase == .receivingBody)
        #expect(machine.status == 200)
        #expect(machine.expectedLength == 3)
        #expect(Self.name(machine.bodyReceived(count: 3)) == "keep")
        #expect(machine.receivedBytes == 3)
        #expect(Self.name(machine.finished()) == "deliver 200")
        #expect(machine.phase == .finished)
    }

    @Test("a head without a valid status fails the exchange", arguments: [0, 42, 1000])
    func invalidStatus(status: Int) {
        var machine = Machine(download: false)
        let action = machine.headReceived(status: status, headers: [:], request: Self.request())
        #expect(Self.name(action) == "fail network")
        #expect(machine.phase == .failed)
    }

    @Test("the announced length is the decoded one: unknown with a content coding")
    func expectedLengthIsDecoded() {
        var machine = Machine(download: false)
        let headers: HTTPHeaders = ["Content-Length": "10", "Content-Encoding": "gzip"]
        _ = machine.headReceived(status: 200, headers: headers, request: Self.request())
        #expect(machine.expectedLength == nil)
    }

    // MARK: Redirects

    @Test("redirects are followed up to the limit; one more fails with tooManyRedirects")
    func redirectChain() throws {
        var machine = Machine(download: false)
        var request = Self.request(redirects: .follow(max: 3))
        for hop in 1...3 {
            let action = machine.headReceived(
                status: 302, headers: Self.redirectHead(to: "/hop\(hop)"), request: request)
            #expect(Self.name(action) == "dropBody")
            #expect(machine.phase == .followingRedirect)
            // The redirect's own body is not the caller's: dropped, not counted.
            #expect(Self.name(machine.bodyReceived(count: 5)) == "drop")
            #expect(machine.receivedBytes == 0)
            guard case .follow(let next) = machine.finished() else {
                Issue.record("hop \(hop) was not followed")
                return
            }
            #expect(next.url.absoluteString == "http://api.test/hop\(hop)")
            #expect(machine.redirects == hop)
            #expect(machine.phase == .waitingForHead)
            request = next
        }
        let error = try #require(
            Self.failure(machine.headReceived(status: 302, headers: Self.redirectHead(to: "/hop4"), request: request)))
        #expect(error.kind == .tooManyRedirects)
        #expect(error.status == 302)
        #expect(machine.phase == .failed)
        // The library then reports the end of the aborted transfer: the machine's failure wins over its error.
        let end = try #require(Self.failure(machine.finished(failure: ServerAPIError(.network, "write error"))))
        #expect(end.kind == .tooManyRedirects)
        #expect(machine.phase == .finished)
    }

    @Test("the dropped body names the redirect's target as the request to follow")
    func dropBodyNamesTarget() {
        var machine = Machine(download: false)
        let action = machine.headReceived(
            status: 303, headers: Self.redirectHead(to: "http://other.test/x"), request: Self.request(method: .post))
        guard case .dropBody(let next) = action else {
            Issue.record("expected dropBody, got \(Self.name(action))")
            return
        }
        #expect(next.url.absoluteString == "http://other.test/x")
        #expect(next.method == .get)
    }

    @Test(
        "a redirect is the caller's response when redirects are off or it has no Location",
        arguments: [
            (RedirectPolicy.none, ["Location": "/next"] as HTTPHeaders),
            (RedirectPolicy.follow(max: 5), HTTPHeaders()),
            (RedirectPolicy.follow(max: 5), ["Location": " "] as HTTPHeaders),
        ])
    func redirectDelivered(policy: RedirectPolicy, headers: HTTPHeaders) {
        var machine = Machine(download: false)
        let action = machine.headReceived(status: 301, headers: headers, request: Self.request(redirects: policy))
        #expect(Self.name(action) == "receiveBody")
        #expect(Self.name(machine.bodyReceived(count: 4)) == "keep")
        #expect(Self.name(machine.finished()) == "deliver 301")
        #expect(machine.redirects == 0)
    }

    @Test("a redirect to a URL that is not http(s) fails the exchange")
    func redirectNotHTTP() {
        var machine = Machine(download: false)
        let action = machine.headReceived(
            status: 302, headers: Self.redirectHead(to: "ftp://files.test/x"), request: Self.request())
        #expect(Self.name(action) == "fail network")
        #expect(Self.name(machine.finished()) == "fail network")
    }

    @Test("a library failure while a redirect's body is dropped fails the call instead of following")
    func libraryFailureDuringRedirect() {
        var machine = Machine(download: false)
        _ = machine.headReceived(status: 307, headers: Self.redirectHead(to: "/next"), request: Self.request())
        let action = machine.finished(failure: ServerAPIError(.timedOut, "too slow"))
        #expect(Self.name(action) == "fail timed out")
        #expect(machine.redirects == 0)
    }

    // MARK: A library that asks before following (FoundationNetworking)

    @Test("a library that asks before following gets the rule's decision, and counts a followed redirect")
    func askedRedirectFollowed() {
        var machine = Machine(download: false, redirects: .askedByLibrary)
        let decision = machine.redirectReceived(status: 302, location: "/next", request: Self.request())
        guard case .follow(let next) = decision else {
            Issue.record("expected to follow")
            return
        }
        #expect(machine.redirects == 0)
        machine.redirectFollowed()
        #expect(machine.redirects == 1)
        #expect(machine.phase == .waitingForHead)
        // The next head is the target's: delivered even when it is a redirect the library did not ask about.
        let action = machine.headReceived(status: 200, headers: [:], request: next)
        #expect(Self.name(action) == "receiveBody")
        #expect(Self.name(machine.finished()) == "deliver 200")
    }

    @Test("a redirect the backend does not follow is delivered as the 3xx when its head arrives")
    func askedRedirectNotFollowed() {
        var machine = Machine(download: false, redirects: .askedByLibrary)
        let request = Self.request(method: .put)
        guard case .follow = machine.redirectReceived(status: 307, location: "/next", request: request) else {
            Issue.record("expected to follow")
            return
        }
        // The backend cannot send the body again: it declines, and the library reports the 307 itself.
        let action = machine.headReceived(status: 307, headers: Self.redirectHead(to: "/next"), request: request)
        #expect(Self.name(action) == "receiveBody")
        #expect(Self.name(machine.bodyReceived(count: 5)) == "keep")
        #expect(Self.name(machine.finished()) == "deliver 307")
        #expect(machine.redirects == 0)
    }

    @Test("a redirect that breaks the rules fails the exchange; the 3xx the library then reports is ignored")
    func askedRedirectFails() throws {
        var machine = Machine(download: false, redirects: .askedByLibrary)
        let request = Self.request(redirects: .follow(max: 0))
        guard case .fail(let error) = machine.redirectReceived(status: 302, location: "/x", request: request) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.kind == .tooManyRedirects)
        #expect(Self.name(machine.headReceived(status: 302, headers: [:], request: request)) == "ignore")
        #expect(Self.name(machine.bodyReceived(count: 5)) == "drop")
        #expect(try #require(Self.failure(machine.finished())).kind == .tooManyRedirects)
    }

    @Test("a redirect reported to a machine that decides in heads fails instead of being followed twice")
    func redirectReportedInWrongMode() {
        var machine = Machine(download: false)
        let decision = machine.redirectReceived(status: 302, location: "/x", request: Self.request())
        guard case .fail(let error) = decision else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.kind == .network)
        #expect(machine.phase == .failed)
    }

    // MARK: Response size

    @Test("an announced body over maxResponseSize fails at the head, with its size")
    func tooLargeFromHead() throws {
        var machine = Machine(download: false)
        let request = Self.request(maxResponseSize: 1_000)
        let error = try #require(
            Self.failure(machine.headReceived(status: 200, headers: ["Content-Length": "2000"], request: request)))
        #expect(error.kind == .responseTooLarge)
        #expect(error.message == "the response body is 2000 bytes, more than the limit of 1000 bytes")
        #expect(machine.phase == .failed)
        #expect(try #require(Self.failure(machine.finished())).kind == .responseTooLarge)
    }

    @Test("decoded body bytes over maxResponseSize fail as they arrive")
    func tooLargeFromBytes() throws {
        var machine = Machine(download: false)
        let request = Self.request(maxResponseSize: 10)
        #expect(Self.name(machine.headReceived(status: 200, headers: [:], request: request)) == "receiveBody")
        #expect(Self.name(machine.bodyReceived(count: 6)) == "keep")
        #expect(Self.name(machine.bodyReceived(count: 4)) == "keep")
        #expect(Self.name(machine.bodyReceived(count: 1)) == "fail response too large")
        #expect(machine.receivedBytes == 11)
        #expect(Self.name(machine.bodyReceived(count: 1)) == "drop")
        #expect(try #require(Self.failure(machine.finished())).status == 200)
    }

    @Test(
        "a response without a body is never too large, whatever its Content-Length",
        arguments: [(HTTPMethod.head, 200), (.get, 204), (.get, 304)])
    func noBodyNeverTooLarge(method: HTTPMethod, status: Int) {
        var machine = Machine(download: false)
        let request = Self.request(method: method, maxResponseSize: 10)
        let action = machine.headReceived(status: status, headers: ["Content-Length": "5000000"], request: request)
        #expect(Self.name(action) == "receiveBody")
        #expect(Self.name(machine.finished()) == "deliver \(status)")
    }

    @Test("the limit and the count start again with each redirect's target")
    func limitPerResponse() {
        var machine = Machine(download: false)
        let request = Self.request(maxResponseSize: 10)
        _ = machine.headReceived(status: 302, headers: Self.redirectHead(to: "/next"), request: request)
        #expect(Self.name(machine.bodyReceived(count: 50)) == "drop")
        guard case .follow(let next) = machine.finished() else {
            Issue.record("expected to follow")
            return
        }
        _ = machine.headReceived(status: 200, headers: [:], request: next)
        #expect(Self.name(machine.bodyReceived(count: 10)) == "keep")
    }

    // MARK: Downloads

    @Test(
        "a download's head asks the writer, and its decision says where the body goes",
        arguments: [
            (200, DownloadFileWriter.Disposition.file, "writeToFile", "write", "deliver 200"),
            (206, .file, "writeToFile", "write", "deliver 206"),
            (404, .memory, "keepInMemory", "write", "deliver 404"),
            (416, .alreadyComplete, "alreadyComplete", "drop", "deliver 200"),
        ])
    func downloadDispositions(
        status: Int, disposition: DownloadFileWriter.Disposition, decided: String, body: String, finish: String
    ) {
        var machine = Machine(download: true)
        let head = machine.headReceived(status: status, headers: [:], request: Self.request())
        #expect(Self.name(head) == "decideDownload")
        #expect(machine.phase == .decidingDownload)
        #expect(Self.name(machine.downloadDecided(disposition)) == decided)
        #expect(machine.disposition == disposition)
        #expect(machine.phase == .receivingBody)
        #expect(Self.name(machine.bodyReceived(count: 7)) == body)
        // Counted either way: the metrics' bytes received are this exchange's.
        #expect(machine.receivedBytes == 7)
        #expect(Self.name(machine.finished()) == finish)
    }

    @Test("a download that must restart drops the body, then waits for the new response")
    func downloadRestart() {
        var machine = Machine(download: true)
        _ = machine.headReceived(status: 200, headers: ["Content-Length": "9"], request: Self.request())
        #expect(Self.name(machine.downloadDecided(.restart)) == "restart")
        #expect(machine.phase == .restartingDownload)
        #expect(Self.name(machine.bodyReceived(count: 9)) == "drop")
        #expect(machine.receivedBytes == 0)
        // The backend stopped the transfer, so the library reports a failure: the restart wins.
        #expect(Self.name(machine.finished(failure: ServerAPIError(.network, "write error"))) == "restart")
        #expect(machine.phase == .waitingForHead)
        #expect(machine.disposition == nil)
        #expect(Self.name(machine.headReceived(status: 200, headers: [:], request: Self.request())) == "decideDownload")
        #expect(Self.name(machine.downloadDecided(.file)) == "writeToFile")
        #expect(Self.name(machine.finished()) == "deliver 200")
    }

    @Test("an announced download over the limit fails before the writer is asked")
    func downloadTooLarge() {
        var machine = Machine(download: true)
        let request = Self.request(maxResponseSize: 100)
        let action = machine.headReceived(status: 200, headers: ["Content-Length": "101"], request: request)
        #expect(Self.name(action) == "fail response too large")
        #expect(machine.disposition == nil)
    }

    @Test("a writer that fails ends the exchange with its error")
    func writerFailure() throws {
        var machine = Machine(download: true)
        _ = machine.headReceived(status: 200, headers: [:], request: Self.request())
        machine.failed(ServerAPIError(.fileSystem, "disk full"))
        #expect(machine.phase == .failed)
        // A second failure does not replace the first.
        machine.failed(ServerAPIError(.network, "later"))
        #expect(Self.name(machine.downloadDecided(.file)) == "ignore")
        #expect(try #require(Self.failure(machine.finished())).kind == .fileSystem)
    }

    @Test("a download that ends before its writer decided fails")
    func downloadEndsUndecided() {
        var machine = Machine(download: true)
        _ = machine.headReceived(status: 200, headers: [:], request: Self.request())
        #expect(Self.name(machine.finished()) == "fail network")
    }

    // MARK: Cancellation

    enum Point: String, CaseIterable, CustomTestStringConvertible {
        case waitingForHead, afterInterim, decidingDownload, receivingBody, followingRedirect, restartingDownload,
            failed

        var testDescription: String { rawValue }

        /// A machine brought to this point.
        func machine() -> ExchangeStateMachine {
            let request = ExchangeStateMachineTests.request(maxResponseSize: 10)
            var machine = ExchangeStateMachine(download: self == .decidingDownload || self == .restartingDownload)
            switch self {
            case .waitingForHead:
                break
            case .afterInterim:
                _ = machine.headReceived(status: 100, headers: [:], request: request)
            case .decidingDownload:
                _ = machine.headReceived(status: 200, headers: [:], request: request)
            case .receivingBody:
                _ = machine.headReceived(status: 200, headers: [:], request: request)
                _ = machine.bodyReceived(count: 5)
            case .followingRedirect:
                _ = machine.headReceived(status: 302, headers: ["Location": "/next"], request: request)
            case .restartingDownload:
                _ = machine.headReceived(status: 200, headers: [:], request: request)
                _ = machine.downloadDecided(.restart)
            case .failed:
                _ = machine.headReceived(status: 200, headers: [:], request: request)
                _ = machine.bodyReceived(count: 11)
            }
            return machine
        }
    }

    @Test(
        "cancellation stops the exchange at every point, and every event after it is ignored",
        arguments: Point.allCases)
    func cancellation(point: Point) {
        var machine = point.machine()
        #expect(machine.phase != .finished)
        #expect(machine.cancelled() == .stop)
        #expect(machine.phase == .finished)
        #expect(machine.cancelled() == .ignore)
        #expect(Self.name(machine.headReceived(status: 200, headers: [:], request: Self.request())) == "ignore")
        #expect(Self.name(machine.downloadDecided(.file)) == "ignore")
        #expect(Self.name(machine.bodyReceived(count: 1)) == "drop")
        #expect(Self.name(machine.finished()) == "ignore")
    }

    @Test("cancelling a delivered exchange does nothing")
    func cancelAfterDelivery() {
        var machine = Machine(download: false)
        _ = machine.headReceived(status: 200, headers: [:], request: Self.request())
        #expect(Self.name(machine.finished()) == "deliver 200")
        #expect(machine.cancelled() == .ignore)
    }

    // MARK: Events in the wrong order

    @Test("body bytes before the head fail the exchange")
    func bodyBeforeHead() {
        var machine = Machine(download: false)
        #expect(Self.name(machine.bodyReceived(count: 3)) == "fail network")
        #expect(machine.phase == .failed)
        #expect(Self.name(machine.finished()) == "fail network")
    }

    @Test("body bytes before a download's decision fail the exchange")
    func bodyBeforeDecision() {
        var machine = Machine(download: true)
        _ = machine.headReceived(status: 200, headers: [:], request: Self.request())
        #expect(Self.name(machine.bodyReceived(count: 3)) == "fail network")
    }

    @Test("a second final head during the body fails the exchange", arguments: [200, 302])
    func secondHead(first: Int) {
        var machine = Machine(download: false)
        _ = machine.headReceived(status: first, headers: Self.redirectHead(to: "/next"), request: Self.request())
        #expect(Self.name(machine.headReceived(status: 200, headers: [:], request: Self.request())) == "fail network")
        #expect(machine.phase == .failed)
    }

    @Test("a download decision without a head to decide fails the exchange")
    func decisionWithoutHead() {
        var machine = Machine(download: true)
        #expect(Self.name(machine.downloadDecided(.file)) == "fail network")
    }

    @Test("a head for a call without a download never asks for a decision; a stray decision fails")
    func decisionWithoutDownload() {
        var machine = Machine(download: false)
        #expect(Self.name(machine.headReceived(status: 200, headers: [:], request: Self.request())) == "receiveBody")
        #expect(Self.name(machine.downloadDecided(.file)) == "fail network")
    }

    @Test("an exchange that ends without any head fails with no response")
    func finishWithoutHead() throws {
        var machine = Machine(download: false)
        _ = machine.headReceived(status: 100, headers: [:], request: Self.request())
        let error = try #require(Self.failure(machine.finished()))
        #expect(error.message == "the request completed without a response")
    }

    @Test("a second finish is ignored")
    func secondFinish() {
        var machine = Machine(download: false)
        _ = machine.headReceived(status: 200, headers: [:], request: Self.request())
        #expect(Self.name(machine.finished()) == "deliver 200")
        #expect(Self.name(machine.finished()) == "ignore")
        #expect(Self.name(machine.finished(failure: ServerAPIError(.network, "late"))) == "ignore")
    }

    @Test("the library's failure ends a live exchange with that failure")
    func libraryFailure() {
        var machine = Machine(download: false)
        _ = machine.headReceived(status: 200, headers: [:], request: Self.request())
        _ = machine.bodyReceived(count: 3)
        #expect(Self.name(machine.finished(failure: ServerAPIError(.timedOut, "late"))) == "fail timed out")
        #expect(machine.phase == .finished)
    }
}
