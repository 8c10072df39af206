import Foundation
import ServerAPIKit
import Synchronization

#if canImport(FoundationNetworking)
internal import FoundationNetworking
#endif

/// One request in flight on a `URLSessionTransport`: its task, its body, its download file,
/// its counters, and the one continuation it resumes.
///
/// Every task callback arrives on the transport's serial callback queue, and the transfer
/// completes only there, so no progress report can follow the completion. A failure decided
/// elsewhere (the Swift task was cancelled, the timeout fired) is recorded under the lock at
/// once, tears the connection down at once, and completes through the callback queue.
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
        var timeout: Task<Void, Never>?
        var writer: DownloadFileWriter?
        var status = 0
        var headers = HTTPHeaders()
        var responseURL: URL?
        var body = Data()
        /// Body bytes of the current response, decoded.
        var received: Int64 = 0
        /// The current response's announced body length, when it is the decoded length.
        var expectedLength: Int64?
        var sent: Int64 = 0
        var bodyLength: Int64 = 0
        var redirects = 0
        var firstByte: Duration?
        var restarts = 0
    }

    /// What a callback decided to do once the lock is released.
    private enum Action {
        case none
        case progress(TransferProgress)
        case complete(Result<TransportResponse, ServerAPIError>)
        case restart(old: URLSessionTask?, new: URLSessionTask)
    }

    private let state: Mutex<State>
    private let session: URLSession
    private let delegate: SessionDelegate
    private let callbackQueue: OperationQueue
    private let configuration: URLSessionTransport.Configuration
    private let progress: (@Sendable (TransferProgress) -> Void)?
    private let streamFailure = BodyInputStream.FailureBox()
    private let started = ContinuousClock.now
    private let id: RequestID
    private let originalURL: URL

    init(request: TransportRequest, transport: URLSessionTransport) throws(ServerAPIError) {
        session = transport.session
        delegate = transport.delegate
        callbackQueue = transport.callbackQueue
        configuration = transport.configuration
        progress = request.progress
        id = request.id
        originalURL = request.url
        var initial = State(request: request)
        initial.bodyLength = try request.body.contentLength()
        if let target = request.download {
            let writer = DownloadFileWriter(
                target: target, requestID: request.id, url: request.url,
                maxErrorBodySize: configuration.maxErrorBodySize)
            writer.prepare(&initial.request)
            initial.writer = writer
        }
        state = Mutex(initial)
    }

    // MARK: Start and stop

    /// Starts the transfer, or resumes the continuation at once if it was cancelled before starting.
    func start(_ continuation: CheckedContinuation<TransportResponse, any Error>) {
        let outcome: Result<URLSessionTask, ServerAPIError> = state.withLock { state in
            if let failure = state.pendingFailure {
                state.phase = .finished
                return .failure(failure)
            }
            do throws(ServerAPIError) {
                let task = try makeTask(for: state.request)
                state.continuation = continuation
                state.phase = .running
                state.task = task
                let limit = state.request.timeout
                state.timeout = Task { [weak self] in
                    guard (try? await Task.sleep(for: limit)) != nil else { return }
                    self?.fail(ServerAPIError(.timedOut, "the request timed out after \(Self.describe(limit))"))
                }
                return .success(task)
            } catch {
                state.phase = .finished
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let task): task.resume()
        case .failure(let error): continuation.resume(throwing: error.with(requestID: id, url: originalURL))
        }
    }

    /// Ends the transfer with `error` as soon as possible, from any thread: the connection is
    /// torn down now and the continuation resumed from the callback queue.
    func fail(_ error: ServerAPIError) {
        let task: URLSessionTask? = state.withLock { state in
            guard state.phase != .finished, state.pendingFailure == nil else { return nil }
            state.pendingFailure = error.with(requestID: id, url: originalURL)
            return state.task
        }
        guard let task else { return }
        task.cancel()
        callbackQueue.addOperation { self.complete(nil) }
    }

    /// Completes the transfer once: with `result`, or with the pending failure when there is one.
    /// Runs on the callback queue (or in `start`, before any task exists).
    private func complete(_ result: Result<TransportResponse, ServerAPIError>?) {
        let finished = state.withLock { state -> (CheckedContinuation<TransportResponse, any Error>?, Result<TransportResponse, ServerAPIError>, URLSessionTask?)? in
            guard state.phase == .running else { return nil }
            state.phase = .finished
            let outcome = state.pendingFailure.map { .failure($0) } ?? result ?? .failure(.cancelled())
            if case .failure = outcome { state.writer?.abandon() }
            state.writer = nil
            state.timeout?.cancel()
            state.timeout = nil
            let continuation = state.continuation
            state.continuation = nil
            return (continuation, outcome, state.task)
        }
        guard let (continuation, outcome, task) = finished else { return }
        if let task {
            delegate.unregister(task.taskIdentifier)
            if case .failure = outcome { task.cancel() }
        }
        switch outcome {
        case .success(let response): continuation?.resume(returning: response)
        case .failure(let error): continuation?.resume(throwing: error.with(requestID: id, url: originalURL))
        }
    }

    // MARK: Callbacks (on the callback queue)

    func didReceive(_ response: URLResponse, task: URLSessionTask) {
        let action: Action = state.withLock { state in
            guard isCurrent(task, in: state) else { return .none }
            guard let http = response as? HTTPURLResponse else {
                return .complete(.failure(ServerAPIError(.network, "the server's response is not HTTP")))
            }
            state.firstByte = state.firstByte ?? ContinuousClock.now - started
            state.status = http.statusCode
            state.headers = Self.headers(of: http)
            state.responseURL = http.url
            state.body = Data()
            state.received = 0
            state.expectedLength = Self.decodedLength(state.headers)
            if let limit = state.request.maxResponseSize, let length = Self.announcedLength(state.headers),
                length > limit
            {
                return .complete(.failure(Self.tooLarge(length, limit: limit, status: http.statusCode)))
            }
            guard let writer = state.writer else {
                return .progress(TransferProgress(direction: .download, completed: 0, total: state.expectedLength))
            }
            do throws(ServerAPIError) {
                switch try writer.receiveHead(status: http.statusCode, headers: state.headers) {
                case .file, .memory:
                    return .progress(writer.progress)
                case .alreadyComplete:
                    let body = try writer.finish()
                    state.writer = nil
                    state.status = 200
                    return .complete(.success(makeResponse(state, body: body)))
                case .restart:
                    state.restarts += 1
                    writer.prepare(&state.request)
                    let replacement = try makeTask(for: state.request)
                    let old = state.task
                    state.task = replacement
                    return .restart(old: old, new: replacement)
                }
            } catch {
                return .complete(.failure(error))
            }
        }
        perform(action)
    }

    func didReceive(_ data: Data, task: URLSessionTask) {
        let action: Action = state.withLock { state in
            guard isCurrent(task, in: state) else { return .none }
            state.received += Int64(data.count)
            if let limit = state.request.maxResponseSize, state.received > limit {
                return .complete(.failure(Self.tooLarge(state.received, limit: limit, status: state.status)))
            }
            if let writer = state.writer {
                do throws(ServerAPIError) {
                    try writer.write(data)
                } catch {
                    return .complete(.failure(error))
                }
                return .progress(writer.progress)
            }
            state.body.append(data)
            return .progress(TransferProgress(direction: .download, completed: state.received, total: state.expectedLength))
        }
        perform(action)
    }

    func didSend(_ bytes: Int64, task: URLSessionTask) {
        let action: Action = state.withLock { state in
            guard isCurrent(task, in: state) else { return .none }
            // Counted here: task.countOfBytesSent and task.progress are not kept up to date on Linux.
            state.sent += bytes
            return .progress(TransferProgress(direction: .upload, completed: state.sent, total: state.bodyLength))
        }
        perform(action)
    }

    /// The request to follow a redirect with, or `nil` to return the redirect as the response.
    func redirect(_ response: HTTPURLResponse, to proposed: URLRequest, task: URLSessionTask) -> URLRequest? {
        let decision: (URLRequest?, ServerAPIError?) = state.withLock { state in
            guard isCurrent(task, in: state) else { return (nil, nil) }
            let maxRedirects = state.request.redirects.maxRedirects
            guard maxRedirects > 0, var next = proposed.url.map({ _ in proposed }), let target = next.url else {
                return (nil, nil)
            }
            guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                return (nil, ServerAPIError(.network, "the server redirected to \(target.absoluteString), which is not http(s)"))
            }
            let method = (next.httpMethod ?? "GET").uppercased()
            let keepsBody = method != "GET" && method != "HEAD"
            if keepsBody && state.bodyLength > 0 {
                // FoundationNetworking re-sends a redirected request without its body; rather than
                // send a POST/PUT with a wrong body, the redirect is returned as the response.
                return (nil, nil)
            }
            state.redirects += 1
            if state.redirects > maxRedirects {
                return (nil, ServerAPIError(
                    .tooManyRedirects, "the request was redirected more than \(maxRedirects) times",
                    status: response.statusCode))
            }
            if !keepsBody {
                for name in ["Content-Length", "Content-Type", "Transfer-Encoding"] {
                    next.setValue(nil, forHTTPHeaderField: name)
                }
                next.httpBodyStream = nil
            }
            let from = response.url ?? state.responseURL ?? state.request.url
            if !Self.sameOrigin(from, target) {
                // Credentials are for the host they were given to.
                for name in ["Authorization", "Cookie", "Proxy-Authorization"] {
                    next.setValue(nil, forHTTPHeaderField: name)
                }
            }
            return (next, nil)
        }
        if let failure = decision.1 { complete(.failure(failure)) }
        return decision.0
    }

    /// A fresh stream over the request body, for when URLSession must send it again.
    func newBodyStream() -> InputStream? {
        let body = state.withLock { $0.request.body }
        guard let reader = try? body.makeReader() else { return nil }
        return BodyInputStream(reader: reader, failureBox: streamFailure)
    }

    func didComplete(task: URLSessionTask, error: (any Error)?) {
        let result: Result<TransportResponse, ServerAPIError>? = state.withLock { state in
            guard isCurrent(task, in: state) else { return nil }
            if let error {
                if let failure = streamFailure.error.withLock({ $0 }) { return .failure(failure) }
                return .failure(URLErrorMapping.map(error, request: state.request))
            }
            guard state.status != 0 else {
                return .failure(ServerAPIError(.network, "the request completed without a response"))
            }
            var body = ResponseBody.data(state.body)
            if let writer = state.writer {
                do throws(ServerAPIError) {
                    body = try writer.finish()
                } catch {
                    return .failure(error)
                }
                state.writer = nil
            }
            return .success(makeResponse(state, body: body))
        }
        if let result { complete(result) }
    }

    // MARK: Helpers

    private func isCurrent(_ task: URLSessionTask, in state: State) -> Bool {
        state.phase == .running && state.pendingFailure == nil && state.task === task
    }

    private func perform(_ action: Action) {
        switch action {
        case .none:
            break
        case .progress(let report):
            progress?(report)
        case .complete(let result):
            complete(result)
        case .restart(let old, let new):
            old.map { delegate.unregister($0.taskIdentifier) }
            old?.cancel()
            new.resume()
        }
    }

    private func makeTask(for request: TransportRequest) throws(ServerAPIError) -> URLSessionTask {
        let urlRequest = try makeURLRequest(request)
        let task = session.dataTask(with: urlRequest)
        delegate.register(task, for: self)
        return task
    }

    private func makeURLRequest(_ request: TransportRequest) throws(ServerAPIError) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.httpShouldHandleCookies = configuration.handlesCookies
        // FoundationNetworking's timeoutInterval is an inactivity timer in whole seconds (0.5 would be 0 ms);
        // the total timeout is enforced by the transfer's own timer, which this one must not beat.
        let idle = configuration.idleTimeout ?? request.timeout + .seconds(1)
        urlRequest.timeoutInterval = max(1, (Self.seconds(idle)).rounded(.up))
        var seen = Set<String>()
        for field in request.headers {
            if seen.insert(field.name.lowercased()).inserted {
                urlRequest.setValue(field.value, forHTTPHeaderField: field.name)
            } else {
                // URLRequest keeps one field per name: repeated headers are sent comma-joined (RFC 9110 §5.3).
                urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
            }
        }
        switch request.body {
        case .empty:
            break
        case .data(let data):
            urlRequest.httpBody = data
        case .file, .segments:
            if let bytes = request.body.inMemoryBytes {
                urlRequest.httpBody = bytes
            } else {
                if !request.headers.contains("Content-Length") {
                    urlRequest.setValue(String(try request.body.contentLength()), forHTTPHeaderField: "Content-Length")
                }
                urlRequest.httpBodyStream = BodyInputStream(reader: try request.body.makeReader(), failureBox: streamFailure)
            }
        }
        return urlRequest
    }

    private func makeResponse(_ state: State, body: ResponseBody) -> TransportResponse {
        let bytes: Int64
        switch body {
        case .data(let data): bytes = Int64(data.count)
        case .file: bytes = state.received
        }
        return TransportResponse(
            status: state.status, headers: state.headers, body: body, url: state.responseURL ?? state.request.url,
            metrics: TransportMetrics(
                transport: "urlsession", connected: nil, firstByte: state.firstByte,
                total: ContinuousClock.now - started, bytesSent: state.sent, bytesReceived: bytes,
                reusedConnection: nil, redirects: state.redirects, httpVersion: nil))
    }

    private static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var pairs: [(String, String)] = []
        for (name, value) in response.allHeaderFields {
            pairs.append((String(describing: name), String(describing: value)))
        }
        // The session hands headers over as a dictionary: sort them so the order is at least stable.
        pairs.sort { $0.0.lowercased() < $1.0.lowercased() }
        return HTTPHeaders(pairs)
    }

    private static func announcedLength(_ headers: HTTPHeaders) -> Int64? {
        headers["Content-Length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// The announced length when it is the length of the body as delivered (not gzip-encoded).
    private static func decodedLength(_ headers: HTTPHeaders) -> Int64? {
        if let encoding = headers["Content-Encoding"], encoding.lowercased() != "identity" { return nil }
        return announcedLength(headers)
    }

    private static func tooLarge(_ bytes: Int64, limit: Int64, status: Int) -> ServerAPIError {
        ServerAPIError(
            .responseTooLarge, "the response is \(bytes) bytes or more, more than the limit of \(limit)",
            status: status == 0 ? nil : status)
    }

    private static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && port(a) == port(b)
    }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    static func describe(_ duration: Duration) -> String {
        let value = seconds(duration)
        return value == value.rounded() ? "\(Int(value)) s" : String(format: "%.3g s", value)
    }
}
