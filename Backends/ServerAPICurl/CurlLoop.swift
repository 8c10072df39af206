internal import CCurl
@_spi(Backend) @_spi(Transport) import ServerAPIKit
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Sendable face of a transport's loop thread: the inbox other threads hand work to.
///
/// The loop thread (`CurlLoopRunner`) owns the multi handle; other threads only append to the
/// inbox and signal the loop's `CurlWakeup`, a file descriptor the loop waits on besides libcurl's
/// own sockets (in its epoll set, or through `curl_multi_poll` where there is no epoll). The signal is sent after the inbox lock is released, so callers
/// never hold the lock across a system call (`curl_multi_wakeup` would need the lock, because
/// it must not race the multi handle's clean-up).
final class CurlLoop: Sendable {
    /// What other threads hand the loop, under the lock.
    struct Inbox {
        var jobs: [CurlJob] = []
        var cancellations: [UInt64] = []
        /// Paused transfers to resume: a streamed body's reader drained its buffer, or a streamed
        /// request body has bytes again.
        var resumptions: [CurlResumption] = []
        /// Tasks that prefer this loop or the transport's executor (see `CurlTransport.executor`), ready to run.
        var tasks: [CurlTask] = []
        /// A wake-up is on its way: more work needs no second one.
        var wakePending = false
        /// The transport was released or closed: the loop ends its transfers and stops.
        var shuttingDown = false
        /// The transport is shutting down with a grace period: new jobs are refused, those in flight go on.
        var draining = false
        /// Who waits for the loop to have no transfer (the transport's shutdown); resumed by the loop thread, or
        /// when the loop closes.
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// The multi handle is being cleaned up: no more wake-ups.
        var closed = false
        /// The transport's executor (its loops together), which tasks that prefer it run on; dropped when the
        /// loop closes, which ends the cycle between the two.
        var taskExecutor: CurlLoopExecutor?
    }

    private let inbox = Locked(Inbox())
    /// Whether the inbox may hold work the loop has not taken: set with the work, under the inbox's lock, and
    /// cleared by `takeWork` under it. The loop reads it without the lock between turns, so a turn with nothing
    /// new takes no lock (at one call in flight, the loop turns two or three times per request).
    private let mayHaveWork = Atomic<Bool>(false)
    /// What ends the loop's wait early; it lives as long as this object, so a late
    /// signal after the multi handle is gone is harmless.
    let wakeup: CurlWakeup?
    /// Transfers whose easy handle is in the multi handle (or between redirects), for tests and diagnostics.
    let activeTransfers = Atomic<Int>(0)
    /// How often streamed responses paused receiving for a full buffer, and resumed, for tests.
    let receivePauses = Atomic<Int>(0)
    let receiveResumes = Atomic<Int>(0)
    /// How many easy handles the loop has made, and how many it keeps idle, for tests.
    let handlesMade = Atomic<Int>(0)
    let idleHandles = Atomic<Int>(0)
    /// Why the loop could not start, when it could not.
    private let startFailure: String?
    /// The loop thread, once it runs: work handed over on it needs no wake-up.
    private let loopThread = Atomic<UInt>(0)

    init(
        configuration: CurlTransport.Configuration, altSvc: CurlAltSvcFile?, threads: CurlThreads,
        makeDownloadWriter: @escaping CurlDownloadWriterFactory
    ) {
        if let failure = CurlGlobal.initializationFailure {
            wakeup = nil
            startFailure = "libcurl could not be initialised: \(failure)"
            return
        }
        guard let wakeup = CurlWakeup() else {
            self.wakeup = nil
            startFailure = "the transport could not create its wake-up descriptor"
            return
        }
        self.wakeup = wakeup
        guard let multi = CurlMultiHandle() else {
            startFailure = "libcurl could not create a multi handle"
            return
        }
        startFailure = nil
        let refusal = threads.start(
            named: Self.threadName,
            body: { [self] in
                CurlLoopRunner(
                    loop: self, multi: multi, configuration: configuration, altSvc: altSvc,
                    makeDownloadWriter: makeDownloadWriter
                ).run()
            })
        if refusal != nil {
            // No thread (the process is out of them, or the transport is shutting down): every job is refused
            // instead of waiting forever.
            curl_multi_cleanup(multi.raw)
            inbox.withLock { inbox in
                inbox.shuttingDown = true
                inbox.closed = true
            }
        }
    }

    /// The loop thread's name.
    static let threadName = "ServerAPI.curl"

    /// Hands a job to the loop, or fails it at once when its task is already cancelled.
    func submit(_ job: CurlJob) {
        let (refusal, signal) = inbox.withLock { inbox -> (ServerAPIError?, Bool) in
            if let startFailure { return (ServerAPIError(.network, startFailure), false) }
            if inbox.shuttingDown || inbox.draining { return (Self.shutDownRefusal, false) }
            inbox.jobs.append(job)
            return (nil, needsWake(&inbox))
        }
        if signal { wake() }
        if let refusal {
            job.fail(refusal)
            return
        }
        // Read after the job is in the inbox, and not under its lock: a call (or task) marked cancelled before
        // this read is cancelled here; one marked after it runs its handler after the mark, and that `cancel`
        // finds the job in the inbox or the loop. A second cancel of the same job does nothing.
        if job.request.isCancelled { cancel(job.id) }
    }

    /// Cancels a job: resumes it at once if the loop has not taken it yet, else tells the loop.
    func cancel(_ id: UInt64) {
        let (waiting, signal) = inbox.withLock { inbox -> (CurlJob?, Bool) in
            if let index = inbox.jobs.firstIndex(where: { $0.id == id }) {
                return (inbox.jobs.remove(at: index), false)
            }
            // Not in the inbox: the loop has it, it has finished, or it was never submitted (then
            // `submit` sees the cancellation). The loop ignores ids it does not know.
            inbox.cancellations.append(id)
            return (nil, needsWake(&inbox))
        }
        if signal { wake() }
        waiting?.fail(.cancelled())
    }

    /// Asks the loop to resume a paused transfer (any thread): its streamed body's reader made room,
    /// or its streamed request body has bytes again. Ignored for a transfer that has ended.
    func resume(_ resumption: CurlResumption) {
        let signal = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.resumptions.append(resumption)
            return needsWake(&inbox)
        }
        if signal { wake() }
    }

    /// Sets the executor that the tasks this loop runs prefer (`CurlTransport.executor`), once. A loop
    /// that never ran keeps none: only `close` would drop it.
    func useTaskExecutor(_ executor: CurlLoopExecutor) {
        inbox.withLock { inbox in
            if startFailure == nil, !inbox.shuttingDown { inbox.taskExecutor = executor }
        }
    }

    /// Hands the loop a task to run on its thread (a task executor's `enqueue`).
    func enqueue(_ task: CurlTask) {
        let (accepted, signal) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.closed else { return (false, false) }
            inbox.tasks.append(task)
            return (true, needsWake(&inbox))
        }
        if signal { wake() }
        if !accepted { runElsewhere(task) }
    }

    /// Runs a task that prefers this loop once the loop has stopped for good: it still has to run
    /// somewhere, so it runs on the global executor.
    func runElsewhere(_ task: CurlTask) {
        Task.detached { task.job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// The transport's executor, which tasks enqueued through it run as (`nil` once the loop closed).
    var transportExecutor: CurlLoopExecutor? { inbox.withLock { $0.taskExecutor } }

    /// Marks the calling thread as the loop thread (loop thread only, once).
    func enteringLoopThread() { loopThread.store(Self.currentThread, ordering: .releasing) }

    /// Whether the caller is the loop thread.
    var isLoopThread: Bool { loopThread.load(ordering: .acquiring) == Self.currentThread }

    private static var currentThread: UInt {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())  // a pointer there
        #else
            UInt(pthread_self())  // an integer on Linux
        #endif
    }

    /// Ends the loop's poll, unless the caller is the loop thread itself, which looks at the inbox
    /// before it polls again.
    private func wake() {
        if !isLoopThread { wakeup?.signal() }
    }

    /// Whether work arrived since the last `takeWork` (loop thread only): then it must not sleep. Work from another
    /// thread that this misses has sent a wake-up, which ends the loop's wait.
    var hasWork: Bool { mayHaveWork.load(ordering: .acquiring) }

    /// Why a job is refused once the transport is shutting down or closed.
    static let shutDownRefusal = ServerAPIError(
        .shuttingDown, "the transport is shutting down: it takes no new requests")

    /// Refuses new jobs from now on; the transfers in flight go on (the transport's shutdown, in its grace period).
    func drain() {
        inbox.withLock { $0.draining = true }
    }

    /// Returns once the loop has no transfer in flight (at once when it has stopped).
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (ready, signal) = inbox.withLock { inbox -> (Bool, Bool) in
                if inbox.closed || startFailure != nil { return (true, false) }
                inbox.idleWaiters.append(continuation)
                return (false, needsWake(&inbox))
            }
            if signal { wake() }
            if ready { continuation.resume() }
        }
    }

    /// Asks the loop to end every transfer and stop; called when the transport is released or shut down.
    func shutDown() {
        let signal = inbox.withLock { inbox in
            inbox.shuttingDown = true
            return needsWake(&inbox)
        }
        if signal { wakeup?.signal() }
    }

    /// Takes what arrived since the last call (loop thread only); `true` once the loop should stop. The idle
    /// waiters are added to `idleWaiters`, for the loop to resume once it has no transfer.
    func takeWork(
        jobs: inout [CurlJob], cancellations: inout [UInt64], resumptions: inout [CurlResumption],
        tasks: inout [CurlTask], idleWaiters: inout [CheckedContinuation<Void, Never>]
    ) -> Bool {
        guard mayHaveWork.load(ordering: .acquiring) else { return false }
        return inbox.withLock { inbox in
            mayHaveWork.store(false, ordering: .relaxed)
            swap(&jobs, &inbox.jobs)
            swap(&cancellations, &inbox.cancellations)
            swap(&resumptions, &inbox.resumptions)
            swap(&tasks, &inbox.tasks)
            if !inbox.idleWaiters.isEmpty {
                idleWaiters.append(contentsOf: inbox.idleWaiters)
                inbox.idleWaiters = []
            }
            inbox.wakePending = false
            return inbox.shuttingDown
        }
    }

    /// Closes the inbox for good before the multi handle is cleaned up (loop thread only).
    /// - Returns: Jobs that arrived too late to run, tasks still waiting for the thread, and who waits for the loop
    ///   to be idle (it is, for good).
    func close() -> (jobs: [CurlJob], tasks: [CurlTask], idleWaiters: [CheckedContinuation<Void, Never>]) {
        inbox.withLock { inbox in
            inbox.closed = true
            inbox.shuttingDown = true
            defer {
                inbox.jobs = []
                inbox.tasks = []
                inbox.idleWaiters = []
                inbox.taskExecutor = nil
            }
            return (inbox.jobs, inbox.tasks, inbox.idleWaiters)
        }
    }

    /// Marks that work arrived (under the inbox's lock), and says whether the caller must signal the loop (once per
    /// batch of work, after releasing the lock).
    private func needsWake(_ inbox: inout Inbox) -> Bool {
        mayHaveWork.store(true, ordering: .releasing)
        guard !inbox.wakePending, !inbox.closed else { return false }
        inbox.wakePending = true
        return true
    }
}

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

private func suspend(_ body: (CurlContinuation.Base) -> Void) async throws -> TransportResponse {
    #if DEBUG
        try await withCheckedThrowingContinuation(body)
    #else
        try await withUnsafeThrowingContinuation(body)
    #endif
}

extension CurlLoop: TaskExecutor {
    /// Runs a job of a task that prefers this loop as its executor, on the loop thread.
    func enqueue(_ job: consuming ExecutorJob) {
        enqueue(CurlTask(job: UnownedJob(job), viaTransport: false))
    }
}

/// A task's job for a loop to run, and which executor it was enqueued on: it runs as that one. A task runs on
/// without hopping only while the executor it runs as is the one it prefers; one that prefers the loop (a
/// WebSocket's reader) run as the transport's executor would hop back through the loop's queue at each `await`.
struct CurlTask {
    let job: UnownedJob
    /// Enqueued on the transport's executor (`CurlLoopExecutor`), not on the loop itself.
    let viaTransport: Bool
}

/// A transport's loops as one task executor (`CurlTransport.executor`): a task that is resumed on a loop
/// thread (its transfer completed there) runs on that thread at once; one enqueued from elsewhere goes to
/// the first loop.
final class CurlLoopExecutor: TaskExecutor {
    private let loops: CurlLoopSet

    init(loops: CurlLoopSet) { self.loops = loops }

    func enqueue(_ job: consuming ExecutorJob) {
        let task = CurlTask(job: UnownedJob(job), viaTransport: true)
        (loops.current ?? loops.home).enqueue(task)
    }
}

/// A paused direction of a transfer to resume, or a WebSocket to look at, by job id.
enum CurlResumption: Sendable {
    /// The streamed response's reader drained its buffer: receive again.
    case receiving(UInt64)
    /// The streamed request body has bytes (or its end) ready: send again.
    case sending(UInt64)
    /// A WebSocket has frames to send, was closed, or its reader made room (`CurlWebSocket`).
    case webSocket(UInt64)
}

/// An eventfd (a pipe where there is none) other threads make readable to end the loop thread's wait (`epoll_wait`, or `curl_multi_poll`: what
/// `curl_multi_wakeup` does inside libcurl, but ours, so its lifetime is ours to decide). It is
/// non-blocking, so a signal never blocks the caller, and signals that pile up before the loop
/// drains them cost nothing more than one.
final class CurlWakeup: Sendable {
    /// The descriptor the loop polls.
    let readDescriptor: Int32
    private let writeDescriptor: Int32

    /// Opens the pipe; `nil` when the process is out of descriptors.
    init?() {
        #if os(Linux)
            // An eventfd: one descriptor, read and written by the same end.
            let descriptor = ccurl_eventfd()
            guard descriptor >= 0 else { return nil }
            readDescriptor = descriptor
            writeDescriptor = descriptor
        #else
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { return nil }
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
            readDescriptor = ends[0]
            writeDescriptor = ends[1]
        #endif
    }

    deinit {
        close(readDescriptor)
        if writeDescriptor != readDescriptor { close(writeDescriptor) }
    }

    /// Makes the descriptor readable (any thread). A full pipe is already readable.
    func signal() {
        // An eventfd takes an 8-byte count; a pipe, any byte.
        var count: UInt64 = 1
        _ = write(writeDescriptor, &count, MemoryLayout<UInt64>.size)
    }

    /// Reads every pending signal (loop thread), so the next poll sleeps again.
    func drain() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}

/// A `CURLM *` handed to the loop thread.
// @unchecked: only the loop thread uses it, after it is handed over at start.
struct CurlMultiHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer

    /// A new multi handle; `nil` when libcurl cannot make one.
    init?() {
        guard let raw = Self.make() else { return nil }
        self.raw = raw
    }

    /// `curl_multi_init`, with the multi handle's own internal easy handle (libcurl 8.11 and later) told not to
    /// touch signals, as ours are (`CURLOPT_NOSIGNAL`).
    ///
    /// libcurl copies `CURLOPT_NOSIGNAL` to that handle only when a handle is added. Until then, every
    /// `curl_multi_perform` installs a `SIGPIPE` handler for it and puts the old one back (three `sigaction` calls):
    /// a loop whose multi handle never had a transfer (one that only runs WebSockets) would pay that at every turn.
    /// A handle added and removed at once sets it. The process ignores `SIGPIPE` anyway (`CurlGlobal`, below).
    static func make() -> UnsafeMutableRawPointer? {
        guard let multi = curl_multi_init() else { return nil }
        if let easy = curl_easy_init() {
            _ = ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
            if curl_multi_add_handle(multi, easy) == CURLM_OK { _ = curl_multi_remove_handle(multi, easy) }
            curl_easy_cleanup(easy)
        }
        return multi
    }
}

/// The process-wide libcurl set-up, done once before the first multi handle is made.
enum CurlGlobal {
    /// The result of `curl_global_init`: `nil` when it succeeded, else libcurl's explanation.
    ///
    /// A `static let` is initialised exactly once, thread-safely, on first use, which is what
    /// `curl_global_init` (not thread-safe in every libcurl build) requires. It is never undone with
    /// `curl_global_cleanup`: other code in the process may be using libcurl too.
    static let initializationFailure: String? = {
        // Every easy handle sets CURLOPT_NOSIGNAL, so libcurl no longer shields us from SIGPIPE
        // when a peer closes a socket mid-write: ignore it for the whole process, as SwiftNIO does.
        _ = signal(SIGPIPE, SIG_IGN)
        let code = ccurl_global_init_all()
        guard code != CURLE_OK else { return nil }
        return String(cString: curl_easy_strerror(code))
    }()
}
