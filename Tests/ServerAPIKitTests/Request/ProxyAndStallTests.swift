import Foundation
import ServerAPIKit
import Testing

@Suite("Proxy and StallTimeout values")
struct ProxyAndStallTests {
    @Test("a proxy URL keeps scheme, host and port; credentials in it move out of it")
    func proxyURL() throws {
        let proxy = try Proxy("http://build%40ci:p%3Ass@proxy.internal:3128/ignored?x=1")
        #expect(proxy.url?.absoluteString == "http://proxy.internal:3128")
        #expect(proxy.credentials == Proxy.Credentials(user: "build@ci", password: "p:ss"))
        #expect(try Proxy("proxy.internal").url?.absoluteString == "http://proxy.internal:80")
        #expect(try Proxy("https://proxy.internal").url?.absoluteString == "https://proxy.internal:443")
        // Credentials given as an argument win over the URL's.
        let given = try Proxy("http://a:b@p:1", credentials: .init(user: "c", password: "d"))
        #expect(given.credentials?.user == "c")
    }

    @Test("a proxy that is not http(s) or SOCKS is refused, without echoing its password")
    func invalidProxy() {
        let texts = [
            "socks6://user:topsecret@127.0.0.1:1080", "ftp://user:topsecret@127.0.0.1", "http://", "socks5://",
        ]
        for text in texts {
            let error = #expect(throws: ServerAPIError.self) { try Proxy(text) }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.message.contains("topsecret") == false)
        }
    }

    @Test("descriptions and dumps never show the proxy password")
    func redaction() throws {
        let proxy = try Proxy("http://127.0.0.1:3128", credentials: .init(user: "alice", password: "hunter22"))
        var dumped = ""
        dump(proxy, to: &dumped)
        for text in [proxy.description, String(describing: proxy), String(reflecting: proxy), dumped] {
            #expect(!text.contains("hunter22"), "\(text)")
        }
        #expect(proxy.description == "http://127.0.0.1:3128 (with credentials)")
    }

    @Test("bypass follows no_proxy: exact hosts, domains with or without a dot, and *")
    func bypass() throws {
        let proxy = try Proxy("http://p:1", bypass: ["localhost", ".internal", "example.com", "10.0.0.1"])
        #expect(proxy.bypasses("localhost"))
        #expect(proxy.bypasses("LOCALHOST"))
        #expect(proxy.bypasses("api.internal"))
        #expect(proxy.bypasses("internal"))
        #expect(proxy.bypasses("www.example.com"))
        #expect(proxy.bypasses("example.com"))
        #expect(proxy.bypasses("10.0.0.1"))
        #expect(!proxy.bypasses("notexample.com"))
        #expect(!proxy.bypasses("127.0.0.1"))
        #expect(!proxy.bypasses("10.0.0.11"))
        #expect(try Proxy("http://p:1", bypass: ["*"]).bypasses("anything.at.all"))
        #expect(!Proxy.environment.bypasses("localhost"))
        #expect(Proxy.environment.usesEnvironment && Proxy.environment.url == nil)
    }

    @Test("stallTimeout(below:for:) reaches the transport request")
    func stallModifier() throws {
        let api = ServerAPI(host: "https://example.com", path: "/a").stallTimeout(below: 512, for: .seconds(10))
        #expect(api.stallTimeout == StallTimeout(bytesPerSecond: 512, duration: .seconds(10)))
        #expect(try api.transportRequest().stallTimeout == api.stallTimeout)
        #expect(try ServerAPI(host: "https://example.com").transportRequest().stallTimeout == nil)
    }

    @Test("a stall limit that is not positive is an invalid request")
    func invalidStall() {
        for api in [
            ServerAPI(host: "https://example.com").stallTimeout(below: 0, for: .seconds(1)),
            ServerAPI(host: "https://example.com").stallTimeout(below: 10, for: .zero),
        ] {
            let error = #expect(throws: ServerAPIError.self) { try api.transportRequest() }
            #expect(error?.kind == .invalidRequest)
        }
    }

    @Test("a stall error is a timeout that says it stalled, and tells itself apart from other timeouts")
    func stallError() {
        let limit = StallTimeout(bytesPerSecond: 1000, duration: .milliseconds(2500))
        let error = limit.error()
        #expect(error.kind == .timedOut && error.isTimeout)
        #expect(error.isStalled)
        #expect(error.stallTimeout == limit)
        #expect(error.message == "the transfer stalled: it moved below 1000 B/s for 2.5 s")
        #expect(!ServerAPIError(.timedOut, "the request timed out").isStalled)
    }
}
