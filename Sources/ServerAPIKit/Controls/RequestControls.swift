#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The manager's state for request controls: calls in flight that may be shared, and when each
/// throttled call was last sent.
final class RequestControls: Sendable {
    let flights = SingleFlight<ControlKey, SharedResponse>()
    let throttles = ThrottleRegistry()
    /// Stale responses being revalidated in the background (`stale-while-revalidate`), by call id.
    let revalidations = Locked<[RequestID: Task<Void, Never>]>([:])
}

/// What makes two calls "the same" for coalescing and throttling: everything that can change the
/// response or who may see it.
struct ControlKey: Sendable, Hashable {
    /// Method, normalized URL, body digest, and the credential and varying header values.
    var request: CacheKey
    var cacheMode: CacheMode
    var acceptableStatus: StatusValidation
    var maxResponseSize: Int64?
    var maxDecompressionRatio: Int?
    var redirects: RedirectPolicy

    /// Headers whose values always separate calls, whatever the call lists as varying: two
    /// users' calls must never share a response.
    static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]

    init(api: ServerAPI, request: TransportRequest) {
        var varying = Self.credentialHeaders
        for name in api.varyingHeaders where !varying.contains(where: { $0.lowercased() == name.lowercased() }) {
            varying.append(name)
        }
        self.request = CacheKey(request: request, varying: varying)
        self.cacheMode = api.cacheMode
        self.acceptableStatus = api.acceptableStatus
        self.maxResponseSize = api.maxResponseSize
        self.maxDecompressionRatio = api.maxDecompressionRatio
        self.redirects = api.redirects
    }
}

/// A response the manager got for a call, with where it came from and what was measured, before
/// it is formatted for one particular caller.
struct SharedResponse: Sendable {
    var response: TransportResponse
    var source: ResultSource
    var metrics: RequestMetrics
}
