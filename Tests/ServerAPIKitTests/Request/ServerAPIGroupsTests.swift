import Foundation
import ServerAPIKit
import Testing

@Suite("ServerAPI's groups: the wire request, transfer settings, policy and reading")
struct ServerAPIGroupsTests {
    static let base = ServerAPI(host: "https://api.test", path: "/items")

    @Test("each modifier writes its group, and the call's own properties read the same value")
    func modifiersWriteTheirGroup() {
        let api = Self.base.method(.post).header("X-A", "1").timeout(.seconds(5)).maxResponseSize(10)
            .retry(2).cache(.returnCacheElseLoad).coalesced().format(.data).keyPath("data").accept(.any)
        #expect(api.wire.method == .post && api.method == .post)
        #expect(api.wire.headers["X-A"] == "1")
        #expect(api.transfer.timeout == .seconds(5) && api.timeout == .seconds(5))
        #expect(api.transfer.maxResponseSize == 10)
        #expect(api.policy.retryCount == 2 && api.policy.cacheMode == .returnCacheElseLoad)
        #expect(api.policy.coalescing == .enabled)
        #expect(api.reading == ServerAPI.Reading(resultFormat: .data, keyPath: "data", acceptableStatus: .any))
        var changed = api
        changed.transfer.timeout = .seconds(9)
        #expect(changed.timeout == .seconds(9))
        #expect(changed != api)
    }

    @Test("a write to one call's group, or to one metrics' boxed field, leaves every other value as it was")
    func copyOnWriteKeepsValuesApart() {
        // New calls, metrics and errors start from shared boxes of the defaults; a write must copy them first.
        var first = ServerAPI(host: "https://a.test")
        let second = ServerAPI(host: "https://b.test")
        first.policy.retryCount = 3
        first.transfer.timeout = .seconds(1)
        #expect(second.policy == ServerAPI.Policy() && second.transfer == ServerAPI.Transfer())
        #expect(ServerAPI(host: "https://c.test").policy.retryCount == 0)
        var metrics = RequestMetrics()
        let untouched = metrics
        metrics.transport = TransportMetrics(transport: "test")
        metrics.resilience.hedged = true
        #expect(untouched.transport == nil && !untouched.resilience.hedged)
        #expect(RequestMetrics().transport == nil && !RequestMetrics().resilience.hedged)
        var error = ServerAPIError(.network, "down")
        error.metrics = metrics
        #expect(ServerAPIError(.network, "down").metrics == nil)
        var shared = first
        shared.policy.retryCount = 5
        #expect(first.policy.retryCount == 3 && shared.policy.retryCount == 5)
    }

    @Test("a new call's groups hold the documented defaults")
    func defaults() {
        let api = Self.base
        #expect(api.transfer == ServerAPI.Transfer())
        #expect(api.policy == ServerAPI.Policy())
        #expect(api.reading == ServerAPI.Reading())
        #expect(api.wire == ServerAPI.Wire(host: "https://api.test", path: "/items"))
        #expect(api.transfer.timeout == .seconds(60))
        #expect(api.transfer.redirects == .follow(max: 10))
        // The documented literal (DecompressionRule.defaultRatio: "100"), not the constant the code reads.
        #expect(api.transfer.maxDecompressionRatio == 100)
    }

    @Test("the transport request carries the call's transfer settings as they are")
    func transportRequestCarriesTransfer() throws {
        let api = Self.base.timeout(.seconds(7)).connectTimeout(.seconds(2))
            .stallTimeout(below: 10, for: .seconds(3))
            .download(to: URL(fileURLWithPath: "/tmp/groups-download"), resume: true)
            .maxResponseSize(99).maxDecompressionRatio(7).redirects(.follow(max: 3)).unixSocket("/tmp/groups.sock")
        let request = try api.transportRequest()
        #expect(request.transfer == api.transfer)
        #expect(request.timeout == .seconds(7))
        #expect(request.connectTimeout == .seconds(2))
        #expect(request.stallTimeout == StallTimeout(bytesPerSecond: 10, duration: .seconds(3)))
        #expect(
            request.download == DownloadTarget(destination: URL(fileURLWithPath: "/tmp/groups-download"), resume: true))
        #expect(request.maxResponseSize == 99)
        #expect(request.maxDecompressionRatio == 7)
        #expect(request.redirects == .follow(max: 3))
        #expect(request.unixSocketPath == "/tmp/groups.sock")
    }

    @Test("a http+unix URL's socket replaces the call's own in the transport request")
    func unixURLSocketWins() throws {
        let url = try #require(URL(string: "http+unix://%2Ftmp%2Furl.sock/ping"))
        let api = ServerAPI(url: url).unixSocket("/tmp/other.sock").timeout(.seconds(4))
        let request = try api.transportRequest()
        #expect(request.unixSocketPath == "/tmp/url.sock")
        #expect(request.timeout == .seconds(4))
    }

    @Test("changing what prepare() checks unprepares the request; the other transfer settings do not")
    func preparedness() throws {
        var request = try Self.base.transportRequest()
        #expect(request.isPrepared)
        request.maxResponseSize = 5
        request.download = DownloadTarget(destination: URL(fileURLWithPath: "/tmp/groups-other"))
        request.redirects = .none
        #expect(request.isPrepared)
        request.timeout = .seconds(1)
        #expect(!request.isPrepared)
        try request.prepare()
        request.transfer.stallTimeout = StallTimeout(bytesPerSecond: 1, duration: .seconds(1))
        #expect(!request.isPrepared)
        try request.prepare()
        request.unixSocketPath = "/tmp/groups.sock"
        #expect(!request.isPrepared)
    }
}
