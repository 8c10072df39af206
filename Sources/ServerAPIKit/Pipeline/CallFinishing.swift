/// What a caller gets from a response: a formatted `ServerResult`, a decoded model, the head with a
/// streamed body, or (for a shared flight) the response itself. The pipeline calls it inside the attempt,
/// so that a business error found while formatting can still be retried (an auth refresh on a business code).
protocol CallFinishing: Sendable {
    associatedtype Value: Sendable
    /// The end of a streamed call, which `StreamedResponse.finalMetrics` waits on; `nil` (the default) for
    /// a call whose response is collected whole. A streamed call asks the transport for the head with the
    /// body to read, and uses neither the cache nor coalescing.
    var streamCompletion: StreamCompletion? { get }
    /// Turns a response into the caller's value.
    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> Value
}

extension CallFinishing {
    var streamCompletion: StreamCompletion? { nil }

    /// Whether the call hands the head and the body over as the body arrives.
    var streams: Bool { streamCompletion != nil }
}

/// `send(_:)`: a `ServerResult` in the call's result format.
struct ResultFinishing: CallFinishing {
    let formatter: any ResponseFormatting

    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> ServerResult
    {
        ServerResult(
            value: try formatter.format(response, for: api), status: response.status, headers: response.headers,
            url: response.url, requestID: api.id, source: source, metrics: metrics, trailers: response.trailers)
    }
}

/// `send(_:decoding:)`: a model decoded at the call's key path.
struct ModelFinishing<Model: Decodable & Sendable>: CallFinishing {
    let formatter: any ResponseFormatting

    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> Model
    {
        try formatter.decode(Model.self, from: response, for: api)
    }
}

/// The one transport call of a coalesced flight: the response, kept for every caller to format.
struct SharedFinishing: CallFinishing {
    let formatter: any ResponseFormatting

    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> SharedResponse
    {
        // A business failure must surface inside the retry loop, where plugins (an auth refresh on a
        // business code) can act on it; each caller then formats for itself.
        do {
            _ = try formatter.format(response, for: api)
        } catch let error as ServerAPIError where error.kind == .business {
            throw error
        } catch {}
        return SharedResponse(response: response, source: source, metrics: metrics)
    }
}

/// `stream(_:)`: the head, with the body to read as it arrives; the call completes when the body ends.
struct StreamFinishing: CallFinishing {
    let streamCompletion: StreamCompletion? = StreamCompletion()

    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> StreamedResponse
    {
        guard case .stream(let body) = response.body, let completion = streamCompletion else {
            throw ServerAPIError(.network, "the transport returned no streamed body")
        }
        return StreamedResponse(
            status: response.status, headers: response.headers, url: response.url, requestID: api.id,
            metrics: metrics, body: body, completion: completion)
    }
}
