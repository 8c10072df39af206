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

/// The caller's continuation, resumed exactly once: by the loop thread, or by `CurlLoop` for a job the loop never
/// took. Under ThreadSanitizer it also publishes what the loop made before the resume (the response, a streamed
/// body's storage): the runtime orders a resume before the caller goes on with atomics the tool does not see, and a
/// continuation resumed before its task suspended lets the task go on at once. `Locked` tells the tool about its
/// lock in the same manner.
struct CurlContinuation: Sendable {
    // Debug builds (the tests) check that every continuation is resumed exactly once; release builds skip the
    // check's allocation and bookkeeping on every call.
    #if DEBUG
        fileprivate typealias Base = CheckedContinuation<TransportResponse, any Error>
    #else
        fileprivate typealias Base = UnsafeContinuation<TransportResponse, any Error>
    #endif

    fileprivate let base: Base
    /// The address ThreadSanitizer orders the hand-off on (`withCurlContinuation` owns it); 0 without the tool.
    fileprivate let token: UInt

    func resume(returning response: TransportResponse) {
        publish()
        base.resume(returning: response)
    }

    func resume(throwing error: any Error) {
        publish()
        base.resume(throwing: error)
    }

    private func publish() {
        if token != 0 { ThreadSanitizerHooks.happensBefore?(nil, 0, UnsafeMutableRawPointer(bitPattern: token)) }
    }
}

/// Suspends the caller until the loop resumes the continuation `body` hands it.
func withCurlContinuation(_ body: (CurlContinuation) -> Void) async throws -> TransportResponse {
    guard let happensAfter = ThreadSanitizerHooks.happensAfter else {
        return try await suspend { body(CurlContinuation(base: $0, token: 0)) }
    }
    let token = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
    defer {
        happensAfter(nil, 0, token)
        token.deallocate()
    }
    return try await suspend { body(CurlContinuation(base: $0, token: UInt(bitPattern: token))) }
}

#if DEBUG
    private func suspend(_ body: (CurlContinuation.Base) -> Void) async throws -> TransportResponse {
        try await withCheckedThrowingContinuation(body)
    }
#else
    private func suspend(_ body: (CurlContinuation.Base) -> Void) async throws -> TransportResponse {
        try await withUnsafeThrowingContinuation(body)
    }
#endif
