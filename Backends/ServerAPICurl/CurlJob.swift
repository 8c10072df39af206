import ServerAPIKit
import Synchronization

/// One call handed from `CurlTransport.perform` to the loop thread: Sendable values only.
struct CurlJob: Sendable {
    /// Unique among the transport's calls (`nextID()`): how a cancellation finds the call's transfer.
    let id: UInt64
    /// The request, as the caller resolved it.
    let request: TransportRequest
    /// Resumed exactly once: by the loop thread, or by `CurlLoop` for a job the loop never took. A
    /// streamed call's is resumed as soon as the final response head has arrived.
    let continuation: CurlContinuation
    /// For `CurlTransport.stream`: how the body is streamed; `nil` for `perform`.
    var streaming: CurlStreaming? = nil
    /// For `CurlTransport.webSocket`: the socket the handshake opens; the continuation takes the handshake's answer.
    var webSocket: CurlWebSocket? = nil

    private static let ids = Atomic<UInt64>(0)

    /// A new job's id.
    static func nextID() -> UInt64 { ids.add(1, ordering: .relaxed).newValue }

    /// Resumes the caller with a failure, filling in the call's id and URL.
    func fail(_ error: ServerAPIError) {
        continuation.resume(throwing: error.with(requestID: request.id, url: request.url))
    }
}

/// What a streamed call needs besides the request.
struct CurlStreaming: Sendable {
    /// The bytes the body's stream buffers before the transfer pauses.
    let bufferSize: Int
    /// The transport, kept alive by the body's stream while the body is read.
    let owner: CurlTransport
}

// Debug builds (the tests) check that every continuation is resumed exactly once; release builds
// skip the check's allocation and bookkeeping on every call.
#if DEBUG
    typealias CurlContinuation = CheckedContinuation<TransportResponse, any Error>

    func withCurlContinuation(
        _ body: (CurlContinuation) -> Void
    ) async throws -> TransportResponse {
        try await withCheckedThrowingContinuation(body)
    }
#else
    typealias CurlContinuation = UnsafeContinuation<TransportResponse, any Error>

    func withCurlContinuation(
        _ body: (CurlContinuation) -> Void
    ) async throws -> TransportResponse {
        try await withUnsafeThrowingContinuation(body)
    }
#endif
