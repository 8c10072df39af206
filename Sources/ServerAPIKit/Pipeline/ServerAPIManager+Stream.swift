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
        try await run(api, progress: progress, finishing: StreamFinishing())
    }

    /// After a streamed exchange: hands the head and the body over. The call completes (its final
    /// metrics, `didComplete`, the registry) when the body ends; from now on the registry, a scope or a
    /// handle cancels the body.
    @inline(never)
    func handOver<F: CallFinishing>(
        _ head: TransportResponse, _ call: Call, _ finisher: F, completion: StreamCompletion
    ) throws -> F.Value {
        guard case .stream(let body) = head.body else {
            throw ServerAPIError(.network, "the transport returned no streamed body")
        }
        let api = call.api
        // The body's end, on another thread, works on this copy: the call's own metrics stay with its task.
        let headMetrics = call.metrics
        body.storage.stamp(requestID: api.id, url: head.url)
        call.headReceived()
        body.whenEnded { [self] end in
            var final = headMetrics
            final.endedAt = nil
            final.duration = .zero
            switch end {
            case .success(let transport):
                if let transport { final.transport = transport }
                final = endMetrics(final, call: call)
                completeSucceeded(call, metrics: final)
            case .failure(let error):
                if let transport = body.metrics { final.transport = transport }
                final = endMetrics(final, call: call)
                _ = complete(call, error, metrics: final)
            }
            completion.finish(final)
        }
        // From now on cancelling the call cancels the body; a cancel that came first runs it at once.
        call.bodyStreaming()
        call.onCancel { body.cancel() }
        return try finisher.finish(head, source: .network, metrics: headMetrics, api: api)
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
