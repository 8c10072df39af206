import Foundation
@_spi(Backend) import ServerAPIKit

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// One request in flight on a `URLSessionTransport`: its task, its body, its download file,
/// its counters, and the one continuation it resumes.
///
/// A streamed call (`URLSessionTransport.stream`) resumes the continuation with the final head and a
/// `.stream` body; from then on the body's chunks go to the stream's source instead of `body`, and the
/// completion finishes the source (with the final metrics, or the error) instead of the continuation.
///
/// Task callbacks arrive one at a time, in order, on the callback queue. A failure decided
/// elsewhere (the Swift task was cancelled, the timeout fired) is recorded under the lock,
/// tears the connection down, and completes the transfer at once, unless a callback is
/// between its decision and its progress report: then that callback completes it when it
/// ends, so no report ever follows the completion.
final class Transfer: Sendable {
    private enum Phase {
        case ready, running, finished
    }

    private struct State {
        var phase = Phase.ready
        var request: TransportRequest
        var continuation: CheckedContinuation<TransportResponse, any Error>?
        var task: URLSessionTask?
        /// A failure decided outside the callbacks; the transfer completes with it.
        var pendingFailure: ServerAPIError?
        /// Fails the transfer once its total timeout has passed; cancelled when it completes, and for a
        /// streamed call when the head is delivered (the timeout bounds the time until the head).
        var timeout: (any DispatchSourceTimer)?
        /// A streamed call's body, once its head went to the caller: chunks go here, and the completion
        /// finishes it.
        var source: ResponseBodyStream.Source?
        /// Fails the transfer when it moves too slowly (see `watch`).
        var watchdog: Task<Void, Never>?
        /// Bytes sent and received so far, over every hop, for the watchdog.
        var moved: Int64 = 0
        var writer: DownloadFileWriter?
        /// The exchange's lifecycle (heads, redirects, body size, download decisions), as the core's rules say.
        /// FoundationNetworking asks before it follows a redirect (`redirect(_:to:task:reply:)`); a redirect
        /// that broke the rules fails the machine, and the task then ends with the 3xx.
        var exchange: ExchangeStateMachine
        var headers = HTTPHeaders()
        var responseURL: URL?
        var body = Data()
        var sent: Int64 = 0
        var bodyLength: Int64 = 0
        var firstByte: Duration?
        /// A callback is between deciding and reporting: completing now could put a report after the return.
        var inCallback = false
        /// A failure arrived during a callback, which completes the transfer when it ends.
        var completeAfterCallback = false
    }

    /// What a callback decided to do once the lock is released.
    private enum Action {
        case none
        case progress(TransferProgress)
        case complete(Result<TransportResponse, ServerAPIError>)
        case restart(old: URLSessionTask?, request: TransportRequest)
        /// A streamed call's head: the caller gets it now, the body follows through the source.
        case deliverHead(CheckedContinuation<TransportResponse, any Error>?, TransportResponse, TransferProgress)
        /// A streamed call's chunk, for the source.
        case yield(ResponseBodyStream.Source, Data, TransferProgress)
    }

    private let state: Locked<State>
    private let session: URLSession
    private let delegate: SessionDelegate
    private let control: DispatchQueue
    private let configuration: URLSessionTransport.Configuration
    private let progress: (@Sendable (TransferProgress) -> Void)?
    private let streamFailure = BodyInputStream.FailureBox()
    private let started = ContinuousClock.now
    private let id: RequestID
    private let originalURL: URL
    /// Whether the call is streamed: the head is delivered as soon as it arrives.
    private let streamed: Bool
    /// For a streamed call, the transport: its streamed body keeps it alive (its deinit invalidates the
    /// session, which would cancel the body), as `try await URLSessionTransport().stream(request)` expects.
    private let owner: URLSessionTransport?

    init(request: TransportRequest, transport: URLSessionTransport, streamed: Bool = false) throws(ServerAPIError) {
        self.streamed = streamed
        owner = streamed ? transport : nil
        session = transport.session
        delegate = transport.delegate
        control = transport.control
        configuration = transport.configuration
        progress = request.progress
        id = request.id
        originalURL = request.url
        let exchange = ExchangeStateMachine(
            download: request.download != nil, streamed: streamed, redirects: .askedByLibrary)
        var initial = State(request: request, exchange: exchange)
        initial.bodyLength = try request.body.contentLength()
        if let target = request.download {
            let writer = DownloadFileWriter(
                target: target, requestID: request.id, url: request.url,
                maxErrorBodySize: configuration.maxErrorBodySize)
            writer.prepare(&initial.request)
            initial.writer = writer
        }
        state = Locked(initial)
    }

    /// Bytes sent and received so far (the stall watchdog reads it).
    var bytesMoved: Int64 { state.withLock { $0.moved } }

    // MARK: Start and stop

    /// Starts the transfer, or resumes the continuation at once if it was cancelled before starting.
    func start(_ continuation: CheckedContinuation<TransportResponse, any Error>) {
        let outcome: Result<TransportRequest, ServerAPIError> = state.withLock { state in
            if let failure = state.pendingFailure {
                state.phase = .finished
                return .failure(failure)
            }
            state.continuation = continuation
            state.phase = .running
            let limit = state.request.timeout
            // A timer source, not a sleeping task (which would cost two jobs on the global executor per
            // call: starting to sleep, then waking up to be cancelled) nor `asyncAfter` with a work item
            // (cancelling the item leaves Dispatch's timer and the item's memory in place until the
            // deadline, ~700 bytes a call held for the whole timeout): a cancelled source is freed now.
            let timeout = DispatchSource.makeTimerSource(queue: .global())
            timeout.setEventHandler { [weak self] in
                self?.fail(.timedOut(after: limit), onlyBeforeHead: true)
            }
            delegate.track(timeout)
            timeout.schedule(deadline: .now() + Self.dispatchInterval(limit))
            timeout.resume()
            state.timeout = timeout
            if let stall = state.request.stallTimeout ?? configuration.stallTimeout {
                state.watchdog = Task { [weak self] in await self?.watch(stall) }
            }
            return .success(state.request)
        }
        switch outcome {
        case .success(let request):
            // Creating and resuming a task waits for FoundationNetworking's thread (see CallbackQueue).
            control.async { self.launch(request) }
        case .failure(let error):
            continuation.resume(throwing: error.with(requestID: id, url: originalURL))
        }
    }

    /// Ends the transfer with `error` as soon as possible, from any thread: the connection is
    /// torn down and the continuation resumed (or a streamed body finished) now, or when the running
    /// callback ends.
    /// - Parameters:
    ///   - error: Why.
    ///   - onlyBeforeHead: Do nothing once a streamed call's head went to the caller (the head timeout).
    func fail(_ error: ServerAPIError, onlyBeforeHead: Bool = false) {
        let (completeNow, task): (Bool, URLSessionTask?) = state.withLock { state in
            guard state.phase != .finished, state.pendingFailure == nil else { return (false, nil) }
            if onlyBeforeHead, state.source != nil { return (false, nil) }
            state.pendingFailure = error.with(requestID: id, url: originalURL)
            // During a callback, the callback completes the transfer when it ends (after its report).
            if state.inCallback { state.completeAfterCallback = true }
            // Not running yet: `start` finds the failure and resumes the continuation itself.
            return (state.phase == .running && !state.inCallback, state.task)
        }
        task.map(cancel)
        if completeNow { complete(nil) }
    }

    /// Completes the transfer once: with `result`, or with the pending failure when there is one.
    /// The writer is only touched under the lock, so this may run on any thread. After a streamed
    /// call's head, the body's source is finished instead of the continuation.
    private func complete(_ result: Result<TransportResponse, ServerAPIError>?) {
        typealias Ending = (
            continuation: CheckedContinuation<TransportResponse, any Error>?,
            outcome: Result<TransportResponse, ServerAPIError>, task: URLSessionTask?,
            source: ResponseBodyStream.Source?, metrics: TransportMetrics
        )
        let finished = state.withLock { state -> Ending? in
            guard state.phase == .running else { return nil }
            state.phase = .finished
            let outcome = state.pendingFailure.map { .failure($0) } ?? result ?? .failure(.cancelled())
            if case .failure = outcome { state.writer?.abandon() }
            state.writer = nil
            state.timeout?.cancel()
            state.timeout = nil
            state.watchdog?.cancel()
            state.watchdog = nil
            let continuation = state.continuation
            state.continuation = nil
            let source = state.source
            state.source = nil
            return (continuation, outcome, state.task, source, makeMetrics(state))
        }
        guard let (continuation, outcome, task, source, metrics) = finished else { return }
        if let task {
            delegate.unregister(task.taskIdentifier)
            if case .failure = outcome { cancel(task) }
        }
        switch outcome {
        case .success(let response):
            continuation?.resume(returning: response)
            source?.finish(metrics: response.metrics)
        case .failure(let error):
            let error = error.with(requestID: id, url: originalURL)
            continuation?.resume(throwing: error)
            source?.finish(throwing: error, metrics: metrics)
        }
    }

    // MARK: Callbacks (on the callback queue)

    func didReceive(_ response: URLResponse, task: URLSessionTask) {
        callback { state in
            guard isCurrent(task, in: state) else { return .none }
            guard let http = response as? HTTPURLResponse else {
                return .complete(.failure(ServerAPIError(.network, "the server's response is not HTTP")))
            }
            let headers = RequestConversion.headers(of: http)
            switch state.exchange.headReceived(status: http.statusCode, headers: headers, request: state.request) {
            case .interim, .dropBody, .ignore:
                return .none
            case .fail(let error):
                return .complete(.failure(error))
            case .receiveBody, .decideDownload:
                break
            }
            state.firstByte = state.firstByte ?? ContinuousClock.now - started
            state.headers = headers
            state.responseURL = http.url
            state.body = Data()
            if streamed { return deliverHead(&state) }
            guard let writer = state.writer else {
                return .progress(
                    TransferProgress(direction: .download, completed: 0, total: state.exchange.expectedLength))
            }
            do throws(ServerAPIError) {
                let disposition = try writer.receiveHead(status: http.statusCode, headers: headers)
                switch state.exchange.downloadDecided(disposition) {
                case .writeToFile, .keepInMemory:
                    return .progress(writer.progress)
                case .alreadyComplete:
                    // The body that follows says nothing: the exchange ends now, delivered as a 200.
                    let body = try writer.finish()
                    state.writer = nil
                    guard case .deliver(let status) = state.exchange.finished() else {
                        return .complete(.failure(ServerAPIError(.network, "the download ended unexpectedly")))
                    }
                    return .complete(.success(makeResponse(state, status: status, body: body)))
                case .restart:
                    // The old task is dropped rather than waited for: its end is this exchange's end.
                    _ = state.exchange.finished()
                    writer.prepare(&state.request)
                    let old = state.task
                    state.task = nil
                    return .restart(old: old, request: state.request)
                case .fail(let error):
                    return .complete(.failure(error))
                case .ignore:
                    return .none
                }
            } catch {
                state.exchange.failed(error)
                return .complete(.failure(error))
            }
        }
    }

    func didReceive(_ data: Data, task: URLSessionTask) {
        callback { state in
            guard isCurrent(task, in: state) else { return .none }
            switch state.exchange.bodyReceived(count: data.count) {
            case .drop:
                return .none
            case .fail(let error):
                state.moved += Int64(data.count)
                return .complete(.failure(error))
            case .write:
                state.moved += Int64(data.count)
                guard let writer = state.writer else { return .none }
                do throws(ServerAPIError) {
                    try writer.write(data)
                } catch {
                    state.exchange.failed(error)
                    return .complete(.failure(error))
                }
                return .progress(writer.progress)
            case .keep:
                state.moved += Int64(data.count)
                let report = TransferProgress(
                    direction: .download, completed: state.exchange.receivedBytes,
                    total: state.exchange.expectedLength)
                if let source = state.source { return .yield(source, data, report) }
                state.body.append(data)
                return .progress(report)
            }
        }
    }

    func didSend(_ bytes: Int64, task: URLSessionTask) {
        callback { state in
            guard isCurrent(task, in: state) else { return .none }
            // Counted here: task.countOfBytesSent and task.progress are not kept up to date on Linux.
            state.sent += bytes
            state.moved += bytes
            return .progress(TransferProgress(direction: .upload, completed: state.sent, total: state.bodyLength))
        }
    }

    /// Answers a redirect as `RedirectRule` decides: `reply` gets the request to follow it with, or `nil`
    /// to return the redirect as the response. `proposed` (FoundationNetworking's own rewrite) is not
    /// used: the next request is built from the decided `TransportRequest`, as the first one was.
    ///
    /// - Important: FoundationNetworking crashes when a redirect is answered after its task was
    ///   cancelled, so `reply` is called under the lock, only while the task is live; `fail`
    ///   cancels the task only after marking the transfer under the same lock. An unanswered
    ///   redirect is harmless: the cancellation completes the task.
    func redirect(
        _ response: HTTPURLResponse, to proposed: URLRequest, task: URLSessionTask,
        reply: @Sendable (URLRequest?) -> Void
    ) {
        state.withLock { state in
            guard state.phase == .running, state.pendingFailure == nil, state.task === task else { return }
            let decision = state.exchange.redirectReceived(
                status: response.statusCode, location: response.value(forHTTPHeaderField: "Location"),
                request: state.request,
                headers: state.request.cookies == nil ? [:] : RequestConversion.headers(of: response))
            let next: TransportRequest
            switch decision {
            case .deliver, .fail:
                // After `.fail`, not cancelled here (see above): the 3xx completes the task, which then fails.
                return reply(nil)
            case .follow(let request):
                next = request
            }
            // FoundationNetworking sends a redirected request without any body (it clears the task's
            // body before the next transfer): rather than send a POST/PUT with a wrong body, a redirect
            // that keeps the body (307, 308, 301/302 of a PUT or PATCH) is returned as the response.
            if (try? next.body.contentLength()) ?? 1 > 0 { return reply(nil) }
            let urlRequest: URLRequest
            do throws(ServerAPIError) {
                urlRequest = try RequestConversion.urlRequest(
                    for: next, configuration: configuration, failureBox: streamFailure, streamed: streamed)
            } catch {
                state.exchange.failed(error)
                return reply(nil)
            }
            state.exchange.redirectFollowed()
            state.request = next
            reply(urlRequest)
        }
    }

    /// Takes and releases the transfer's lock: what the callbacks wrote under it is then visible to the
    /// caller by an edge that ThreadSanitizer sees.
    func synchronize() {
        state.withLock { _ in }
    }

    /// A fresh stream over the request body, for when URLSession must send it again.
    func newBodyStream() -> InputStream? {
        let body = state.withLock { $0.request.body }
        guard let reader = try? body.makeReader() else { return nil }
        return BodyInputStream(reader: reader, failureBox: streamFailure)
    }

    /// A streamed call's final head arrived: the caller gets it with a `.stream` body now, and the head
    /// timeout stops applying. Under the lock.
    private func deliverHead(_ state: inout State) -> Action {
        // The stream holds its closures until it is released, and they hold the transport.
        let owner = self.owner
        let (stream, source) = ResponseBodyStream.makeStream(
            bufferSize: configuration.streamBufferSize,
            onResume: { [weak self] in self?.readerResumed() },
            onTermination: { [weak self] in
                withExtendedLifetime(owner) {}
                self?.fail(.cancelled("the streamed response was cancelled"))
            })
        state.source = source
        state.timeout?.cancel()
        state.timeout = nil
        let continuation = state.continuation
        state.continuation = nil
        let response = makeResponse(state, status: state.exchange.status, body: .stream(stream))
        return .deliverHead(
            continuation, response,
            TransferProgress(direction: .download, completed: 0, total: state.exchange.expectedLength))
    }

    /// The reader drained a buffer it had asked to pause. FoundationNetworking cannot pause a transfer
    /// (see `URLSessionTransport.stream`), so reading never stopped: nothing to restart.
    private func readerResumed() {}

    func didComplete(task: URLSessionTask, error: (any Error)?) {
        let result: Result<TransportResponse, ServerAPIError>? = state.withLock { state in
            guard isCurrent(task, in: state) else { return nil }
            let failure = error.map { error in
                streamFailure.error.withLock({ $0 })
                    ?? URLErrorMapping.map(
                        error, request: state.request, contentCoded: state.exchange.isContentCoded)
            }
            switch state.exchange.finished(failure: failure) {
            case .deliver(let status):
                var body = ResponseBody.data(state.body)
                if streamed, state.source == nil {
                    // The response ended without a head delivered (a 401 answered as it is): one chunk.
                    body = .stream(ResponseBodyStream(chunks: [state.body], metrics: makeMetrics(state)))
                }
                if let writer = state.writer {
                    do throws(ServerAPIError) {
                        body = try writer.finish()
                    } catch {
                        return .failure(error)
                    }
                    state.writer = nil
                }
                return .success(makeResponse(state, status: status, body: body))
            case .fail(let error):
                return .failure(error)
            case .follow, .restart, .ignore:
                // FoundationNetworking follows redirects itself, and a restart drops its task at the head.
                return .failure(ServerAPIError(.network, "the request completed in an unexpected state"))
            }
        }
        if let result { complete(result) }
    }

    // MARK: Helpers

    /// A duration as Dispatch's interval, in whole nanoseconds (capped far beyond any timeout).
    static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        guard seconds < 1 << 32 else { return .seconds(1 << 32) }
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    private func isCurrent(_ task: URLSessionTask, in state: State) -> Bool {
        state.phase == .running && state.pendingFailure == nil && state.task === task
    }

    /// Runs one task callback: `decide` under the lock, then its action outside it, then the
    /// completion a failure asked for while the callback ran.
    private func callback(_ decide: (inout State) -> Action) {
        let action: Action = state.withLock { state in
            let action = decide(&state)
            if case .none = action {} else { state.inCallback = true }
            return action
        }
        if case .none = action { return }
        perform(action)
        let completeNow = state.withLock { state -> Bool in
            state.inCallback = false
            defer { state.completeAfterCallback = false }
            return state.completeAfterCallback
        }
        if completeNow { complete(nil) }
    }

    private func perform(_ action: Action) {
        switch action {
        case .none:
            break
        case .progress(let report):
            progress?(report)
        case .complete(let result):
            complete(result)
        case .restart(let old, let request):
            old.map { delegate.unregister($0.taskIdentifier) }
            old.map(cancel)
            control.async { self.launch(request) }
        case .deliverHead(let continuation, let response, let report):
            continuation?.resume(returning: response)
            progress?(report)
        case .yield(let source, let data, let report):
            if source.yield(data) == .stopped {
                // The reader is gone: its onTermination fails the transfer too; this is in case it raced.
                fail(.cancelled("the streamed response's reader stopped before its end"))
                return
            }
            progress?(report)
        }
    }

    /// Creates the task for `request` and resumes it, unless the transfer ended meanwhile.
    private func launch(_ request: TransportRequest) {
        let task: URLSessionTask
        do {
            task = try makeTask(for: request)
        } catch {
            complete(.failure(error))
            return
        }
        let live = state.withLock { state -> Bool in
            guard state.phase == .running, state.pendingFailure == nil else { return false }
            state.task = task
            return true
        }
        if live {
            task.resume()
        } else {
            delegate.unregister(task.taskIdentifier)
            cancel(task)
        }
    }

    /// Cancels a task on the control queue: `URLSessionTask.cancel()` waits for
    /// FoundationNetworking's thread (see CallbackQueue).
    private func cancel(_ task: URLSessionTask) {
        control.async { task.cancel() }
    }

    private func makeTask(for request: TransportRequest) throws(ServerAPIError) -> URLSessionTask {
        // On the control queue, as the invalidation is: a redirect's new task after a shutdown is refused.
        if delegate.isInvalidated { throw ServerAPIError.cancelled("the transport was shut down") }
        let urlRequest = try RequestConversion.urlRequest(
            for: request, configuration: configuration, failureBox: streamFailure, streamed: streamed)
        let task = session.dataTask(with: urlRequest)
        delegate.register(task, for: self)
        return task
    }

    private func makeResponse(_ state: State, status: Int, body: ResponseBody) -> TransportResponse {
        var bytes = state.exchange.receivedBytes
        // A streamed body's bytes went to its source; `body` is then empty.
        if case .data(let data) = body, !streamed { bytes = Int64(data.count) }
        return TransportResponse(
            status: status, headers: state.headers, body: body, url: state.responseURL ?? state.request.url,
            metrics: makeMetrics(state, received: bytes))
    }

    /// What was measured so far.
    private func makeMetrics(_ state: State, received: Int64? = nil) -> TransportMetrics {
        TransportMetrics(
            transport: "urlsession", connected: nil, firstByte: state.firstByte,
            total: ContinuousClock.now - started, bytesSent: state.sent,
            bytesReceived: received ?? state.exchange.receivedBytes,
            reusedConnection: nil, redirects: state.exchange.redirects, httpVersion: nil)
    }
}
