import Foundation

/// The session's serial delegate queue, with backpressure.
///
/// FoundationNetworking on Linux cannot pause a transfer: for every chunk libcurl receives it
/// adds an operation to the delegate queue and reads on. When the delegate (writing a download
/// to disk) falls behind the network, the chunks pile up in memory without bound; a 200 MB
/// download on a busy machine held all 200 MB. This queue makes the adding thread (the one
/// thread FoundationNetworking runs every session of the process on) wait while too many
/// callbacks are pending, so libcurl stops reading and TCP flow control slows the server.
///
/// Two things keep that wait from turning into a stall:
/// - The callbacks run on a serial dispatch queue of their own, which always gets a thread:
///   an ordinary operation queue runs on the CPU-bound global pool, which threads waiting for
///   FoundationNetworking can exhaust.
/// - No callback, and nothing of the transport's on the Swift concurrency pool, waits for
///   FoundationNetworking's thread: creating, resuming and cancelling tasks happens on the
///   transport's `control` queue (`URLSessionTask.cancel()` and `resume()` wait for that thread).
///
/// Running the callbacks in place on FoundationNetworking's thread would bound memory too,
/// but then a task that completes while it is being cancelled is removed from the session's
/// registry before the cancellation looks it up, and FoundationNetworking crashes.
/// The wait is also bounded in time, so even a callback that blocks only slows transfers down.
// @unchecked: OperationQueue is a thread-safe class that is not marked Sendable; the counter is guarded by `condition`.
final class CallbackQueue: OperationQueue, @unchecked Sendable {
    /// The most callbacks waiting before the adding thread has to wait (about 8 MB of 16 KB chunks).
    let maxPending: Int
    /// The longest the adding thread waits for room at a time, in seconds.
    let maxWait: TimeInterval

    private let condition = NSCondition()
    private var pending = 0
    // `underlyingQueue` is unowned: the queue keeps its dispatch queue alive itself.
    private let executor: DispatchQueue

    init(name: String, maxPending: Int = 512, maxWait: TimeInterval = 0.1) {
        self.maxPending = maxPending
        self.maxWait = maxWait
        // A serial queue created here gets a thread of its own when it has work.
        executor = DispatchQueue(label: name)
        super.init()
        self.name = name
        maxConcurrentOperationCount = 1
        underlyingQueue = executor
    }

    // The wait is for FoundationNetworking's piling up, described above. Apple's loader is another
    // implementation, whose thread must not be held up on a guess: there this is a plain serial queue.
    #if canImport(FoundationNetworking)
        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            condition.lock()
            if OperationQueue.current !== self {
                let deadline = Date(timeIntervalSinceNow: maxWait)
                while pending >= maxPending, condition.wait(until: deadline) {}
            }
            pending += 1
            condition.unlock()
            super.addOperation { [self] in
                block()
                condition.lock()
                pending -= 1
                condition.signal()
                condition.unlock()
            }
        }
    #endif
}
