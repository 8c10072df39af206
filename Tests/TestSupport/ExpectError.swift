import ServerAPIKit
import Testing

/// Runs `body` and returns the `ServerAPIError` it threw; records an issue (and returns `nil`) when it
/// returned instead, or threw another kind of error.
///
/// ```swift
/// let error = await expectError { try await manager.send(api) }
/// #expect(error?.kind == .timedOut)
/// ```
public func expectError(
    _ body: () async throws -> some Any, sourceLocation: SourceLocation = #_sourceLocation
) async -> ServerAPIError? {
    do {
        _ = try await body()
        Issue.record("expected an error, got a result", sourceLocation: sourceLocation)
        return nil
    } catch let error as ServerAPIError {
        return error
    } catch {
        Issue.record("expected a ServerAPIError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
