internal import CCurl
import Foundation
import ServerAPIKit
import Synchronization

/// The Sendable face of a transport's loop thread: the inbox other threads hand work to.
///
/// The loop thread (`CurlLoopRunner`) owns the multi handle; other threads only append to the
/// inbox and call `curl_multi_wakeup`, which libcurl documents as safe from any thread.
final class CurlLoop: Sendable {
    /// What other threads hand the loop, under the lock.
    struct Inbox {
        var jobs: [CurlJob] = []
        var cancellations: [UInt64] = []
        /// A wake-up is on its way: more work needs no second one.
        var wakePending = false
        /// The transport was released: the loop ends its transfers and stops.
        var shuttingDown = false
        /// The multi handle is being cleaned up: no more wake-ups.
        var closed = false
    }

    private let inbox = Locked(Inbox())
    /// Transfers whose easy handle is in the multi handle (or between redirects), for tests and diagnostics.
    let activeTransfers = Atomic<Int>(0)
    private let multi: CurlMultiHandle?
    /// Why the loop could not start, when it could not.
    private let startFailure: String?

    init(configuration: CurlTransport.Configuration, makeDownloadWriter: @escaping CurlDownloadWriterFactory) {
        if let failure = CurlGlobal.initializationFailure {
            multi = nil
            startFailure = "libcurl could not be initialised: \(failure)"
            return
        }
        guard let raw = curl_multi_init() else {
            multi = nil
            startFailure = "libcurl could not create a multi handle"
            return
        }
        let multi = CurlMultiHandle(raw: raw)
        self.multi = multi
        startFailure = nil
        let thread = Thread { [self] in
            CurlLoopRunner(
                loop: self, multi: multi, configuration: configuration, makeDownloadWriter: makeDownloadWriter
            ).run()
        }
        thread.name = "ServerAPIKit.curl"
        thread.start()
    }

    /// Hands a job to the loop, or fails it at once when its task is already cancelled.
    func submit(_ job: CurlJob) {
        let refusal: ServerAPIError? = inbox.withLock { inbox in
            if let startFailure { return ServerAPIError(.network, startFailure) }
            // Checked under the lock that `cancel` takes after setting the flag: either this sees the
            // flag, or `cancel` finds the job in the inbox.
            if job.control.isCancelled { return .cancelled() }
            if inbox.shuttingDown { return .cancelled("the transport was shut down") }
            inbox.jobs.append(job)
            wake(&inbox)
            return nil
        }
        if let refusal { job.fail(refusal) }
    }

    /// Cancels a job: resumes it at once if the loop has not taken it yet, else tells the loop.
    func cancel(_ control: CurlJobControl) {
        control.markCancelled()
        let waiting: CurlJob? = inbox.withLock { inbox in
            if let index = inbox.jobs.firstIndex(where: { $0.control === control }) {
                return inbox.jobs.remove(at: index)
            }
            // Not in the inbox: the loop has it, it has finished, or it was never submitted (then
            // `submit` sees the flag). The loop ignores ids it does not know.
            inbox.cancellations.append(control.id)
            wake(&inbox)
            return nil
        }
        waiting?.fail(.cancelled())
    }

    /// Asks the loop to end every transfer and stop; called when the transport is released.
    func shutDown() {
        inbox.withLock { inbox in
            inbox.shuttingDown = true
            wake(&inbox)
        }
    }

    /// Takes what arrived since the last call (loop thread only); `true` once the loop should stop.
    func takeWork(jobs: inout [CurlJob], cancellations: inout [UInt64]) -> Bool {
        inbox.withLock { inbox in
            swap(&jobs, &inbox.jobs)
            swap(&cancellations, &inbox.cancellations)
            inbox.wakePending = false
            return inbox.shuttingDown
        }
    }

    /// Closes the inbox for good before the multi handle is cleaned up (loop thread only).
    /// - Returns: Jobs that arrived too late to run.
    func close() -> [CurlJob] {
        inbox.withLock { inbox in
            inbox.closed = true
            inbox.shuttingDown = true
            defer { inbox.jobs = [] }
            return inbox.jobs
        }
    }

    private func wake(_ inbox: inout Inbox) {
        guard !inbox.wakePending, !inbox.closed, let multi else { return }
        inbox.wakePending = true
        _ = curl_multi_wakeup(multi.raw)
    }
}

/// A `CURLM *` that other threads may wake.
// @unchecked: other threads only pass it to curl_multi_wakeup (thread-safe by libcurl's contract), under
// the inbox lock and only while `Inbox.closed` is false; everything else uses it on the loop thread.
struct CurlMultiHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
}
