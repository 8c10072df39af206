#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The timeline of a call as instants, and the transport's figures for its last attempt.
extension RequestMetrics {
    /// When the manager had the response (or the failure) in hand; `queuedAt` plus `duration`
    /// for metrics made without a manager.
    public var finishedAt: Date { endedAt ?? queuedAt.addingTimeInterval(duration.seconds) }

    /// How long the call waited between being accepted and its first attempt (plugins' `prepare`
    /// included); zero for a result that came from the cache.
    public var queueTime: Duration { .seconds(max(0, startedAt.timeIntervalSince(queuedAt))) }

    /// When the last attempt's connection was ready, when the transport measured it.
    public var connectedAt: Date? { instant(after: transport?.connected) }

    /// When the last attempt's first response byte arrived, when the transport measured it.
    public var firstByteAt: Date? { instant(after: transport?.firstByte) }

    /// Body bytes the last attempt sent.
    public var bytesSent: Int64 { transport?.bytesSent ?? 0 }

    /// Body bytes the last attempt received.
    public var bytesReceived: Int64 { transport?.bytesReceived ?? 0 }

    /// Whether the last attempt reused a connection, when the transport knows.
    public var reusedConnection: Bool? { transport?.reusedConnection }

    /// The name of the transport that made the last attempt (`"cache"` for a cached result), when one did.
    public var transportName: String? { transport.map(\.transport) }

    /// Records that an attempt is being handed to the transport now; what the transport measured
    /// about an earlier attempt no longer describes the last one.
    mutating func markAttemptStart(at now: Date = Date()) {
        if attemptStartedAt == nil { startedAt = now }
        attemptStartedAt = now
        transport = nil
        status = nil
    }

    private func instant(after offset: Duration?) -> Date? {
        guard let offset, let attemptStartedAt else { return nil }
        return attemptStartedAt.addingTimeInterval(offset.seconds)
    }
}
