import Foundation
import Testing

@testable import ServerAPIKit

/// What the core does by hand since it imports FoundationEssentials alone, checked against what Foundation
/// gives for the same input (the tests import all of Foundation).
@Suite("Text handling without Foundation's internationalisation")
struct FoundationEssentialsTextTests {
    @Test(
        "trimming Unicode spaces matches Foundation's .whitespaces and .whitespacesAndNewlines",
        arguments: [
            "", " ", "plain", "  both ends \t", "\u{00A0}no-break\u{2003}", "\n line breaks \r\n", "inner  space",
            "\u{3000}ideographic\u{3000}", "\t\n\u{0085}\u{2028}mixed\u{2029}",
        ])
    func trimming(text: String) {
        #expect(String(HTTPSyntax.trimming(text, HTTPSyntax.isSpace)) == text.trimmingCharacters(in: .whitespaces))
        #expect(
            String(HTTPSyntax.trimming(text, \.properties.isWhitespace))
                == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(
        "percent-decoding matches Foundation's removingPercentEncoding",
        arguments: [
            "plain", "%2Fvar%2Frun%2Fd.sock", "%e2%82%ac", "a%20b+c", "%", "%2", "%zz", "%FF", "100%25", "",
        ])
    func decoding(text: String) {
        #expect(PercentEncoding.decode(text) == text.removingPercentEncoding)
    }

    @Test(
        "percent-encoding a socket path matches Foundation's urlHostAllowed without / : %",
        arguments: [
            "/var/run/docker.sock", "/tmp/with space/€.sock", "/tmp/a:b%c!$&'()*+,;=~_-.sock",
        ])
    func socketPathEncoding(path: String) throws {
        var allowed = CharacterSet.urlHostAllowed
        allowed.remove(charactersIn: "/:%")
        let expected = try #require(path.addingPercentEncoding(withAllowedCharacters: allowed))
        let url = try #require(UnixSocket.url(socketPath: path))
        #expect(url.absoluteString == "http+unix://" + expected + "/")
        #expect(UnixSocket.split(url)?.socketPath == path)
    }

    @Test(
        "String(cFormat:) writes numbers as String(format:) does",
        arguments: [0.0, 0.25, 1.5, 2.0 / 3.0, 12.0, 1234.5678])
    func cFormat(value: Double) {
        for format in ["%.1f ms", "%.0f ms", "%g s", "%.3g s"] {
            #expect(String(cFormat: format, value) == String(format: format, value), "\(format)")
        }
        #expect(String(cFormat: "%02x", UInt8(7)) == "07")
    }

    @Test("Retry-After reads every HTTP-date form (RFC 9110 §5.6.7), not only IMF-fixdate")
    func retryAfterDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)  // Tue, 14 Nov 2023 22:13:20 GMT
        #expect(RetryPolicy.retryAfter("Tue, 14 Nov 2023 22:13:40 GMT", now: now) == .seconds(20))
        #expect(RetryPolicy.retryAfter("Tuesday, 14-Nov-23 22:13:40 GMT", now: now) == .seconds(20))
        #expect(RetryPolicy.retryAfter("Tue Nov 14 22:13:40 2023", now: now) == .seconds(20))
        #expect(RetryPolicy.retryAfter("  Tue, 14 Nov 2023 22:13:10 GMT ", now: now) == .zero)
        #expect(RetryPolicy.retryAfter("Tue, 31 Feb 2023 22:13:40 GMT", now: now) == nil)
        #expect(RetryPolicy.retryAfter(" 7 ") == .seconds(7))
    }
}

@Suite("Private files without Foundation's NSError")
struct PrivateFileFailureTests {
    @Test("a folder that cannot be created fails with the system's reason, read from FoundationEssentials' error")
    func folderFailure() {
        // /dev/null is a file: nothing can be created below it.
        let error = #expect(throws: PrivateFile.Failure.self) {
            try PrivateFile.write(Data("x".utf8), to: URL(fileURLWithPath: "/dev/null/jar/cookies.json"))
        }
        #expect(error?.path == "/dev/null/jar")
        #expect(error?.code == ENOTDIR)
    }
}
