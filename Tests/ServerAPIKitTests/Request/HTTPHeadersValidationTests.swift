import Testing

@testable import ServerAPIKit

@Suite("HTTPHeaders validation")
struct HTTPHeadersValidationTests {
    @Test("ASCII values, spaces, tabs and empty values are valid")
    func valid() throws {
        let headers: HTTPHeaders = [
            "X-A": "plain value", "X-B": "tab\there", "X-C": "", "X-D": "!#$%&'*+-.^_`|~\"(),/:;<=>?@[\\]{}",
        ]
        try headers.validate()
    }

    @Test(
        "a value that is not ASCII, or has a control character, is rejected and named",
        arguments: [
            "café", "naïve", "✓", "line\nbreak", "carriage\rreturn", "nul\u{0}", "bell\u{7}", "delete\u{7F}",
        ])
    func invalidValue(value: String) {
        let error = #expect(throws: ServerAPIError.self) { try HTTPHeaders([("X-Bad", value)]).validate() }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("X-Bad") == true)
    }

    @Test("a Cookie value may hold UTF-8: cookies go back as the bytes their server sent")
    func cookieUTF8() throws {
        try HTTPHeaders([("Cookie", "春节回=家路·春运; a=b")]).validate()
        try HTTPHeaders([("cookie", "a=Zoë")]).validate()
        let error = #expect(throws: ServerAPIError.self) { try HTTPHeaders([("Cookie", "a=b\r\nX: y")]).validate() }
        #expect(error?.kind == .invalidRequest)
    }

    @Test("a name that is not a token is rejected", arguments: ["", "Bad Name", "Bad:Name", "Ünicode"])
    func invalidName(name: String) {
        let error = #expect(throws: ServerAPIError.self) { try HTTPHeaders([(name, "x")]).validate() }
        #expect(error?.kind == .invalidRequest)
    }

    @Test("a call with a non-ASCII header value fails to resolve")
    func resolve() {
        let api = ServerAPI(host: "https://api.test", path: "/x").header("X-Name", "Zoë")
        let error = #expect(throws: ServerAPIError.self) { try api.transportRequest() }
        #expect(error?.kind == .invalidRequest)
    }
}
