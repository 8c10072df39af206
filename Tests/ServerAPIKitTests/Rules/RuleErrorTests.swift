import Foundation
import ServerAPIKit
import Testing

@Suite("Errors every transport words the same way")
struct RuleErrorTests {
    @Test(
        "a timeout says how long the call was allowed",
        arguments: [
            (Duration.seconds(5), "the request timed out after 5 s"),
            (.milliseconds(500), "the request timed out after 0.5 s"),
            (.milliseconds(1250), "the request timed out after 1.25 s"),
        ])
    func timedOut(timeout: Duration, message: String) {
        let error = ServerAPIError.timedOut(after: timeout)
        #expect(error.kind == .timedOut)
        #expect(error.message == message)
        #expect(!error.isStalled)
    }

    @Test("too many redirects names the limit, in the singular for one")
    func tooManyRedirects() {
        #expect(
            ServerAPIError.tooManyRedirects(max: 1, status: 302).message == "the server redirected more than 1 time")
        #expect(
            ServerAPIError.tooManyRedirects(max: 10, status: 302).message == "the server redirected more than 10 times")
    }

    @Test("a URL that is not http(s) is an invalid request that names it")
    func notHTTPURL() {
        let error = ServerAPIError.notHTTPURL(URL(string: "ftp://files.test/x")!)
        #expect(error.kind == .invalidRequest)
        #expect(error.message == "ftp://files.test/x is not an http(s) URL")
    }

    @Test(
        "a request every transport refuses is refused before sending, with one message",
        arguments: [
            (
                TransportRequest(url: URL(string: "ftp://files.test/x")!), nil,
                "ftp://files.test/x is not an http(s) URL"
            ),
            (TransportRequest(url: URL(string: "http:///x")!), nil, "http:///x is not an http(s) URL"),
            (
                TransportRequest(url: URL(string: "http://api.test/")!, timeout: .zero), nil,
                "the timeout must be positive"
            ),
            (
                TransportRequest(url: URL(string: "http://api.test/")!),
                StallTimeout(bytesPerSecond: 0, duration: .seconds(1)), "the stall timeout must be positive"
            ),
            (
                TransportRequest(url: URL(string: "http://api.test/")!, headers: ["X-Injected": "a\r\nB: c"]), nil,
                "line break"
            ),
        ] as [(TransportRequest, StallTimeout?, String)])
    func validation(request: TransportRequest, stall: StallTimeout?, message: String) {
        let error = #expect(throws: ServerAPIError.self) { try request.validate(stallTimeout: stall) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test("a valid request passes validation")
    func valid() throws {
        let request = TransportRequest(url: URL(string: "HTTPS://api.test/x")!, headers: ["Accept": "*/*"])
        try request.validate(stallTimeout: StallTimeout(bytesPerSecond: 1, duration: .seconds(1)))
    }
}
