/// What a caller gets from a response: a formatted `ServerResult`, a decoded model, or (for a shared
/// flight) the response itself. The pipeline calls it inside the attempt, so that a business error
/// found while formatting can still be retried (an auth refresh on a business code).
protocol CallFinishing: Sendable {
    associatedtype Value: Sendable
    /// Turns a response into the caller's value.
    func finish(_ response: TransportResponse, source: ResultSource, metrics: RequestMetrics, api: ServerAPI) throws
        -> Value
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
