#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Owner-bound cancellation: calls started in a `RequestScope` end when it is cancelled or deallocated.
extension ServerAPIManager {
    /// Sends a call in a scope: it is cancelled when the scope is.
    /// - Parameters:
    ///   - api: The call.
    ///   - scope: The scope the call belongs to.
    ///   - progress: Called with upload and download progress, from any thread.
    /// - Returns: The formatted result.
    /// - Throws: `ServerAPIError`; `cancelled` when the scope or the caller's task was cancelled.
    public func send(
        _ api: ServerAPI, in scope: RequestScope, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> ServerResult {
        try await scope.perform { try await self.send(api, progress: progress) }
    }

    /// Sends a call in a scope and delivers its result to a completion handler, called exactly
    /// once. The running call does not keep the scope alive: when its owner lets the scope go,
    /// the call ends with `cancelled`.
    /// - Returns: A handle with the call's id and a way to cancel it.
    @discardableResult
    public func send(
        _ api: ServerAPI, in scope: RequestScope, progress: (@Sendable (TransferProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<ServerResult, ServerAPIError>) -> Void
    ) -> RequestHandle {
        scope.start(api, with: self, progress: progress, completion: completion)
    }
}
