import Foundation
import Testing

/// One of RFC 6265's parser cases (abarth/http-state, `tests/data/parser`): the `Set-Cookie` fields a
/// server at `http://home.example.org:8888/cookie-parser?NAME` answers with, and the `Cookie` header a
/// user agent then sends to `http://home.example.org:8888/cookie-parser-result?NAME` (or to where the
/// response's `Location` points).
struct HTTPStateCase: Sendable, CustomTestStringConvertible {
    /// The suite's name for the case, as in its file names.
    var name: String
    /// The `Set-Cookie` field values, in order, without the surrounding whitespace HTTP strips.
    var setCookie: [String]
    /// The `Location` of the response, absolute or relative; `nil` for the default result URL.
    var location: String?
    /// The `Cookie` header expected at the result URL; `nil` when no cookie applies.
    var expected: String?

    var testDescription: String { name }

    /// Creates a case; the argument labels read as a sentence in the table below.
    init(_ name: String, _ setCookie: [String], to location: String? = nil, sends expected: String?) {
        self.name = name
        self.setCookie = setCookie
        self.location = location
        self.expected = expected
    }

    /// The URL the `Set-Cookie` fields come from.
    var origin: URL { URL(string: "http://home.example.org:8888/cookie-parser?\(name)")! }

    /// The URL the `Cookie` header is asked for: the `Location`, resolved against `origin`, or the result URL.
    var target: URL {
        let location = location ?? "http://home.example.org:8888/cookie-parser-result?\(name)"
        return URL(string: location, relativeTo: origin)!.absoluteURL
    }
}

extension HTTPStateCase {
    /// The 218 enabled cases. The suite's four `disabled-` cases are left out as the suite leaves them out:
    /// chromium0020 (a 4 KiB line without "="), chromium0022 and chromium0023 (a NUL and a CR inside a
    /// value, expected to cut it there) and path0029 (a cookie path expected to match a percent-encoded
    /// request path).
    static let all: [HTTPStateCase] = [
        .init("0001", ["foo=bar"], sends: "foo=bar"),
        .init("0002", ["foo=bar; Expires=Fri, 07 Aug 2019 08:04:19 GMT"], sends: "foo=bar"),
        .init(
            "0003",
            ["foo=bar; Expires=Fri, 07 Aug 2007 08:04:19 GMT", "foo2=bar2; Expires=Fri, 07 Aug 2027 08:04:19 GMT"],
            sends: "foo2=bar2"),
        .init("0004", ["foo"], sends: nil),
        .init("0005", ["foo=bar; max-age=10000;"], sends: "foo=bar"),
        .init("0006", ["foo=bar; max-age=0;"], sends: nil),
        .init("0007", ["foo=bar; version=1;"], sends: "foo=bar"),
        .init("0008", ["foo=bar; version=1000;"], sends: "foo=bar"),
        .init("0009", ["foo=bar; customvalue=1000;"], sends: "foo=bar"),
        .init("0010", ["foo=bar; secure;"], sends: nil),
        .init("0011", ["foo=bar; customvalue=\"1000 or more\";"], sends: "foo=bar"),
        .init("0012", ["foo=bar; customvalue=\"no trailing semicolon\""], sends: "foo=bar"),
        .init("0013", ["foo=bar", "foo=qux"], sends: "foo=qux"),
        .init("0014", ["foo1=bar", "foo2=qux"], sends: "foo1=bar; foo2=qux"),
        .init("0015", ["a=b", "z=y"], sends: "a=b; z=y"),
        .init("0016", ["z=y", "a=b"], sends: "z=y; a=b"),
        .init("0017", ["z=y, a=b"], sends: "z=y, a=b"),
        .init("0018", ["z=y; foo=bar, a=b"], sends: "z=y"),
        .init("0019", ["foo=b;max-age=3600, c=d;path=/"], sends: "foo=b"),
        .init("0020", ["a=b", "=", "c=d"], sends: "a=b; c=d"),
        .init("0021", ["a=b", "=x", "c=d"], sends: "a=b; c=d"),
        .init("0022", ["a=b", "x=", "c=d"], sends: "a=b; x=; c=d"),
        .init("0023", ["foo", ""], sends: nil),
        .init("0024", ["foo", "="], sends: nil),
        .init("0025", ["foo", "; bar"], sends: nil),
        .init("0026", ["foo", ""], sends: nil),
        .init("0027", ["foo", "bar"], sends: nil),
        .init("0028", ["foo", ""], sends: nil),
        .init("attribute0001", ["foo=bar; Secure"], sends: nil),
        .init("attribute0002", ["foo=bar; seCURe"], sends: nil),
        .init("attribute0003", ["foo=bar; \"Secure\""], sends: "foo=bar"),
        .init("attribute0004", ["foo=bar; Secure="], sends: nil),
        .init("attribute0005", ["foo=bar; Secure=aaaa"], sends: nil),
        .init("attribute0006", ["foo=bar; Secure qux"], sends: "foo=bar"),
        .init("attribute0007", ["foo=bar; Secure =aaaaa"], sends: nil),
        .init("attribute0008", ["foo=bar; Secure= aaaaa"], sends: nil),
        .init("attribute0009", ["foo=bar; Secure; qux"], sends: nil),
        .init("attribute0010", ["foo=bar; Secure;qux"], sends: nil),
        .init("attribute0011", ["foo=bar; Secure    ; qux"], sends: nil),
        .init("attribute0012", ["foo=bar;                Secure"], sends: nil),
        .init("attribute0013", ["foo=bar;       Secure     ;"], sends: nil),
        .init("attribute0014", ["foo=bar; Path"], sends: "foo=bar"),
        .init("attribute0015", ["foo=bar; Path="], sends: "foo=bar"),
        .init("attribute0016", ["foo=bar; Path=/"], sends: "foo=bar"),
        .init("attribute0017", ["foo=bar; Path=/qux"], sends: nil),
        .init("attribute0018", ["foo=bar; Path    =/qux"], sends: nil),
        .init("attribute0019", ["foo=bar; Path=    /qux"], sends: nil),
        .init("attribute0020", ["foo=bar; Path=/qux      ; taz"], sends: nil),
        .init("attribute0021", ["foo=bar; Path=/qux; Path=/"], sends: "foo=bar"),
        .init("attribute0022", ["foo=bar; Path=/; Path=/qux"], sends: nil),
        .init("attribute0023", ["foo=bar; Path=/qux; Path=/cookie-parser-result"], sends: "foo=bar"),
        .init("attribute0024", ["foo=bar; Path=/cookie-parser-result; Path=/qux"], sends: nil),
        .init("attribute0025", ["foo=bar; qux; Secure"], sends: nil),
        .init("attribute0026", ["foo=bar; qux=\"aaa;bbb\"; Secure"], sends: nil),
        .init("charset0001", ["foo=春节回家路·春运完全手册"], sends: "foo=春节回家路·春运完全手册"),
        .init("charset0002", ["春节回=家路·春运完全手册"], sends: "春节回=家路·春运完全手册"),
        .init("charset0003", ["春节回=家路·春运; 完全手册"], sends: "春节回=家路·春运"),
        .init("charset0004", ["foo=\"春节回家路·春运完全手册\""], sends: "foo=\"春节回家路·春运完全手册\""),
        .init("chromium0001", ["a=b"], sends: "a=b"),
        .init("chromium0002", ["aBc=\"zzz \"   ;"], sends: "aBc=\"zzz \""),
        .init("chromium0003", ["aBc=\"zzz \" ;"], sends: "aBc=\"zzz \""),
        .init("chromium0004", ["aBc=\"zz;pp\" ; ;"], sends: "aBc=\"zz"),
        .init("chromium0005", ["aBc=\"zz ;"], sends: "aBc=\"zz"),
        .init("chromium0006", ["aBc=\"zzz \"   \"ppp\"  ;"], sends: "aBc=\"zzz \"   \"ppp\""),
        .init("chromium0007", ["aBc=\"zzz \"   \"ppp\" ;"], sends: "aBc=\"zzz \"   \"ppp\""),
        .init("chromium0008", ["aBc=A\"B ;"], sends: "aBc=A\"B"),
        .init("chromium0009", ["BLAHHH; path=/;"], sends: nil),
        .init("chromium0010", ["\"BLA\\\"HHH\"; path=/;"], sends: nil),
        .init("chromium0011", ["a=\"B"], sends: "a=\"B"),
        .init("chromium0012", ["=ABC"], sends: nil),
        .init("chromium0013", ["ABC=;  path = /"], sends: "ABC="),
        .init("chromium0014", ["A  = BC  ;foo;;;   bar"], sends: "A=BC"),
        .init("chromium0015", ["A=== BC  ;foo;;;   bar"], sends: "A=== BC"),
        .init(
            "chromium0016",
            ["foo=\"zohNumRKgI0oxyhSsV3Z7D\"  ; expires=Sun, 18-Apr-2027 21:06:29 GMT ; path=/  ;"],
            sends: "foo=\"zohNumRKgI0oxyhSsV3Z7D\""),
        .init(
            "chromium0017",
            ["foo=zohNumRKgI0oxyhSsV3Z7D  ; expires=Sun, 18-Apr-2027 21:06:29 GMT ; path=/  ;"],
            sends: "foo=zohNumRKgI0oxyhSsV3Z7D"),
        .init("chromium0018", [""], sends: nil),
        .init(
            "chromium0019",
            ["a=" + String(repeating: "a", count: 4094)],
            sends: "a=" + String(repeating: "a", count: 4094)),
        .init("chromium0021", [""], sends: nil),
        .init("comma0001", ["foo=bar, baz=qux"], sends: "foo=bar, baz=qux"),
        .init("comma0002", ["foo=\"bar, baz=qux\""], sends: "foo=\"bar, baz=qux\""),
        .init("comma0003", ["foo=bar; b,az=qux"], sends: "foo=bar"),
        .init("comma0004", ["foo=bar; baz=q,ux"], sends: "foo=bar"),
        .init("comma0005", ["foo=bar; Max-Age=50,399"], sends: "foo=bar"),
        .init("comma0006", ["foo=bar; Expires=Fri, 07 Aug 2019 08:04:19 GMT"], sends: "foo=bar"),
        .init("comma0007", ["foo=bar; Expires=Fri 07 Aug 2019 08:04:19 GMT, baz=qux"], sends: "foo=bar"),
        .init("domain0001", ["foo=bar; domain=home.example.org"], sends: "foo=bar"),
        .init(
            "domain0002",
            ["foo=bar; domain=home.example.org"],
            to: "http://sibling.example.org:8888/cookie-parser-result?domain0002",
            sends: nil),
        .init("domain0003", ["foo=bar; domain=.home.example.org"], sends: "foo=bar"),
        .init(
            "domain0004",
            ["foo=bar; domain=home.example.org"],
            to: "http://subdomain.home.example.org:8888/cookie-parser-result?domain0004",
            sends: "foo=bar"),
        .init(
            "domain0005",
            ["foo=bar; domain=.home.example.org"],
            to: "http://subdomain.home.example.org:8888/cookie-parser-result?domain0005",
            sends: "foo=bar"),
        .init(
            "domain0006",
            ["foo=bar; domain=.home.example.org"],
            to: "http://sibling.example.org:8888/cookie-parser-result?domain0006",
            sends: nil),
        .init(
            "domain0007",
            ["foo=bar; domain=sibling.example.org"],
            to: "http://sibling.example.org:8888/cookie-parser-result?domain0007",
            sends: nil),
        .init("domain0008", ["foo=bar; domain=.example.org"], sends: "foo=bar"),
        .init("domain0009", ["foo=bar; domain=example.org"], sends: "foo=bar"),
        .init("domain0010", ["foo=bar; domain=..home.example.org"], sends: nil),
        .init("domain0011", ["foo=bar; domain=home..example.org"], sends: nil),
        .init("domain0012", ["foo=bar; domain=  .home.example.org"], sends: "foo=bar"),
        .init("domain0013", ["foo=bar; domain=  .  home.example.org"], sends: nil),
        .init("domain0014", ["foo=bar; domain=home.example.org."], sends: nil),
        .init("domain0015", ["foo=bar; domain=home.example.org.."], sends: nil),
        .init("domain0016", ["foo=bar; domain=home.example.org ."], sends: nil),
        .init("domain0017", ["foo=bar; domain=.org"], sends: nil),
        .init("domain0018", ["foo=bar; domain=.org."], sends: nil),
        .init(
            "domain0019",
            ["foo=bar; domain=home.example.org", "foo2=bar2; domain=.home.example.org"],
            sends: "foo=bar; foo2=bar2"),
        .init(
            "domain0020",
            ["foo2=bar2; domain=.home.example.org", "foo=bar; domain=home.example.org"],
            sends: "foo2=bar2; foo=bar"),
        .init("domain0021", ["foo=bar; domain=\"home.example.org\""], sends: nil),
        .init(
            "domain0022",
            ["foo=bar; domain=home.example.org", "foo2=bar2; domain=.example.org"],
            sends: "foo=bar; foo2=bar2"),
        .init(
            "domain0023",
            ["foo2=bar2; domain=.example.org", "foo=bar; domain=home.example.org"],
            sends: "foo2=bar2; foo=bar"),
        .init(
            "domain0024",
            ["foo=bar; domain=.example.org; domain=home.example.org"],
            to: "http://sibling.example.org:8888/cookie-parser-result?domain0024",
            sends: nil),
        .init(
            "domain0025",
            ["foo=bar; domain=home.example.org; domain=.example.org"],
            to: "http://sibling.example.org:8888/cookie-parser-result?domain0025",
            sends: "foo=bar"),
        .init("domain0026", ["foo=bar; domain=home.eXaMpLe.org"], sends: "foo=bar"),
        .init("domain0027", ["foo=bar; domain=home.example.org:8888"], sends: nil),
        .init(
            "domain0028",
            ["foo=bar; domain=subdomain.home.example.org"],
            to: "http://subdomain.home.example.org:8888/cookie-parser-result?domain0028",
            sends: nil),
        .init(
            "domain0029",
            ["foo=bar"],
            to: "http://subdomain.home.example.org:8888/cookie-parser-result?domain0029",
            sends: nil),
        .init(
            "domain0031",
            ["foo=bar; domain=home.example.org; domain=.example.org"],
            to: "http://sibling.example.org:8888/cookie-parser-result?domain0031",
            sends: "foo=bar"),
        .init(
            "domain0033",
            ["foo=bar; domain=home.example.org"],
            to: "http://hoMe.eXaMplE.org:8888/cookie-parser-result?domain0033",
            sends: "foo=bar"),
        .init("domain0034", ["foo=bar; domain=home.example.org; domain=home.example.com"], sends: nil),
        .init("domain0035", ["foo=bar; domain=home.example.com; domain=home.example.org"], sends: "foo=bar"),
        .init(
            "domain0036",
            ["foo=bar; domain=home.example.org; domain=home.example.com; domain=home.example.org"],
            sends: "foo=bar"),
        .init(
            "domain0037",
            ["foo=bar; domain=home.example.com; domain=home.example.org; domain=home.example.com"],
            sends: nil),
        .init("domain0038", ["foo=bar; domain=home.example.org; domain=home.example.org"], sends: "foo=bar"),
        .init("domain0039", ["foo=bar; domain=home.example.org; domain=example.org"], sends: "foo=bar"),
        .init("domain0040", ["foo=bar; domain=example.org; domain=home.example.org"], sends: "foo=bar"),
        .init(
            "domain0041",
            ["foo=bar; domain=.sibling.example.org"],
            to: "http://sibling.example.org:8888/cookie-parser-result?domain0041",
            sends: nil),
        .init(
            "domain0042",
            ["foo=bar; domain=.sibling.home.example.org"],
            to: "http://sibling.home.example.org:8888/cookie-parser-result?domain0042",
            sends: nil),
        .init("mozilla0001", ["foo=bar; max-age=-1"], sends: nil),
        .init("mozilla0002", ["foo=bar; max-age=0"], sends: nil),
        .init("mozilla0003", ["foo=bar; expires=Thu, 10 Apr 1980 16:33:12 GMT"], sends: nil),
        .init("mozilla0004", ["foo=bar; max-age=60"], sends: "foo=bar"),
        .init("mozilla0005", ["foo=bar; max-age=-20"], sends: nil),
        .init("mozilla0006", ["foo=bar; max-age=60"], sends: "foo=bar"),
        .init("mozilla0007", ["foo=bar; expires=Thu, 10 Apr 1980 16:33:12 GMT"], sends: nil),
        .init("mozilla0008", ["foo=bar; max-age=60", "foo1=bar; max-age=60"], sends: "foo=bar; foo1=bar"),
        .init(
            "mozilla0009",
            ["foo=bar; max-age=60", "foo1=bar; max-age=60", "foo=differentvalue; max-age=0"],
            sends: "foo1=bar"),
        .init(
            "mozilla0010",
            [
                "foo=bar; max-age=60",
                "foo1=bar; max-age=60",
                "foo=differentvalue; max-age=0",
                "foo2=evendifferentvalue; max-age=0",
            ],
            sends: "foo1=bar"),
        .init(
            "mozilla0011",
            ["test=parser; domain=.parser.test; ;; ;=; ,,, ===,abc,=; abracadabra! max-age=20;=;;"],
            sends: nil),
        .init(
            "mozilla0012",
            ["test=\"fubar! = foo;bar\\\";\" parser; max-age=6", "five; max-age=2.63,"],
            sends: "test=\"fubar! = foo"),
        .init("mozilla0013", ["test=kill; max-age=0", "five; max-age=0"], sends: nil),
        .init("mozilla0014", ["six"], sends: nil),
        .init("mozilla0015", ["six", "seven"], sends: nil),
        .init("mozilla0016", ["six", "seven", "=eight"], sends: nil),
        .init("mozilla0017", ["six", "seven", "=eight", "test=six"], sends: "test=six"),
        .init("name0001", ["a=bar"], sends: "a=bar"),
        .init("name0002", ["1=bar"], sends: "1=bar"),
        .init("name0003", ["$=bar"], sends: "$=bar"),
        .init("name0004", ["!a=bar"], sends: "!a=bar"),
        .init("name0005", ["@a=bar"], sends: "@a=bar"),
        .init("name0006", ["#a=bar"], sends: "#a=bar"),
        .init("name0007", ["$a=bar"], sends: "$a=bar"),
        .init("name0008", ["%a=bar"], sends: "%a=bar"),
        .init("name0009", ["^a=bar"], sends: "^a=bar"),
        .init("name0010", ["&a=bar"], sends: "&a=bar"),
        .init("name0011", ["*a=bar"], sends: "*a=bar"),
        .init("name0012", ["(a=bar"], sends: "(a=bar"),
        .init("name0013", [")a=bar"], sends: ")a=bar"),
        .init("name0014", ["-a=bar"], sends: "-a=bar"),
        .init("name0015", ["_a=bar"], sends: "_a=bar"),
        .init("name0016", ["+=bar"], sends: "+=bar"),
        .init("name0017", ["=a=bar"], sends: nil),
        .init("name0018", ["a =bar"], sends: "a=bar"),
        .init("name0019", ["\"a=bar"], sends: "\"a=bar"),
        .init("name0020", ["\"a=b\"=bar"], sends: "\"a=b\"=bar"),
        .init("name0021", ["\"a=b\"=bar", "\"a=qux"], sends: "\"a=qux"),
        .init("name0022", ["foo=bar"], sends: "foo=bar"),
        .init("name0023", ["foo;bar=baz"], sends: nil),
        .init("name0024", ["$Version=1; foo=bar"], sends: "$Version=1"),
        .init("name0025", ["===a=bar"], sends: nil),
        .init("name0026", ["foo=bar"], sends: "foo=bar"),
        .init("name0027", ["foo=bar    ;"], sends: "foo=bar"),
        .init("name0028", ["=a"], sends: nil),
        .init("name0029", ["="], sends: nil),
        .init("name0030", ["foo bar=baz"], sends: "foo bar=baz"),
        .init("name0031", ["\"foo;bar\"=baz"], sends: nil),
        .init("name0032", ["\"foo\\\"bar;baz\"=qux"], sends: nil),
        .init("name0033", ["=foo=bar", "aaa"], sends: nil),
        .init("optional-domain0030", ["foo=bar; domain="], sends: "foo=bar"),
        .init("optional-domain0041", ["foo=bar; domain=example.org; domain="], sends: "foo=bar"),
        .init("optional-domain0042", ["foo=bar; domain=foo.example.org; domain="], sends: nil),
        .init(
            "optional-domain0043",
            ["foo=bar; domain=foo.example.org; domain="],
            to: "http://subdomain.home.example.org:8888/cookie-parser-result?optional-domain0043",
            sends: nil),
        .init(
            "ordering0001",
            [
                "key=val0;",
                "key=val1; path=/cookie-parser-result",
                "key=val2; path=/",
                "key=val3; path=/bar",
                "key=val4; domain=.example.org",
                "key=val5; domain=.example.org; path=/cookie-parser-result/foo",
            ],
            to: "/cookie-parser-result/foo/baz?ordering0001",
            sends: "key=val5; key=val1; key=val2; key=val4"),
        .init("path0001", ["a=b; path=/", "x=y; path=/cookie-parser-result"], sends: "x=y; a=b"),
        .init("path0002", ["a=b; path=/cookie-parser-result", "x=y; path=/"], sends: "a=b; x=y"),
        .init("path0003", ["x=y; path=/", "a=b; path=/cookie-parser-result"], sends: "a=b; x=y"),
        .init("path0004", ["x=y; path=/cookie-parser-result", "a=b; path=/"], sends: "x=y; a=b"),
        .init("path0005", ["foo=bar; path=/cookie-parser-result/foo"], sends: nil),
        .init("path0006", ["foo=bar", "foo=qux; path=/cookie-parser-result/foo"], sends: "foo=bar"),
        .init(
            "path0007",
            ["foo=bar; path=/cookie-parser-result/foo"],
            to: "/cookie-parser-result/foo?path0007",
            sends: "foo=bar"),
        .init(
            "path0008",
            ["foo=bar; path=/cookie-parser-result/foo"],
            to: "/cookie-parser-result/bar?path0008",
            sends: nil),
        .init(
            "path0009",
            ["foo=bar; path=/cookie-parser-result/foo/qux"],
            to: "/cookie-parser-result/foo?path0009",
            sends: nil),
        .init(
            "path0010",
            ["foo=bar; path=/cookie-parser-result/foo/qux"],
            to: "/cookie-parser-result/foo/qux?path0010",
            sends: "foo=bar"),
        .init(
            "path0011",
            ["foo=bar; path=/cookie-parser-result/foo/qux"],
            to: "/cookie-parser-result/bar/qux?path0011",
            sends: nil),
        .init(
            "path0012",
            ["foo=bar; path=/cookie-parser-result/foo/qux"],
            to: "/cookie-parser-result/foo/baz?path0012",
            sends: nil),
        .init(
            "path0013",
            ["foo=bar; path=/cookie-parser-result/foo/qux/"],
            to: "/cookie-parser-result/foo/baz?path0013",
            sends: nil),
        .init(
            "path0014",
            ["foo=bar; path=/cookie-parser-result/foo/qux/"],
            to: "/cookie-parser-result/foo/qux?path0014",
            sends: nil),
        .init(
            "path0015",
            ["foo=bar; path=/cookie-parser-result/foo/qux/"],
            to: "/cookie-parser-result/foo/qux/?path0015",
            sends: "foo=bar"),
        .init(
            "path0016",
            ["foo=bar; path=/cookie-parser-result/foo/"],
            to: "/cookie-parser-result/foo/qux?path0016",
            sends: "foo=bar"),
        .init(
            "path0017",
            ["foo=bar; path=/cookie-parser-result/foo/"],
            to: "/cookie-parser-result/foo//qux?path0017",
            sends: "foo=bar"),
        .init(
            "path0018",
            ["foo=bar; path=/cookie-parser-result/foo/"],
            to: "/cookie-parser-result/fooqux?path0018",
            sends: nil),
        .init("path0019", ["foo=bar; path"], sends: "foo=bar"),
        .init("path0020", ["foo=bar; path="], sends: "foo=bar"),
        .init("path0021", ["foo=bar; path=/"], sends: "foo=bar"),
        .init("path0022", ["foo=bar; path= /"], sends: "foo=bar"),
        .init("path0023", ["foo=bar; Path=/cookie-PARSER-result"], sends: nil),
        .init(
            "path0024",
            ["foo=bar; path=/cookie-parser-result/foo/qux?"],
            to: "/cookie-parser-result/foo/qux?path0024",
            sends: nil),
        .init(
            "path0025",
            ["foo=bar; path=/cookie-parser-result/foo/qux#"],
            to: "/cookie-parser-result/foo/qux?path0025",
            sends: nil),
        .init(
            "path0026",
            ["foo=bar; path=/cookie-parser-result/foo/qux;"],
            to: "/cookie-parser-result/foo/qux?path0026",
            sends: "foo=bar"),
        .init(
            "path0027",
            ["foo=bar; path=\"/cookie-parser-result/foo/qux;\""],
            to: "/cookie-parser-result/foo/qux?path0027",
            sends: "foo=bar"),
        .init(
            "path0028",
            ["foo=bar; path=/cookie-parser-result/f%6Fo/bar"],
            to: "/cookie-parser-result/foo/bar?path0028",
            sends: nil),
        .init("path0029", ["a=b; \tpath\t=\t/cookie-parser-result", "x=y; \tpath\t=\t/book"], sends: "a=b"),
        .init("path0030", ["foo=bar; path=/dog; path="], sends: "foo=bar"),
        .init("path0031", ["foo=bar; path=; path=/dog"], sends: nil),
        .init(
            "path0032",
            ["foo=bar; path=/cookie-parser-result", "foo=qux; path=/cookie-parser-result/"],
            to: "/cookie-parser-result/dog?path0032",
            sends: "foo=qux; foo=bar"),
        .init("value0001", ["foo=  bar"], sends: "foo=bar"),
        .init("value0002", ["foo=\"bar\""], sends: "foo=\"bar\""),
        .init("value0003", ["foo=\"  bar \""], sends: "foo=\"  bar \""),
        .init("value0004", ["foo=\"bar;baz\""], sends: "foo=\"bar"),
        .init("value0005", ["foo=\"bar=baz\""], sends: "foo=\"bar=baz\""),
        .init("value0006", ["foo\t=\tbar\t \t;\tttt"], sends: "foo=bar"),
    ]
}
