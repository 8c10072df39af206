#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        _ ticket: SingleFlight<ControlKey, SharedResponse>.Ticket, call: Call
    ) async throws(ServerAPIError) -> SharedResponse {
        let flights = controls.flights
        if ticket.isLeader {
            // The shared call runs in the flight's own task, which ends when its last waiter leaves: not
            // when the leader alone is cancelled. Its callers each deliver the response for themselves.
            let shared = call.sharedFlight { flights.progress(ticket.flight, $0) }
            flights.start(ticket) { await self.sharedCall(shared) }
        }
        switch await flights.wait(ticket, call: call) {
        case .success(let shared):
            return shared
        case .failure(let error):
            var error = ServerAPIError.wrap(error)
            error.requestID = call.id
            throw error
        }
    }

    /// The one transport call of a flight, made for its leader's description.
    private func sharedCall(_ call: Call) async -> SingleFlight<ControlKey, SharedResponse>.Outcome {
        do {
            return .success(try await execute(call, SharedFinishing(formatter: formatter)))
        } catch {
            return .failure(call.stamp(error))
        }
    }
}
