import Testing

@testable import SapiCommand

/// The `.netrc` parser: pure, on odd inputs.
@Suite("sapi: .netrc")
struct NetrcTests {
    @Test("machine entries on one line or several, and the default entry for other hosts")
    func entries() {
        let netrc = Netrc(
            parsing: """
                machine api.test login alice password s3cret
                machine other.test
                    login bob
                    password "two words"
                default login anon password guest
                """)
        #expect(netrc.credentials(for: "api.test")! == ("alice", "s3cret"))
        #expect(netrc.credentials(for: "API.TEST")! == ("alice", "s3cret"))
        #expect(netrc.credentials(for: "other.test")! == ("bob", "two words"))
        #expect(netrc.credentials(for: "unknown.test")! == ("anon", "guest"))
    }

    @Test("comments, account values and macdef blocks are skipped")
    func skipped() {
        let netrc = Netrc(
            parsing: """
                # a comment line: machine fake.test login no password no
                machine api.test login alice account acct password pw # trailing comment
                macdef init
                machine macro.test login m password m
                cd /pub

                machine after.test login carol password c
                """)
        #expect(netrc.credentials(for: "api.test")! == ("alice", "pw"))
        #expect(netrc.credentials(for: "fake.test") == nil)
        #expect(netrc.credentials(for: "macro.test") == nil)
        #expect(netrc.credentials(for: "after.test")! == ("carol", "c"))
    }

    @Test("missing fields: no login gives nothing, no password an empty one; tokens outside entries are ignored")
    func missing() {
        let netrc = Netrc(
            parsing: "login stray password stray\nmachine nologin.test password p\nmachine nopass.test login u\nmachine"
        )
        #expect(netrc.credentials(for: "nologin.test") == nil)
        #expect(netrc.credentials(for: "nopass.test")! == ("u", ""))
        #expect(netrc.credentials(for: "stray.test") == nil)
        #expect(Netrc(parsing: "").entries.isEmpty)
        #expect(
            Netrc(parsing: "machine a.test login \"unterminated").credentials(for: "a.test")! == ("unterminated", ""))
    }

    @Test("quoted tokens keep spaces and escaped quotes; CRLF line ends work")
    func quoting() {
        let netrc = Netrc(parsing: "machine q.test\r\nlogin \"a b\"\r\npassword \"say \\\"hi\\\"\"\r\n")
        #expect(netrc.credentials(for: "q.test")! == ("a b", "say \"hi\""))
    }

    @Test("the first entry for a host wins; $NETRC before ~/.netrc")
    func precedence() {
        let netrc = Netrc(parsing: "machine h.test login first password 1\nmachine h.test login second password 2")
        #expect(netrc.credentials(for: "h.test")! == ("first", "1"))
        #expect(Netrc.path(environment: ["NETRC": "/n", "HOME": "/h"]) == "/n")
        #expect(Netrc.path(environment: ["HOME": "/h"]) == "/h/.netrc")
        #expect(Netrc.path(environment: [:]) == nil)
    }
}
