import Foundation
import ServerAPIKit
import Testing

@Suite("Proxy: SOCKS URLs")
struct SocksProxyTests {
    @Test("socks5h, socks5, socks4a and socks4 URLs are accepted, on port 1080 unless they name one")
    func schemesAndDefaultPort() throws {
        for scheme in ["socks5h", "socks5", "socks4a", "socks4"] {
            let proxy = try Proxy("\(scheme)://proxy.internal")
            #expect(proxy.url?.absoluteString == "\(scheme)://proxy.internal:1080")
            #expect(proxy.isSOCKS)
            let upper = try Proxy("\(scheme.uppercased())://10.0.0.1:9050")
            #expect(upper.url?.absoluteString == "\(scheme)://10.0.0.1:9050")
        }
        #expect(try Proxy("http://proxy.internal").isSOCKS == false)
        #expect(try Proxy("https://proxy.internal").isSOCKS == false)
        #expect(Proxy.environment.isSOCKS == false)
    }

    @Test("SOCKS5 credentials come from the URL or from credentials:, as for an HTTP proxy")
    func credentials() throws {
        let inURL = try Proxy("socks5h://build%40ci:p%3Ass@127.0.0.1:1080/ignored")
        #expect(inURL.url?.absoluteString == "socks5h://127.0.0.1:1080")
        #expect(inURL.credentials == Proxy.Credentials(user: "build@ci", password: "p:ss"))
        let given = try Proxy("socks5://a:b@127.0.0.1", credentials: .init(user: "c", password: "d"))
        #expect(given.credentials == Proxy.Credentials(user: "c", password: "d"))
    }

    @Test("a SOCKS4 proxy takes a user name; a password is refused, not dropped, and not echoed")
    func socks4Password() throws {
        for scheme in ["socks4", "socks4a"] {
            let userOnly = try Proxy("\(scheme)://alice@127.0.0.1")
            #expect(userOnly.credentials == Proxy.Credentials(user: "alice", password: ""))
            #expect(
                try Proxy("\(scheme)://127.0.0.1", credentials: .init(user: "alice", password: "")).credentials?.user
                    == "alice")
            let attempts: [(String, Proxy.Credentials?)] = [
                ("\(scheme)://alice:hunter22@127.0.0.1:1080", nil),
                ("\(scheme)://127.0.0.1:1080", .init(user: "alice", password: "hunter22")),
            ]
            for (url, credentials) in attempts {
                let error = #expect(throws: ServerAPIError.self) { try Proxy(url, credentials: credentials) }
                #expect(error?.kind == .invalidRequest)
                #expect(error?.message.contains("\(scheme)://127.0.0.1:1080") == true)
                #expect(error?.message.contains("SOCKS4") == true)
                #expect(error?.message.contains("hunter22") == false)
                #expect(error.map { String(reflecting: $0) }?.contains("hunter22") == false)
            }
        }
    }

    @Test("a SOCKS5 user name or password over 255 bytes is refused (RFC 1929)")
    func socks5Lengths() throws {
        let long = String(repeating: "x", count: 256)
        _ = try Proxy("socks5h://127.0.0.1", credentials: .init(user: String(long.dropLast()), password: "pw"))
        for credentials in [Proxy.Credentials(user: long, password: "pw"), .init(user: "u", password: long)] {
            let error = #expect(throws: ServerAPIError.self) {
                try Proxy("socks5h://127.0.0.1", credentials: credentials)
            }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.message.contains(long) == false)
        }
    }

    @Test("descriptions and dumps of a SOCKS proxy never show its password")
    func redaction() throws {
        let proxy = try Proxy("socks5h://alice:hunter22@127.0.0.1:1080")
        var dumped = ""
        dump(proxy, to: &dumped)
        for text in [proxy.description, String(describing: proxy), String(reflecting: proxy), dumped] {
            #expect(!text.contains("hunter22"), "\(text)")
        }
        #expect(proxy.description == "socks5h://127.0.0.1:1080 (with credentials)")
    }
}
