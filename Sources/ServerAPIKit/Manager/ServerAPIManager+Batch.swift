#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Several calls run at the same time, as one unit that can be cancelled by its id or tag.
///
/// Its `failurePolicy` is the one place that says what a failure does; `ServerAPIManager.send(_:)` and
/// `ServerAPIManager.results(of:)` only differ in how the outcome comes back (thrown, or one `Result` per call).
public struct BatchRequest: Sendable, Hashable {
    /// What a batch does when one of its calls fails, whichever method sends it.
    public enum FailurePolicy: Sendable, Hashable {
        /// The first failure cancels the other calls and is thrown.
        case failFast
        /// Every call runs to its end; each result or error is returned.
        case collectAll
    }

    /// The batch's id, for `cancel(id:)`.
    public var id: RequestID
    /// The batch's tag, for `cancel(tag:)`.
    public var tag: String?
    /// The calls, in the order their results are returned.
    public var calls: [ServerAPI]
    /// What a failure does.
    public var failurePolicy: FailurePolicy

    /// Creates a batch.
    public init(_ calls: [ServerAPI], tag: String? = nil, failurePolicy: FailurePolicy = .failFast) {
        self.id = RequestID.next()
        self.tag = tag
        self.calls = calls
        self.failurePolicy = failurePolicy
    }
}

/// Calls run one after the other, each built from the result of the one before.
public struct ChainRequest: Sendable {
    /// Builds the next call from the previous result; `nil` ends the chain.
    public typealias Step = @Sendable (ServerResult) throws -> ServerAPI?

    /// The chain's id, for `cancel(id:)`.
    public var id: RequestID
    /// The chain's tag, for `cancel(tag:)`.
    public var tag: String?
    /// The first call.
    public var first: ServerAPI
    /// The steps that build the following calls.
    public var steps: [Step]

    /// Creates a chain that starts with `first`.
    public init(_ first: ServerAPI, tag: String? = nil) {
        self.id = RequestID.next()
        self.tag = tag
        self.first = first
        self.steps = []
    }

    /// Returns the chain with one more step.
    public func then(_ step: @escaping Step) -> ChainRequest {
        var copy = self
        copy.steps.append(step)
        return copy
    }
}

extension ServerAPIManager {
    /// Runs a batch, every call at once, and returns the results or throws a failure.
    ///
    /// With `.failFast` (the default) the first failure cancels the rest and is thrown; with `.collectAll`
    /// every call runs to its end, then the first failed call's error (in call order) is thrown. To get
    /// every call's outcome instead, use `results(of:)`.
    ///
    /// The batch is in `inFlight` (as well as each of its calls), and `cancel(id:)` /
    /// `cancel(tag:)` with the batch's id or tag cancel all of it.
    /// - Returns: The results, in the order of `batch.calls`.
    /// - Throws: A failure as above; `cancelled` when the batch was cancelled.
    public func send(_ batch: BatchRequest) async throws -> [ServerResult] {
        let results = try await runGroup(id: batch.id, tag: batch.tag, kind: .batch) {
            try await self.runBatch(batch.calls, failFast: batch.failurePolicy == .failFast)
        }
        return try results.map { try $0.get() }
    }

    /// Runs a batch, every call at once, and returns each call's result or error, in order; never throws.
    ///
    /// The batch's `failurePolicy` applies as with `send(_:)`: with `.failFast` the calls still running at the
    /// first failure end with `cancelled`; with `.collectAll` every call runs to its end.
    public func results(of batch: BatchRequest) async -> [Result<ServerResult, ServerAPIError>] {
        do {
            return try await runGroup(id: batch.id, tag: batch.tag, kind: .batch) {
                try await self.runBatch(batch.calls, failFast: batch.failurePolicy == .failFast, throwing: false)
            }
        } catch {
            let failure = ServerAPIError.wrap(error)
            return batch.calls.map { _ in .failure(failure) }
        }
    }

    /// The former name of `results(of:)`.
    @available(*, deprecated, renamed: "results(of:)")
    public func sendAll(_ batch: BatchRequest) async -> [Result<ServerResult, ServerAPIError>] {
        await results(of: batch)
    }

    /// Runs a chain: each call after the first is built by a step from the previous result.
    ///
    /// The chain is in `inFlight` and can be cancelled as a whole by its id or tag.
    /// - Returns: Every call's result, in order.
    /// - Throws: The first failure (a step that throws ends the chain with its error, wrapped).
    public func send(_ chain: ChainRequest) async throws -> [ServerResult] {
        try await runGroup(id: chain.id, tag: chain.tag, kind: .chain) {
            var results = [try await self.send(chain.first)]
            for step in chain.steps {
                guard let next = try step(results[results.count - 1]) else { break }
                results.append(try await self.send(next))
            }
            return results
        }
    }

    private func runBatch(
        _ calls: [ServerAPI], failFast: Bool, throwing: Bool = true
    ) async throws -> [Result<ServerResult, ServerAPIError>] {
        try await withThrowingTaskGroup(of: (Int, Result<ServerResult, ServerAPIError>).self) { group in
            for (index, api) in calls.enumerated() {
                group.addTask {
                    // The tuple is made after the await, never across it: Swift 6.3's optimizer drops the part of an
                    // async tuple result written before a suspension, which made every index 0 (or garbage) in
                    // release builds (swiftlang/swift#91911; reproducer in notes/compiler-async-tuple-result.md).
                    let result: Result<ServerResult, ServerAPIError>
                    do { result = .success(try await self.send(api)) } catch { result = .failure(.wrap(error)) }
                    return (index, result)
                }
            }
            var results = [Result<ServerResult, ServerAPIError>?](repeating: nil, count: calls.count)
            var firstFailure: ServerAPIError?
            for try await (index, result) in group {
                results[index] = result
                if case .failure(let error) = result, failFast, firstFailure == nil {
                    firstFailure = error
                    group.cancelAll()
                }
            }
            if throwing, let firstFailure { throw firstFailure }
            return results.map { $0 ?? .failure(.cancelled()) }
        }
    }

    /// Runs work as one registry entry, so that it can be cancelled by id or tag like a call.
    func runGroup<T: Sendable>(
        id: RequestID, tag: String?, kind: InFlightRequest.Kind, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let call = Call(entry: id, tag: tag, url: nil, kind: kind, registry: registry)
        guard registry.add(call) else { throw refuseAfterShutdown(call) }
        defer { call.end(failed: false) }
        do {
            return try await call.run(body)
        } catch {
            throw ServerAPIError.wrap(error).with(requestID: id, url: nil)
        }
    }
}
