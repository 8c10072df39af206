import Foundation
@_spi(Backend) import ServerAPIKit
import Synchronization

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// The session's one delegate: hands every task callback to the `Transfer` that owns the task.
///
/// A session-level *data* delegate, not a download delegate and not per-task delegates: on
/// Linux a per-task download delegate writes the body twice and a session-level download
/// delegate leaves its temporary file behind, so transfers write files themselves.
// @unchecked: NSObject is not Sendable; the only state is the Mutex-protected table.
final class SessionDelegate: NSObject, URLSessionDataDelegate, URLSessionWebSocketDelegate, @unchecked Sendable {
    /// The tasks FoundationNetworking was given and has not completed yet (its `didCompleteWithError` is the end).
    private let started = Locked<Set<Int>>([])

    /// The task of each routed call, with the transfer its callbacks go to, by task identifier.
    private let transfers = Locked<[Int: (task: URLSessionTask, transfer: Transfer)]>([:])
    private let control: DispatchQueue

    /// Creates the delegate.
    /// - Parameter control: The transport's queue for calls that wait for FoundationNetworking's thread.
    init(control: DispatchQueue) {
        self.control = control
    }

    /// Routes the callbacks of `task` to `transfer`.
    func register(_ task: URLSessionTask, for transfer: Transfer) {
        transfers.withLock { $0[task.taskIdentifier] = (task, transfer) }
        _ = started.withLock { $0.insert(task.taskIdentifier) }
    }

    /// The WebSocket of each WebSocket task, by task identifier.
    private let webSockets = Locked<[Int: URLSessionWebSocket]>([:])

    /// Routes the callbacks of a WebSocket task to its connection.
    func register(_ task: URLSessionWebSocketTask, for webSocket: URLSessionWebSocket) {
        webSockets.withLock { $0[task.taskIdentifier] = webSocket }
        _ = started.withLock { $0.insert(task.taskIdentifier) }
    }

    /// Stops routing the callbacks of a task.
    func unregister(_ taskIdentifier: Int) {
        _ = transfers.withLock { $0.removeValue(forKey: taskIdentifier) }
        _ = webSockets.withLock { $0.removeValue(forKey: taskIdentifier) }
        if registeredCount == 0 { resumeIdleWaiters() }
    }

    /// Who waits for no task to be routed any more (the transport's shutdown).
    private let idleWaiters = Locked<[CheckedContinuation<Void, Never>]>([])

    /// Returns once no task is routed to a transfer or a WebSocket (at once when none is).
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Listed before the count is read: a task unregistered meanwhile finds it, or the count is 0 here.
            idleWaiters.withLock { $0.append(continuation) }
            if registeredCount == 0 { resumeIdleWaiters() }
        }
    }

    private func resumeIdleWaiters() {
        let waiters = idleWaiters.withLock { waiters in
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The WebSockets open now: what the transport's shutdown closes.
    var registeredWebSockets: [URLSessionWebSocket] { webSockets.withLock { Array($0.values) } }

    /// Whether the session was invalidated (on the control queue): no task may be made any more, since a task made
    /// on an invalidated session traps.
    private let invalidated = Locked(false)

    /// Whether the session was invalidated.
    var isInvalidated: Bool { invalidated.withLock { $0 } }

    /// Marks the session invalidated (on the control queue, right before invalidating it).
    /// - Returns: `false` when it was already.
    func markInvalidated() -> Bool {
        invalidated.withLock { invalidated in
            defer { invalidated = true }
            return !invalidated
        }
    }

    /// How many tasks are routed to a transfer or a WebSocket now.
    var registeredCount: Int { transfers.withLock { $0.count } + webSockets.withLock { $0.count } }

    /// How many tasks FoundationNetworking was given and has not completed.
    var unfinishedCount: Int { started.withLock { $0.count } }

    /// The tasks routed to a transfer now: what releasing the transport cancels, from this table rather than
    /// FoundationNetworking's own, which `getAllTasks` and `invalidateAndCancel` read off its work queue.
    var registeredTasks: [URLSessionTask] { transfers.withLock { $0.values.map(\.task) } }

    /// Transfers' timeout timers scheduled and not yet cancelled: every transfer cancels its timer when
    /// it completes (or, streamed, when the head arrives), so this returns to 0 once calls have ended.
    var pendingTimerCount: Int { pendingTimers.load(ordering: .relaxed) }
    private let pendingTimers = Atomic<Int>(0)

    /// Counts a transfer's timeout timer from its scheduling until its cancellation handler runs.
    func track(_ timer: any DispatchSourceTimer) {
        pendingTimers.add(1, ordering: .relaxed)
        timer.setCancelHandler { [self] in pendingTimers.subtract(1, ordering: .relaxed) }
    }

    private func transfer(for task: URLSessionTask) -> Transfer? {
        transfers.withLock { $0[task.taskIdentifier]?.transfer }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // FoundationNetworking on Linux ignores the disposition; transfers cancel the task instead.
        completionHandler(.allow)
        transfer(for: dataTask)?.didReceive(response, task: dataTask)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(for: dataTask)?.didReceive(data, task: dataTask)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        transfer(for: task)?.didSend(bytesSent, task: task)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // No transfer: the task was cancelled or replaced. Answering a cancelled task's redirect
        // crashes FoundationNetworking ("not waiting for it"), so it is left unanswered.
        transfer(for: task)?.redirect(response, to: request, task: task, reply: completionHandler)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        // InputStream is not Sendable, but FoundationNetworking only reads it on the task's own queue.
        nonisolated(unsafe) let stream = transfer(for: task)?.newBodyStream()
        completionHandler(stream)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
            guard challenge.failureResponse != nil, let transfer = transfer(for: task) else {
                return completionHandler(.performDefaultHandling, nil)
            }
            // A 401 with WWW-Authenticate: on Linux the task waits forever for credentials unless the
            // challenge is cancelled (swift-corelibs-foundation#5456). Authentication is the caller's
            // business (headers, plugins), so the 401 is returned as the response it is.
            unregister(task.taskIdentifier)
            transfer.didComplete(task: task, error: nil)
            // Cancelling the challenge cancels the task, which waits for FoundationNetworking's thread.
            control.async { completionHandler(.cancelAuthenticationChallenge, nil) }
        #else
            // Apple's loader asks before the 401 is delivered: cancelling would end the task without a
            // response. Default handling is what it does with no delegate: no credentials are stored (the
            // session is ephemeral), so the 401 arrives as the response it is; server trust is evaluated
            // by the system.
            completionHandler(.performDefaultHandling, nil)
        #endif
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?
    ) {
        webSockets.withLock { $0[webSocketTask.taskIdentifier] }?.opened(webSocketTask, subprotocol: `protocol`)
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        // The close code and reason are read off the task when its last receive fails (URLSessionWebSocket).
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        _ = started.withLock { $0.remove(task.taskIdentifier) }
        let transfer = transfer(for: task)
        let webSocket = webSockets.withLock { $0[task.taskIdentifier] }
        unregister(task.taskIdentifier)
        transfer?.didComplete(task: task, error: error)
        webSocket?.completed(task, error: error)
    }
}
