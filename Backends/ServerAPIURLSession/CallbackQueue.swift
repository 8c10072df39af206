import Foundation

/// The session's delegate queue.
///
/// On Linux it runs each delegate callback at once, on the thread that hands it over:
/// FoundationNetworking cannot pause a transfer, and for every chunk libcurl receives it adds
/// an operation to the delegate queue and reads on. With an ordinary queue, a delegate that is
/// slower than the network (writing a 200 MB download to disk on a busy machine) lets the
/// chunks pile up in memory: the whole body, in tests. Run in place, the callback finishes
/// before libcurl reads more, so memory stays at one chunk and TCP flow control slows the
/// server. Making the adding thread wait instead does not work: every session of the process
/// shares that one thread, and tasks being created or resumed wait for it.
///
/// FoundationNetworking adds every callback from its own serial queue, so callbacks still run
/// one at a time and in order.
/// - Important: Callbacks, and the progress closures they call, must return quickly and never
///   wait for URLSession (creating or resuming a task does): they hold up every transfer.
// @unchecked: OperationQueue is a thread-safe class that is not marked Sendable; this subclass adds no state.
final class CallbackQueue: OperationQueue, @unchecked Sendable {
    init(name: String) {
        super.init()
        self.name = name
        maxConcurrentOperationCount = 1
    }

    #if canImport(FoundationNetworking)
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }
    #endif
}
