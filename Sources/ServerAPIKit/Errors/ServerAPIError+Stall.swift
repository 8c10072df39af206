extension ServerAPIError {
    /// Whether the call timed out because its transfer stalled (see `StallTimeout`), rather than
    /// because it ran past its total or connect timeout.
    public var isStalled: Bool { stallTimeout != nil }

    /// The stall limit the transfer fell below, for a call that failed because it stalled.
    public var stallTimeout: StallTimeout? {
        guard kind == .timedOut else { return nil }
        return (underlying as? StallTimeout.Exceeded)?.limit
    }
}
