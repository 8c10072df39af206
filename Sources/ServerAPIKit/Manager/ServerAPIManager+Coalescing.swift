import Foundation

// Coalescing (single flight): identical GET and HEAD calls in flight share one transport call.
extension ServerAPIManager {
    /// Whether a call may share a transport call with identical ones.
    func shouldCoalesce(_ api: ServerAPI) -> Bool {
        guard api.method == .get || api.method == .head, api.download == nil else { return false }
        switch api.coalescing {
        case .enabled: return true
        case .disabled: return false
        case .managerDefault: return configuration.coalescesIdenticalRequests
        }
    }

    /// Starts the flight if this caller opened it, then waits for the shared response.
    /// - Throws: The shared call's error (with this caller's id), or `cancelled` when this caller was.
    func awaitFlight(
        _ ticket: SingleFlight<ControlKey, SharedResponse>.Ticket, api: ServerAPI, base: TransportRequest,
        startedAt: Date
    ) async throws(ServerAPIError) -> SharedResponse {
        let flights = controls.flights
        if ticket.isLeader {
            // The shared call runs in the flight's own task, which ends when its last waiter leaves: not
            // when the leader alone is cancelled.
            var detached = base
            detached.cancellation = nil
            let shared = detached
            flights.start(ticket) {
                await self.sharedCall(api, base: shared, startedAt: startedAt) { flights.progress(ticket.flight, $0) }
            }
        }
        switch await flights.wait(ticket, cancellation: base.cancellation) {
        case .success(let shared):
            return shared
        case .failure(let error):
            var error = ServerAPIError.wrap(error)
            error.requestID = api.id
            throw error
        }
    }

    /// The one transport call of a flight, made for its leader's description.
    private func sharedCall(
        _ api: ServerAPI, base: TransportRequest, startedAt: Date,
        progress: @escaping @Sendable (TransferProgress) -> Void
    ) async -> SingleFlight<ControlKey, SharedResponse>.Outcome {
        let formatter = self.formatter
        let share: Finish<SharedResponse> = { response, source, metrics in
            // A business failure must surface inside the retry loop, where plugins (an auth
            // refresh on a business code) can act on it; each caller then formats for itself.
            do {
                _ = try formatter.format(response, for: api)
            } catch let error as ServerAPIError where error.kind == .business {
                throw error
            } catch {}
            return SharedResponse(response: response, source: source, metrics: metrics)
        }
        do {
            return .success(try await execute(api, base: base, progress: progress, startedAt: startedAt, finish: share))
        } catch {
            return .failure(ServerAPIError.wrap(error).with(requestID: api.id, url: base.url))
        }
    }
}
