#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ServerAPIManager {
    /// Sends a call and returns as soon as the response head has arrived, with the body to read as it
    /// arrives: byte chunks, lines or server-sent events.
    ///
    /// ```swift
    /// let response = try await manager.stream(ServerAPI(url: feedURL))
    /// for try await line in response.lines { print(line) }
    /// ```
    /// The pipeline applies up to the head: plugins prepare and see the request and the head, retries
    /// and an auth refresh happen only before the head is delivered, and a status the call does not
    /// accept throws `httpStatus` with an excerpt of the body (at most 4 KiB read). The call's `timeout`
    /// bounds the time until the head; after it, the body runs until it ends, stalls (the call's stall
    /// timeout) or is cancelled. A streamed call does not use the cache or coalescing and cannot have a
    /// download destination; a throttled one that would replay a previous result fails with `throttled`.
    ///
    /// The call stays in `inFlight` until its body ends, so `cancel(id:)`, `cancel(tag:)`, first, last
    /// and all end its body with `cancelled`. Plugins' `didComplete` runs when the body ends, with the
    /// final metrics.
    /// - Parameters:
    ///   - api: The call.
    ///   - progress: Called with upload and download progress, from any thread.
    /// - Returns: The head and the body.
    /// - Throws: `ServerAPIError`, for failures before the head; later ones end the body.
    public func stream(
        _ api: ServerAPI, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> StreamedResponse {
        var request = try api.transportRequest()
        guard request.download == nil else {
            throw ServerAPIError(
                .invalidRequest, "a streamed call cannot have a download destination: write its chunks yourself",
                requestID: api.id, url: request.url)
        }
        let startDate = Date()
        let lifecycle = Call(
            info: InFlightRequest(id: api.id, tag: api.tag, method: api.method, url: request.url, startedAt: startDate),
            registry: registry)
        request.cancellation = lifecycle.cancellation
        request.progress = progress
        let call = CallContext(
            api: api, request: request, cacheKey: nil, interceptor: nil, startDate: startDate, call: lifecycle)
        registerCall(lifecycle, for: api)
        do {
            if let policy = api.throttle,
                case .replay = try admit(
                    api, key: ControlKey(api: api, request: request), policy: policy, url: request.url)
            {
                throw ServerAPIError(
                    .throttled, "the same call was sent too recently, and a streamed call cannot replay its result")
            }
            var metrics = call.initialMetrics()
            let head = try await retrying(call, api: api, base: request, metrics: &metrics) {
                request, metrics, lastResponse in
                try await exchange(
                    request, api: api, metrics: &metrics, lastResponse: &lastResponse, send: openStream)
            }
            guard case .stream(let body) = head.body else {
                throw ServerAPIError(.network, "the transport returned no streamed body")
            }
            metrics.duration = call.elapsed
            body.storage.stamp(requestID: api.id, url: head.url)
            let completion = StreamCompletion()
            let headMetrics = metrics
            lifecycle.headReceived()
            body.whenEnded { [self] end in
                var final = headMetrics
                final.endedAt = nil
                final.duration = .zero
                switch end {
                case .success(let transport):
                    if let transport { final.transport = transport }
                    final = endMetrics(final, call: call)
                    _ = complete(call, final, nil)
                case .failure(let error):
                    if let transport = body.metrics { final.transport = transport }
                    final = endMetrics(final, call: call)
                    _ = complete(call, final, error)
                }
                completion.finish(final)
            }
            // The registry, a scope or a handle cancels the body from now on; a cancel that came first
            // (the call's state machine remembers it, the caller's task fired the token) runs it at once.
            lifecycle.bodyStreaming()
            lifecycle.installCancelHandler { body.cancel() }
            if lifecycle.cancellation.isCancelled { body.cancel() }
            return StreamedResponse(
                status: head.status, headers: head.headers, url: head.url, requestID: api.id, metrics: headMetrics,
                body: body, completion: completion)
        } catch {
            lifecycle.leave()
            throw decorate(error, call: call)
        }
    }

    /// Opens a streamed exchange. A transport that does not observe the call's token runs in a task of
    /// its own until the head, which the token cancels.
    private func openStream(_ request: TransportRequest) async throws -> TransportResponse {
        let transport = self.transport
        guard !transport.observesCancellationToken, let cancellation = request.cancellation else {
            return try await transport.stream(request)
        }
        return try await cancellation.run { try await transport.stream(request) }
    }

    /// The start of an error response's streamed body, for the `httpStatus` error: at most 4 KiB, read
    /// within the request's timeout and until the call is cancelled; the rest of the body is dropped.
    static func excerpt(of body: ResponseBodyStream, for request: TransportRequest) async -> Data {
        let limit = 4096
        let timeout = request.timeout
        let timer = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            body.cancel()
        }
        defer {
            timer.cancel()
            body.cancel()
        }
        return await request.withCancellationHandler {
            var data = Data()
            var chunks = body.makeAsyncIterator()
            while data.count < limit, let chunk = try? await chunks.next() {
                data.append(chunk.prefix(limit - data.count))
            }
            return data
        } onCancel: {
            body.cancel()
        }
    }
}
