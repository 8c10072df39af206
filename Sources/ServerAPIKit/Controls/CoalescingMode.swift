/// Whether a GET or HEAD call shares a transport call with identical calls in flight, as `ServerAPI.coalesced(_:)`
/// sets it.
package enum CoalescingMode: Sendable, Hashable {
    /// As the manager's `configuration.coalescesIdenticalRequests` says.
    case managerDefault
    /// Share: identical calls in flight at the same time make one transport call.
    case enabled
    /// Never share.
    case disabled
}
