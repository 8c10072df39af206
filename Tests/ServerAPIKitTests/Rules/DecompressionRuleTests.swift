import Foundation
import ServerAPIKit
import Testing

@Suite("Decompression rule")
struct DecompressionRuleTests {
    /// The documented floor (1 MiB), as a literal: `DecompressionRule.floor` must say the same.
    static let floor: Int64 = 1 << 20

    @Test("the documented defaults: a ratio of 100, a floor of 1 MiB")
    func documentedDefaults() {
        #expect(DecompressionRule.defaultRatio == 100)
        #expect(DecompressionRule.floor == Self.floor)
        #expect(TransportRequest(url: URL(string: "http://api.test/")!).maxDecompressionRatio == 100)
    }

    @Test("a body within the ratio passes; one beyond it fails, saying it was the ratio")
    func ratio() throws {
        #expect(DecompressionRule.check(decoded: 10_000_000, encoded: 100_000, ratio: 100, status: 200) == nil)
        let error = try #require(
            DecompressionRule.check(decoded: 10_000_001, encoded: 100_000, ratio: 100, status: 200))
        #expect(error.kind == .responseTooLarge)
        #expect(error.status == 200)
        #expect(
            error.message
                == "the response body decompresses to 10000001 bytes from 100000 encoded bytes, more than the "
                + "decompression ratio limit of 100 to 1")
    }

    @Test("bodies up to the floor are never refused, however much they expand")
    func floor() {
        #expect(DecompressionRule.check(decoded: Self.floor, encoded: 1, ratio: 100, status: 200) == nil)
        #expect(DecompressionRule.check(decoded: Self.floor + 1, encoded: 1, ratio: 100, status: 200) != nil)
    }

    @Test("no ratio, or no known encoded size, checks nothing")
    func nothingToCheck() {
        #expect(DecompressionRule.check(decoded: 1 << 40, encoded: 1, ratio: nil, status: 200) == nil)
        #expect(DecompressionRule.check(decoded: 1 << 40, encoded: nil, ratio: 100, status: 200) == nil)
    }

    @Test("no encoded bytes yet counts as one; a huge ratio does not overflow")
    func edges() {
        #expect(DecompressionRule.check(decoded: Self.floor + 1, encoded: 0, ratio: 100, status: 200) != nil)
        #expect(DecompressionRule.check(decoded: .max, encoded: .max / 2, ratio: .max, status: 200) == nil)
        #expect(DecompressionRule.check(decoded: Self.floor + 1, encoded: 1, ratio: 0, status: 200) != nil)
    }

    @Test(
        "a Content-Encoding other than identity is a coded body",
        arguments: [
            ("gzip", true), ("br", true), ("identity", false), ("Identity", false), ("", false),
            ("identity, gzip", true),
        ])
    func encoded(value: String, coded: Bool) {
        #expect(DecompressionRule.isEncoded(["Content-Encoding": value]) == coded)
        #expect(!DecompressionRule.isEncoded(["Content-Type": "application/gzip"]))
    }

    // MARK: Through the exchange

    private static func request(ratio: Int? = 100) -> TransportRequest {
        TransportRequest(url: URL(string: "http://api.test/")!, maxDecompressionRatio: ratio)
    }

    private static func failed(_ action: ExchangeStateMachine.BodyAction) -> ServerAPIError? {
        if case .fail(let error) = action { error } else { nil }
    }

    @Test("the exchange applies the ratio to coded bodies, with the encoded count the backend gives")
    func exchangeWithCount() throws {
        var machine = ExchangeStateMachine(download: false)
        _ = machine.headReceived(status: 200, headers: ["Content-Encoding": "gzip"], request: Self.request())
        #expect(machine.isContentCoded)
        #expect(Self.failed(machine.bodyReceived(count: 1 << 20, encoded: 10_000)) == nil)
        let error = try #require(Self.failed(machine.bodyReceived(count: 1 << 20, encoded: 20_000)))
        #expect(error.message.contains("decompression ratio limit of 100"))
    }

    @Test("without a count, the encoded Content-Length bounds the ratio")
    func exchangeWithContentLength() throws {
        var machine = ExchangeStateMachine(download: false)
        let headers: HTTPHeaders = ["Content-Encoding": "br", "Content-Length": "10000"]
        _ = machine.headReceived(status: 200, headers: headers, request: Self.request())
        #expect(Self.failed(machine.bodyReceived(count: 1_000_000)) == nil)
        #expect(Self.failed(machine.bodyReceived(count: 48_000)) == nil)
        #expect(Self.failed(machine.bodyReceived(count: 1_000)) != nil, "1,049,000 bytes from 10,000")
    }

    @Test("with an encoded Content-Length, a count that lags (libcurl 8.x: 0 during the first read) is not used")
    func exchangeWithLaggingCount() throws {
        var machine = ExchangeStateMachine(download: false)
        let headers: HTTPHeaders = ["Content-Encoding": "zstd", "Content-Length": "3219"]
        _ = machine.headReceived(status: 200, headers: headers, request: Self.request())
        let error = try #require(Self.failed(machine.bodyReceived(count: 1_064_960, encoded: 0)))
        #expect(
            error.message
                == "the response body decompresses to 1064960 bytes from 3219 encoded bytes, more than the "
                + "decompression ratio limit of 100 to 1")
        #expect(error.isDecompressionRatioExceeded)
        #expect(error.recoverySuggestion?.contains("maxDecompressionRatio") == true)
    }

    @Test("a body that is not coded, or a request without a ratio, is not checked")
    func exchangeUnchecked() {
        var plain = ExchangeStateMachine(download: false)
        _ = plain.headReceived(status: 200, headers: ["Content-Length": "10"], request: Self.request())
        #expect(!plain.isContentCoded)
        #expect(Self.failed(plain.bodyReceived(count: 1 << 24, encoded: 10)) == nil)
        var unlimited = ExchangeStateMachine(download: false)
        _ = unlimited.headReceived(
            status: 200, headers: ["Content-Encoding": "gzip"], request: Self.request(ratio: nil))
        #expect(Self.failed(unlimited.bodyReceived(count: 1 << 24, encoded: 10)) == nil)
    }
}
