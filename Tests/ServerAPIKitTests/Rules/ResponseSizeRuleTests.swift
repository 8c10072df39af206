import Foundation
import ServerAPIKit
import Testing

@Suite("Response size rule")
struct ResponseSizeRuleTests {
    @Test(
        "Content-Length is read strictly: digits with optional whitespace around them, nothing else",
        arguments: [
            ("123", 123), (" 42\t", 42), ("0", 0), ("007", 7), ("9223372036854775807", Int64.max),
            ("5, 5", 5), ("5,5,5", 5),
            ("", nil), (" ", nil), ("-1", nil), ("+5", nil), ("1.0", nil), ("12a", nil), ("0x10", nil),
            ("1 2", nil), ("9223372036854775808", nil), ("99999999999999999999", nil), ("5, 6", nil), ("5,", nil),
        ] as [(String, Int64?)])
    func strictContentLength(value: String, expected: Int64?) {
        #expect(ResponseSizeRule.contentLength(of: ["Content-Length": value]) == expected)
    }

    @Test("repeated Content-Length fields count only when they agree; no field is no length")
    func repeatedContentLength() {
        #expect(
            ResponseSizeRule.contentLength(of: HTTPHeaders([("Content-Length", "10"), ("content-length", "10")])) == 10)
        #expect(
            ResponseSizeRule.contentLength(of: HTTPHeaders([("Content-Length", "10"), ("Content-Length", "11")])) == nil
        )
        #expect(ResponseSizeRule.contentLength(of: ["Content-Type": "text/plain"]) == nil)
    }

    @Test(
        "the decoded length is the Content-Length only without a content coding or transfer coding",
        arguments: [
            ([("Content-Length", "100")], 100),
            ([("Content-Length", "100"), ("Content-Encoding", "identity")], 100),
            ([("Content-Length", "100"), ("content-encoding", " IDENTITY ")], 100),
            ([("Content-Length", "100"), ("Content-Encoding", "")], 100),
            ([("Content-Length", "100"), ("Content-Encoding", "gzip")], nil),
            ([("Content-Length", "100"), ("Content-Encoding", "br")], nil),
            ([("Content-Length", "100"), ("Content-Encoding", "identity, gzip")], nil),
            ([("Content-Length", "100"), ("Transfer-Encoding", "chunked")], nil),
            ([("Content-Encoding", "identity")], nil),
            ([("Content-Length", "ten")], nil),
        ] as [([(String, String)], Int64?)])
    func decodedLength(fields: [(String, String)], expected: Int64?) {
        #expect(ResponseSizeRule.decodedLength(of: HTTPHeaders(fields)) == expected)
    }

    @Test("an announced body over the limit fails with its size and the limit")
    func announcedOverLimit() throws {
        let error = try #require(ResponseSizeRule.check(announced: 2_000, status: 200, method: .get, limit: 1_000))
        #expect(error.kind == .responseTooLarge)
        #expect(error.status == 200)
        #expect(error.message == "the response body is 2000 bytes, more than the limit of 1000 bytes")
    }

    @Test(
        "an announced length within the limit, unknown, unlimited, or of a response without a body passes",
        arguments: [
            (1_000, 200, HTTPMethod.get, 1_000), (nil, 200, .get, 1_000), (5_000, 200, .get, nil),
            (5_000, 200, .head, 1_000), (5_000, 204, .get, 1_000), (5_000, 304, .get, 1_000),
            (5_000, 100, .post, 1_000),
        ] as [(Int64?, Int, HTTPMethod, Int64?)])
    func announcedPasses(announced: Int64?, status: Int, method: HTTPMethod, limit: Int64?) {
        #expect(ResponseSizeRule.check(announced: announced, status: status, method: method, limit: limit) == nil)
    }

    @Test("received bytes fail once they exceed the limit, not when they reach it")
    func received() throws {
        #expect(ResponseSizeRule.check(received: 1_000, status: 200, limit: 1_000) == nil)
        #expect(ResponseSizeRule.check(received: .max, status: 200, limit: nil) == nil)
        let error = try #require(ResponseSizeRule.check(received: 1_001, status: 200, limit: 1_000))
        #expect(error.kind == .responseTooLarge)
        #expect(error.message == "the response body is more than the limit of 1000 bytes")
        #expect(ResponseSizeRule.check(received: 1_001, status: 0, limit: 1_000)?.status == nil)
    }

    @Test("responses to HEAD, and 1xx, 204 and 304 responses, carry no body")
    func carriesBody() {
        #expect(ResponseSizeRule.carriesBody(status: 200, method: .get))
        #expect(ResponseSizeRule.carriesBody(status: 404, method: .post))
        #expect(!ResponseSizeRule.carriesBody(status: 200, method: .head))
        #expect(!ResponseSizeRule.carriesBody(status: 204, method: .get))
        #expect(!ResponseSizeRule.carriesBody(status: 304, method: .get))
        #expect(!ResponseSizeRule.carriesBody(status: 101, method: .get))
    }
}
